//! The object layer (`object/`): this module, the allocator registry
//! (`alloc_header`), the counter layout (`refcount`) and [`ObjectError`]. It
//! may name only the type table (`types`) below it.
//!
//! Reference counting and the owning smart pointers over `TVMFFIObject`.
//!
//! The combined counter keeps the strong count in its low half and the weak
//! count in its high half. A new object starts at strong 1 / weak 1 (the
//! weak "1" stands for all strong references together). Strong reaching
//! zero destroys the contents (deleter with the Strong flag); weak reaching
//! zero frees the storage (deleter with the Weak flag). When both reach
//! zero in the same decrement, the deleter is called once with Both.
//!
//! Destruction is iterative, not recursive: destroying an object drops the
//! references it holds, and a chain of a million Arrays (each holding the
//! next) would otherwise nest a million deleter calls on the native stack.
//! The first destruction on a thread runs the deleter directly; a strong
//! count reaching zero while a deleter is running on the same thread only
//! queues the object on a thread-local list, which the outermost
//! destruction drains before it returns. The count transitions, the flags
//! passed to the deleter and the weak-count handling are unchanged: each
//! object still gets exactly one Strong (or Both) call and one Weak call,
//! whoever allocated it; only the nesting depth changes. A consequence is
//! that code running inside a deleter (a Python `__del__`, say) sees
//! objects it releases destroyed when the outermost deleter finishes, not
//! at the moment of the release.
//!
//! SAFETY invariants of this module: every pointer wrapped by [`ObjectRef`]
//! or [`ObjectPtr`] is a live object on which the wrapper owns one strong
//! reference; every pointer wrapped by [`WeakRef`] owns one weak reference,
//! so its storage (header included) stays valid.

use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::abi::{
    kTVMFFIObjectDeleterFlagBitMaskBoth, kTVMFFIObjectDeleterFlagBitMaskStrong, kTVMFFIObjectDeleterFlagBitMaskWeak,
    TVMFFIObject,
};
pub mod alloc_header;
pub mod object_error;
pub mod refcount;


pub use object_error::ObjectError;
pub use refcount::{COMBINED_BOTH_ONE, COMBINED_STRONG_ONE, COMBINED_WEAK_ONE};
const STRONG_MASK: u64 = (1 << 32) - 1;

fn counter<'a>(obj: *mut TVMFFIObject) -> &'a AtomicU64 {
    // SAFETY: callers pass live objects; the counter is the first, 8-aligned
    // field and is only ever accessed atomically.
    unsafe { AtomicU64::from_ptr(std::ptr::addr_of_mut!((*obj).combined_ref_count)) }
}

/// The acquire half of a release decrement that reached zero, so that every
/// other thread's use of the object (before its own decrement) happens
/// before the destruction that follows. An acquire load of the counter
/// does what an acquire fence does here: it reads the decrement's own value
/// or a later one, i.e. from the release sequence each earlier decrement
/// heads. Unlike a fence, ThreadSanitizer sees it (it models no standalone
/// fences and would report every destruction as a race), which is why
/// std's `Arc` does the same under TSan. The load costs nothing on the
/// paths that do not destroy.
#[inline]
fn acquire_released(c: &AtomicU64) {
    let _ = c.load(Ordering::Acquire);
}

/// Add a strong reference.
///
/// # Safety
/// `obj` must be a live object on which the caller holds a reference.
pub unsafe fn inc_ref(obj: *mut TVMFFIObject) {
    counter(obj).fetch_add(COMBINED_STRONG_ONE, Ordering::Relaxed);
}

/// Drop a strong reference, destroying and freeing as the counts reach zero.
///
/// # Safety
/// The caller must own the strong reference it drops.
pub unsafe fn dec_ref(obj: *mut TVMFFIObject) {
    let c = counter(obj);
    let before = c.fetch_sub(COMBINED_STRONG_ONE, Ordering::Release);
    if before == COMBINED_BOTH_ONE {
        acquire_released(c);
        // SAFETY: last strong and last weak reference: destroy and free.
        unsafe { destroy(Dying { obj, last_weak_too: true }) };
    } else if before & STRONG_MASK == COMBINED_STRONG_ONE {
        acquire_released(c);
        // SAFETY: last strong reference; weak ones keep the storage.
        unsafe { destroy(Dying { obj, last_weak_too: false }) };
    }
}

/// An object whose strong count reached zero, with what that decrement
/// decided: whether it was also the last weak reference (one Both call) or
/// not (a Strong call, then the weak reference the strong ones held).
/// Deciding at the decrement keeps the semantics of immediate destruction:
/// no weak reference can free the storage meanwhile, because the strong
/// references' weak "1" is only dropped by `release`.
#[derive(Clone, Copy)]
struct Dying {
    obj: *mut TVMFFIObject,
    last_weak_too: bool,
}

thread_local! {
    /// Whether a destruction is running on this thread (then new ones queue).
    static DESTROYING: Cell<bool> = const { Cell::new(false) };
    /// Objects queued by nested destructions, drained by the outermost one.
    static PENDING: RefCell<Vec<Dying>> = const { RefCell::new(Vec::new()) };
}

/// Clears [`DESTROYING`] when the outermost destruction ends, however it ends.
struct OutermostDestruction;

impl Drop for OutermostDestruction {
    fn drop(&mut self) {
        let _ = DESTROYING.try_with(|d| d.set(false));
    }
}

/// Destroy `d` now, or queue it if a destruction is already running on
/// this thread.
///
/// # Safety
/// `d.obj`'s strong count just reached zero through the caller's decrement.
unsafe fn destroy(d: Dying) {
    match DESTROYING.try_with(|flag| flag.replace(true)) {
        Ok(true) => {
            // Nested inside a deleter: let the outermost destruction do it.
            // If the list is already gone (thread teardown), fall back to
            // destroying in place.
            if PENDING.try_with(|p| p.borrow_mut().push(d)).is_err() {
                // SAFETY: per the caller.
                unsafe { release(d) };
            }
        }
        Ok(false) => {
            let _outermost = OutermostDestruction;
            // SAFETY: per the caller.
            unsafe { release(d) };
            // Deleters run with no borrow of the list held, so they may
            // queue more; last in, first out keeps a chain's list short.
            while let Some(next) = PENDING.try_with(|p| p.borrow_mut().pop()).ok().flatten() {
                // SAFETY: queued objects had their strong count reach zero
                // and nobody else may destroy them (they were queued once).
                unsafe { release(next) };
            }
        }
        // SAFETY: per the caller (thread teardown: destroy in place).
        Err(_) => unsafe { release(d) },
    }
}

/// Run the deleter calls for an object whose strong count reached zero.
///
/// # Safety
/// As [`destroy`]; called exactly once per such object.
unsafe fn release(d: Dying) {
    // SAFETY: per the caller; `Dying` records which calls that decrement owes.
    unsafe {
        if d.last_weak_too {
            call_deleter(d.obj, kTVMFFIObjectDeleterFlagBitMaskBoth);
        } else {
            call_deleter(d.obj, kTVMFFIObjectDeleterFlagBitMaskStrong);
            dec_weak(d.obj);
        }
    }
}

/// Add a weak reference.
///
/// # Safety
/// `obj`'s storage must be alive and the caller must hold a reference.
pub unsafe fn inc_weak(obj: *mut TVMFFIObject) {
    counter(obj).fetch_add(COMBINED_WEAK_ONE, Ordering::Relaxed);
}

/// Drop a weak reference, freeing the storage when it was the last.
///
/// # Safety
/// The caller must own the weak reference it drops.
pub unsafe fn dec_weak(obj: *mut TVMFFIObject) {
    let c = counter(obj);
    if c.fetch_sub(COMBINED_WEAK_ONE, Ordering::Release) == COMBINED_WEAK_ONE {
        acquire_released(c);
        // SAFETY: no reference of any kind is left.
        unsafe { call_deleter(obj, kTVMFFIObjectDeleterFlagBitMaskWeak) };
    }
}

/// Turn a weak reference into a new strong one if the object still lives.
///
/// # Safety
/// The caller must hold a weak reference.
pub unsafe fn try_promote(obj: *mut TVMFFIObject) -> bool {
    let c = counter(obj);
    let mut cur = c.load(Ordering::Relaxed);
    while cur & STRONG_MASK != 0 {
        match c.compare_exchange_weak(cur, cur + COMBINED_STRONG_ONE, Ordering::AcqRel, Ordering::Relaxed) {
            Ok(_) => return true,
            Err(actual) => cur = actual,
        }
    }
    false
}

/// Current strong count (a snapshot).
///
/// # Safety
/// `obj`'s storage must be alive.
pub unsafe fn strong_count(obj: *mut TVMFFIObject) -> u32 {
    (counter(obj).load(Ordering::Relaxed) & STRONG_MASK) as u32
}

/// Current weak count (a snapshot; includes the one for strong references).
///
/// # Safety
/// `obj`'s storage must be alive.
pub unsafe fn weak_count(obj: *mut TVMFFIObject) -> u32 {
    (counter(obj).load(Ordering::Relaxed) >> 32) as u32
}

unsafe fn call_deleter(obj: *mut TVMFFIObject, flags: i32) {
    // SAFETY: the storage is alive until the Weak-flag call returns.
    unsafe {
        if let Some(d) = (*obj).deleter {
            d(obj as *mut c_void, flags);
        }
    }
}

/// The deleter of every Rust-laid-out object type `T`: drops `T` in place
/// on Strong, gives the block back to its allocator on Weak.
///
/// # Safety
/// Installed only on objects created by [`ObjectPtr::new`] and friends.
pub unsafe extern "C" fn object_deleter<T: ObjectType>(ptr: *mut c_void, flags: i32) {
    if flags & kTVMFFIObjectDeleterFlagBitMaskStrong != 0 {
        // SAFETY: the strong count reached zero: nobody can see `T` anymore.
        unsafe { std::ptr::drop_in_place(ptr as *mut T) };
    }
    if flags & kTVMFFIObjectDeleterFlagBitMaskWeak != 0 {
        // SAFETY: no reference is left; the block came from the registry.
        unsafe { alloc_header::free_body(ptr) };
    }
}

/// A Rust type laid out as an FFI object.
///
/// # Safety
/// Implementors must be `#[repr(C)]` with a `TVMFFIObject` (or another
/// `ObjectType`, whose first field is one) as their first field, and the
/// value must be `Send + Sync` since objects are shared across threads.
pub unsafe trait ObjectType: Sized + Send + Sync + 'static {
    /// Registered type key, e.g. `"ffi.String"` or `"mylib.Point"`.
    const TYPE_KEY: &'static str;
    /// The runtime type index (registered on first use).
    fn type_index() -> i32;
}

/// Register a Rust-defined object type on first use and return its index.
///
/// `static_index` is `-1` for a dynamically allocated index. Used by
/// [`crate::object_type!`].
pub fn lazy_type_index(cell: &'static OnceLock<i32>, key: &str, parent: i32) -> i32 {
    *cell.get_or_init(|| {
        crate::types::type_registry::get_or_alloc_index(key, -1, parent)
            .unwrap_or_else(|e| panic!("registering type {key}: {}", e.message()))
    })
}

/// Declare `ObjectType` for a `#[repr(C)]` struct whose first field is a
/// `TVMFFIObject`:
///
/// ```
/// use tether_core::abi::TVMFFIObject;
/// use tether_core::object::header_placeholder;
/// use tether_core::{ObjectPtr, ObjectType};
///
/// #[repr(C)]
/// struct Point { header: TVMFFIObject, x: i64, y: i64 }
/// tether_core::object_type!(Point, "doc.Point");
///
/// let p = ObjectPtr::new(Point { header: header_placeholder(), x: 1, y: 2 }).unwrap();
/// assert_eq!(p.x + p.y, 3);
/// assert_eq!(p.to_object_ref().type_index(), Point::type_index());
/// ```
#[macro_export]
macro_rules! object_type {
    ($ty:ty, $key:expr) => {
        $crate::object_type!($ty, $key, $crate::abi::type_index::kTVMFFIObject);
    };
    ($ty:ty, $key:expr, $parent:expr) => {
        unsafe impl $crate::object::ObjectType for $ty {
            const TYPE_KEY: &'static str = $key;
            fn type_index() -> i32 {
                static CELL: ::std::sync::OnceLock<i32> = ::std::sync::OnceLock::new();
                $crate::object::lazy_type_index(&CELL, $key, $parent)
            }
        }
    };
}

/// An owning, untyped object reference (one strong count).
pub struct ObjectRef {
    ptr: NonNull<TVMFFIObject>,
}

// SAFETY: object reference counts are atomic and object types are Sync.
unsafe impl Send for ObjectRef {}
// SAFETY: as above.
unsafe impl Sync for ObjectRef {}

impl ObjectRef {
    /// Take ownership of one strong reference already held on `ptr`.
    ///
    /// # Safety
    /// `ptr` must be a live object and the caller must own the reference.
    pub unsafe fn from_raw_owned(ptr: NonNull<TVMFFIObject>) -> Self {
        ObjectRef { ptr }
    }

    /// Add a strong reference to a borrowed object and own it.
    ///
    /// # Safety
    /// `ptr` must be a live object.
    pub unsafe fn from_raw_borrowed(ptr: NonNull<TVMFFIObject>) -> Self {
        // SAFETY: live object, per the caller.
        unsafe { inc_ref(ptr.as_ptr()) };
        ObjectRef { ptr }
    }

    pub fn as_ptr(&self) -> *mut TVMFFIObject {
        self.ptr.as_ptr()
    }

    /// Give up ownership without decrementing.
    pub fn into_raw(self) -> *mut TVMFFIObject {
        let p = self.ptr.as_ptr();
        std::mem::forget(self);
        p
    }

    pub fn type_index(&self) -> i32 {
        // SAFETY: module invariant: we own a strong reference.
        unsafe { (*self.ptr.as_ptr()).type_index }
    }

    /// Strong count (a snapshot), like `use_count` in C++.
    pub fn use_count(&self) -> u32 {
        // SAFETY: module invariant.
        unsafe { strong_count(self.ptr.as_ptr()) }
    }

    /// Whether two references name the same object.
    pub fn same_as(&self, other: &ObjectRef) -> bool {
        self.ptr == other.ptr
    }

    /// Whether this object is a `T` or a subtype of it.
    pub fn is<T: ObjectType>(&self) -> bool {
        crate::types::type_registry::is_instance(self.type_index(), T::type_index())
    }

    /// Downcast to a typed pointer.
    pub fn downcast<T: ObjectType>(self) -> Result<ObjectPtr<T>, ObjectError> {
        if self.is::<T>() {
            let p = self.into_raw();
            Ok(ObjectPtr { ptr: NonNull::new(p as *mut T).expect("non-null"), _t: PhantomData })
        } else {
            Err(ObjectError::type_error(format!(
                "expected {}, got {}",
                T::TYPE_KEY,
                crate::types::type_registry::type_key_of(self.type_index())
            )))
        }
    }

    /// A weak reference to this object.
    pub fn downgrade(&self) -> WeakRef {
        // SAFETY: module invariant.
        unsafe { inc_weak(self.ptr.as_ptr()) };
        WeakRef { ptr: self.ptr }
    }
}

impl Clone for ObjectRef {
    fn clone(&self) -> Self {
        // SAFETY: module invariant.
        unsafe { inc_ref(self.ptr.as_ptr()) };
        ObjectRef { ptr: self.ptr }
    }
}

impl Drop for ObjectRef {
    fn drop(&mut self) {
        // SAFETY: module invariant: we own this strong reference.
        unsafe { dec_ref(self.ptr.as_ptr()) }
    }
}

impl std::fmt::Debug for ObjectRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{:p}", crate::types::type_registry::type_key_of(self.type_index()), self.ptr)
    }
}

/// A weak object reference: keeps the storage, not the contents.
pub struct WeakRef {
    ptr: NonNull<TVMFFIObject>,
}

// SAFETY: counts are atomic.
unsafe impl Send for WeakRef {}
// SAFETY: as above.
unsafe impl Sync for WeakRef {}

impl WeakRef {
    /// A strong reference if the object is still alive.
    pub fn upgrade(&self) -> Option<ObjectRef> {
        // SAFETY: module invariant: we own a weak reference.
        if unsafe { try_promote(self.ptr.as_ptr()) } {
            Some(ObjectRef { ptr: self.ptr })
        } else {
            None
        }
    }

    /// Whether the contents were destroyed.
    pub fn expired(&self) -> bool {
        // SAFETY: module invariant.
        unsafe { strong_count(self.ptr.as_ptr()) == 0 }
    }
}

impl Clone for WeakRef {
    fn clone(&self) -> Self {
        // SAFETY: module invariant.
        unsafe { inc_weak(self.ptr.as_ptr()) };
        WeakRef { ptr: self.ptr }
    }
}

impl Drop for WeakRef {
    fn drop(&mut self) {
        // SAFETY: module invariant.
        unsafe { dec_weak(self.ptr.as_ptr()) }
    }
}

/// An owning, typed object pointer.
pub struct ObjectPtr<T: ObjectType> {
    ptr: NonNull<T>,
    _t: PhantomData<T>,
}

// SAFETY: T: Send + Sync and counts are atomic.
unsafe impl<T: ObjectType> Send for ObjectPtr<T> {}
// SAFETY: as above.
unsafe impl<T: ObjectType> Sync for ObjectPtr<T> {}

impl<T: ObjectType> ObjectPtr<T> {
    /// Allocate `value` through the allocator registry.
    ///
    /// The header inside `value` is overwritten (counts, type index, marker,
    /// deleter); pass `TVMFFIObject` zeroed or from [`header_placeholder`].
    pub fn new(value: T) -> Result<Self, ObjectError> {
        // SAFETY: no tail requested; the body gets fully initialised.
        unsafe { Self::new_with_tail(value, 0, std::mem::align_of::<T>()) }
    }

    /// Allocate `value` followed by `tail_bytes` of uninitialised storage.
    ///
    /// # Safety
    /// `T`'s `Drop` must account for whatever the caller stores in the tail,
    /// and the caller must initialise the tail before sharing the object.
    pub unsafe fn new_with_tail(value: T, tail_bytes: usize, alignment: usize) -> Result<Self, ObjectError> {
        let type_index = T::type_index();
        let size = std::mem::size_of::<T>()
            .checked_add(tail_bytes)
            .ok_or_else(|| ObjectError::value_error("object size overflows"))?;
        let alignment = alignment.max(std::mem::align_of::<T>());
        let body = alloc_header::allocate_body(size, alignment, type_index)?;
        // SAFETY: `body` has `size >= size_of::<T>()` writable bytes aligned
        // for T; the header is re-initialised right after the write.
        unsafe {
            std::ptr::write(body.as_ptr() as *mut T, value);
            alloc_header::init_header(body, type_index, object_deleter::<T>);
        }
        Ok(ObjectPtr { ptr: body.cast(), _t: PhantomData })
    }

    /// Allocate a `T` with an explicit runtime type index (a subtype that
    /// shares `T`'s layout, such as Bytes sharing String's).
    ///
    /// # Safety
    /// As [`Self::new_with_tail`]; `type_index` must name a type whose
    /// instances have `T`'s layout.
    pub unsafe fn new_with_type_index(
        value: T,
        tail_bytes: usize,
        type_index: i32,
    ) -> Result<Self, ObjectError> {
        let size = std::mem::size_of::<T>() + tail_bytes;
        let body = alloc_header::allocate_body(size, std::mem::align_of::<T>(), type_index)?;
        // SAFETY: as in `new_with_tail`.
        unsafe {
            std::ptr::write(body.as_ptr() as *mut T, value);
            alloc_header::init_header(body, type_index, object_deleter::<T>);
        }
        Ok(ObjectPtr { ptr: body.cast(), _t: PhantomData })
    }

    pub fn as_ptr(&self) -> *mut T {
        self.ptr.as_ptr()
    }

    pub fn header(&self) -> *mut TVMFFIObject {
        self.ptr.as_ptr() as *mut TVMFFIObject
    }

    /// Forget the type.
    pub fn into_object_ref(self) -> ObjectRef {
        let p = self.ptr.as_ptr() as *mut TVMFFIObject;
        std::mem::forget(self);
        // SAFETY: we owned one strong reference; it moves into the ObjectRef.
        unsafe { ObjectRef::from_raw_owned(NonNull::new_unchecked(p)) }
    }

    /// Borrow as an untyped reference (adds a strong count).
    pub fn to_object_ref(&self) -> ObjectRef {
        self.clone().into_object_ref()
    }
}

impl<T: ObjectType> std::ops::Deref for ObjectPtr<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: module invariant: the object is alive while we own it.
        unsafe { self.ptr.as_ref() }
    }
}

impl<T: ObjectType> Clone for ObjectPtr<T> {
    fn clone(&self) -> Self {
        // SAFETY: module invariant.
        unsafe { inc_ref(self.header()) };
        ObjectPtr { ptr: self.ptr, _t: PhantomData }
    }
}

impl<T: ObjectType> Drop for ObjectPtr<T> {
    fn drop(&mut self) {
        // SAFETY: module invariant.
        unsafe { dec_ref(self.header()) }
    }
}

/// A header value to put in a new object before allocation; every field is
/// overwritten by the allocator path.
pub const fn header_placeholder() -> TVMFFIObject {
    TVMFFIObject { combined_ref_count: 0, type_index: 0, __padding: 0, deleter: None }
}

/// The root object type: just the header.
#[repr(C)]
pub struct Object {
    pub header: TVMFFIObject,
}

// SAFETY: repr(C) with the header first; no interior data.
unsafe impl ObjectType for Object {
    const TYPE_KEY: &'static str = "ffi.Object";
    fn type_index() -> i32 {
        crate::abi::type_index::kTVMFFIObject
    }
}


impl<T: ObjectType> std::fmt::Debug for ObjectPtr<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{:p}", T::TYPE_KEY, self.ptr)
    }
}
