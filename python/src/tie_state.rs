//! The wrapper/handle state machine (see the project's tying design).
//!
//! Every object allocated while this module is loaded comes from
//! [`py_allocate`], whose block carries one word in front of the generic
//! `TVMFFIObjectAllocHeader`:
//!
//! ```text
//! block start            body - 16      body - 8        body
//! | [offset] (align>16) | wrapper word | delete_space | object ...
//! ```
//!
//! The word is `W` (a wrapper pointer, 16-byte aligned) plus tag bits:
//!
//! | state     | word          |
//! |-----------|---------------|
//! | Detached  | 0             |
//! | Active    | W             |
//! | Inactive  | W \| 1        |
//! | InTransit | W \| 1 \| 2   |
//! | Moving    | W \| 4        |
//!
//! Moving marks a canonical wrapper whose handle is being passed by move
//! (`x._move()`) to a call that runs without the GIL: the callee may take
//! the handle out of W at any moment, so a lookup meanwhile gets a fresh,
//! unbound wrapper rather than W, and never binds a second canonical one.
//! The mover holds a weak reference on the handle for the whole call, so
//! the word stays readable until it settles the state.
//!
//! Only the functions of this module read or write the word. Python-side
//! transitions run with the GIL held; [`delete_space`] may run on any
//! thread, so the word is atomic and the InTransit handshake between
//! `tp_free` and `delete_space` uses compare-and-swap.
//!
//! SAFETY invariants of this module:
//! - a handle for which [`is_ours`] holds came from [`py_allocate`], so its
//!   word lives at `body - 16` and is valid until the block is freed;
//! - the block of a handle is freed only by `delete_space` (no InTransit
//!   binding) or by `tp_free` (after `delete_space` deferred);
//! - `CObject.chandle` is NULL or a handle on which the wrapper owns +1;
//! - `CObject.pending` is non-NULL only between a wrapper's `tp_dealloc` and
//!   its `tp_free`, and then names the handle whose word is InTransit;
//! - kept (Inactive) wrapper memory is a GC allocation, untracked, with
//!   refcount 0, and is freed exactly once: by revival's owner later, or by
//!   `delete_space` with the GIL, or left to the OS after interpreter exit.

use std::cell::Cell;
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use pyo3::ffi;
use tether_sys::abi::{TVMFFICustomAllocator, TVMFFIObject, TVMFFIObjectAllocHeader, MARKER_REGISTRY_ALLOCATED};
use tether_sys::{TVMFFIObjectDecRef, TVMFFISetCustomAllocator};

const INACTIVE: usize = 1;
const TRANSIT: usize = 2;
const MOVING: usize = 4;
const TAGS: usize = INACTIVE | TRANSIT | MOVING;

/// The C layout of every wrapper: the Python header, the handle, the
/// handle whose word is InTransit while this wrapper is being torn down, and
/// how many running calls borrow the handle (passed as a view, not a
/// reference: such a handle must not be moved out meanwhile).
#[repr(C)]
pub struct CObject {
    pub ob_base: ffi::PyObject,
    pub chandle: *mut TVMFFIObject,
    pub pending: *mut TVMFFIObject,
    pub borrows: usize,
}

// ---- the Python allocator ---------------------------------------------------

struct AllocatorEntry(std::cell::UnsafeCell<TVMFFICustomAllocator>);
// SAFETY: the entry is never written after construction.
unsafe impl Sync for AllocatorEntry {}

static ALLOCATOR: AllocatorEntry = AllocatorEntry(std::cell::UnsafeCell::new(TVMFFICustomAllocator {
    allocate: Some(py_allocate),
    context: ptr::null_mut(),
}));

static PYTHON_ALIVE: AtomicBool = AtomicBool::new(true);

/// Install the allocator for every object created from now on.
pub fn install_allocator() -> Result<(), String> {
    // SAFETY: the entry is a static that lives for the process.
    if unsafe { TVMFFISetCustomAllocator(ALLOCATOR.0.get()) } != 0 {
        return Err("installing the tether Python allocator failed".into());
    }
    Ok(())
}

/// Called at interpreter exit: native code must not take the GIL anymore
/// (kept wrapper memory and Python objects held natively are left to the OS).
pub fn mark_python_finalizing() {
    PYTHON_ALIVE.store(false, Ordering::Release);
}

/// Whether native code may still take the GIL.
pub fn python_alive() -> bool {
    PYTHON_ALIVE.load(Ordering::Acquire)
}

fn body_offset(alignment: usize) -> usize {
    if alignment <= 16 {
        16
    } else {
        alignment.max(32)
    }
}

unsafe extern "C" fn py_allocate(size: usize, alignment: usize, _type_index: i32, _ctx: *mut c_void) -> *mut c_void {
    if !alignment.is_power_of_two() {
        return ptr::null_mut();
    }
    let offset = body_offset(alignment);
    let Some(total) = size.checked_add(offset) else { return ptr::null_mut() };
    let start = aligned_alloc(total, alignment.max(16));
    if start.is_null() {
        return ptr::null_mut();
    }
    // SAFETY: the block has `offset >= 16` bytes before the body (24 or more
    // when alignment > 16, for the offset word).
    unsafe {
        let body = (start as *mut u8).add(offset);
        ptr::write((body as *mut AtomicUsize).sub(2), AtomicUsize::new(0));
        let delete_space: unsafe extern "C" fn(*mut c_void) = if offset == 16 {
            delete_space_16
        } else {
            ptr::write((body as *mut usize).sub(3), offset);
            delete_space_aligned
        };
        ptr::write((body as *mut TVMFFIObjectAllocHeader).sub(1), TVMFFIObjectAllocHeader { delete_space: Some(delete_space) });
        body as *mut c_void
    }
}

/// Whether `h` came from [`py_allocate`] (and so has a wrapper word): its
/// header names one of our two `delete_space` functions. (Their bodies
/// differ, so identical-code folding cannot merge them with each other.)
///
/// # Safety
/// `h` must be a live object (or one whose block is still allocated).
#[allow(unpredictable_function_pointer_comparisons)]
pub unsafe fn is_ours(h: *mut TVMFFIObject) -> bool {
    // SAFETY: reading our own header only after the core's marker says one exists.
    unsafe {
        if (*h).__padding & MARKER_REGISTRY_ALLOCATED == 0 {
            return false;
        }
        let d = (*(h as *const TVMFFIObjectAllocHeader).sub(1)).delete_space;
        d == Some(delete_space_16 as unsafe extern "C" fn(*mut c_void))
            || d == Some(delete_space_aligned as unsafe extern "C" fn(*mut c_void))
    }
}

/// # Safety
/// `is_ours(h)` must hold and the block must not be freed.
unsafe fn word<'a>(h: *mut TVMFFIObject) -> &'a AtomicUsize {
    // SAFETY: module invariant: the word sits at body - 16.
    unsafe { &*((h as *const AtomicUsize).sub(2)) }
}

unsafe extern "C" fn delete_space_16(body: *mut c_void) {
    // SAFETY: installed only on our blocks with a 16-byte offset.
    unsafe { delete_space(body, 16) }
}

unsafe extern "C" fn delete_space_aligned(body: *mut c_void) {
    // SAFETY: installed only on our blocks that store their offset at body - 24.
    unsafe { delete_space(body, ptr::read((body as *const usize).sub(3))) }
}

/// The handle's weak count reached zero.
///
/// # Safety
/// `body` came from [`py_allocate`] with this `offset`, and no reference to
/// the object is left.
unsafe fn delete_space(body: *mut c_void, offset: usize) {
    // SAFETY: module invariant; the block is ours and still allocated.
    let w = unsafe { word(body as *mut TVMFFIObject) };
    let mut cur = w.load(Ordering::Acquire);
    loop {
        if cur & TRANSIT == 0 {
            break;
        }
        // A wrapper teardown is half done: its tp_free frees both.
        match w.compare_exchange(cur, cur & !TRANSIT, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return,
            Err(actual) => cur = actual,
        }
    }
    if cur & INACTIVE != 0 && python_alive() {
        let wrapper = (cur & !TAGS) as *mut c_void;
        // Freeing Python memory needs the GIL.
        let gil = crate::exit_park::gil_ensure();
        // SAFETY: the kept memory is a GC allocation nobody references
        // (module invariant); GIL held.
        unsafe {
            discard_kept(wrapper as *mut ffi::PyObject);
            ffi::PyGILState_Release(gil);
        }
    }
    // After interpreter exit kept wrapper memory is left to the OS.
    // SAFETY: no reference to the object or its wrapper binding remains.
    unsafe { aligned_free((body as *mut u8).sub(offset) as *mut c_void) };
}

#[cfg(unix)]
fn aligned_alloc(size: usize, alignment: usize) -> *mut c_void {
    let mut p: *mut c_void = ptr::null_mut();
    // SAFETY: posix_memalign with a power-of-two alignment >= sizeof(void*).
    if unsafe { libc::posix_memalign(&mut p, alignment, size) } != 0 {
        return ptr::null_mut();
    }
    p
}

#[cfg(unix)]
unsafe fn aligned_free(p: *mut c_void) {
    // SAFETY: `p` came from posix_memalign.
    unsafe { libc::free(p) }
}

#[cfg(windows)]
extern "C" {
    fn _aligned_malloc(size: usize, alignment: usize) -> *mut c_void;
    fn _aligned_free(p: *mut c_void);
}

#[cfg(windows)]
fn aligned_alloc(size: usize, alignment: usize) -> *mut c_void {
    // SAFETY: CRT aligned allocation with a power-of-two alignment.
    unsafe { _aligned_malloc(size, alignment) }
}

#[cfg(windows)]
unsafe fn aligned_free(p: *mut c_void) {
    // SAFETY: `p` came from _aligned_malloc.
    unsafe { _aligned_free(p) }
}

/// Free the block of a handle whose `delete_space` deferred to `tp_free`.
///
/// # Safety
/// `h` came from [`py_allocate`], its weak count reached zero, and its
/// `delete_space` returned early because of InTransit.
unsafe fn free_deferred_block(h: *mut TVMFFIObject) {
    // SAFETY: per the caller: with the word cleared, the block's own
    // delete_space only frees the block (it knows its layout).
    unsafe {
        word(h).store(0, Ordering::Release);
        if let Some(d) = (*(h as *const TVMFFIObjectAllocHeader).sub(1)).delete_space {
            d(h as *mut c_void);
        }
    }
}

/// Free kept (Inactive) wrapper memory and the type reference it holds.
///
/// Kept memory owns one reference to its heap type, so the class cannot be
/// freed (and its address reused by another class) while revival may still
/// compare against it.
///
/// # Safety
/// GIL held; `kept` is kept wrapper memory no binding names any more.
unsafe fn discard_kept(kept: *mut ffi::PyObject) {
    // SAFETY: per the caller; kept memory keeps its (valid) ob_type.
    unsafe {
        let tp = (*kept).ob_type;
        ffi::PyObject_GC_Del(kept as *mut c_void);
        if (*tp).tp_flags & ffi::Py_TPFLAGS_HEAPTYPE != 0 {
            ffi::Py_DECREF(tp as *mut ffi::PyObject);
        }
    }
}

// ---- wrapper slots ----------------------------------------------------------

thread_local! {
    /// Kept wrapper memory handed from `make_ret_object` to `tp_alloc`.
    static REVIVE_SLOT: Cell<*mut ffi::PyObject> = const { Cell::new(ptr::null_mut()) };
    /// Set by `tp_free` when it kept the memory (Inactive) instead of freeing it.
    static KEPT: Cell<bool> = const { Cell::new(false) };
}

/// `tp_alloc` of every wrapper type: revive the armed kept memory in place,
/// or allocate generically.
pub unsafe extern "C" fn tp_alloc(tp: *mut ffi::PyTypeObject, nitems: ffi::Py_ssize_t) -> *mut ffi::PyObject {
    let kept = REVIVE_SLOT.with(|s| s.replace(ptr::null_mut()));
    if kept.is_null() {
        // SAFETY: the generic allocation for this type.
        return unsafe { ffi::PyType_GenericAlloc(tp, nitems) };
    }
    // SAFETY: `kept` is untracked GC memory of an instance of `tp` (checked
    // by the caller), refcount 0; re-initialise it as a fresh instance.
    unsafe {
        let head = std::mem::size_of::<ffi::PyObject>();
        let size = (*tp).tp_basicsize as usize;
        ptr::write_bytes((kept as *mut u8).add(head), 0, size - head);
        ffi::PyObject_Init(kept, tp);
        if (*tp).tp_flags & ffi::Py_TPFLAGS_HEAPTYPE != 0 {
            // PyObject_Init took a reference for the live object; the one
            // the kept memory held is no longer needed.
            ffi::Py_DECREF(tp as *mut ffi::PyObject);
        }
        ffi::PyObject_GC_Track(kept as *mut c_void);
    }
    kept
}

/// Whether wrappers of `tp` may keep their memory for revival.
///
/// # Safety
/// `tp` must be a live type object.
#[allow(unpredictable_function_pointer_comparisons)]
pub unsafe fn eligible(tp: *mut ffi::PyTypeObject) -> bool {
    // SAFETY: reading type slots.
    unsafe {
        let flags = (*tp).tp_flags;
        flags & ffi::Py_TPFLAGS_HAVE_GC != 0
            && (*tp).tp_free == Some(tp_free)
            && (*tp).tp_dictoffset == 0
            && flags & ffi::Py_TPFLAGS_MANAGED_DICT == 0
            && (*tp).tp_finalize.is_none()
            && (*tp).tp_del.is_none()
    }
}

/// `tp_dealloc` of the wrapper base type (subclasses reach it through
/// CPython's `subtype_dealloc`).
#[allow(unpredictable_function_pointer_comparisons)]
pub unsafe extern "C" fn tp_dealloc(obj: *mut ffi::PyObject) {
    // SAFETY: `obj` is a dying wrapper (layout CObject); module invariants.
    unsafe {
        let tp = ffi::Py_TYPE(obj);
        ffi::PyObject_GC_UnTrack(obj as *mut c_void);
        let o = obj as *mut CObject;
        let h = (*o).chandle;
        (*o).chandle = ptr::null_mut();
        if !h.is_null() {
            if is_ours(h) {
                let w = word(h);
                if w.load(Ordering::Acquire) == obj as usize {
                    if eligible(tp) {
                        (*o).pending = h;
                        w.store(obj as usize | INACTIVE | TRANSIT, Ordering::Release);
                    } else {
                        w.store(0, Ordering::Release);
                    }
                }
            }
            TVMFFIObjectDecRef(h as *mut c_void);
        }
        KEPT.with(|k| k.set(false));
        if let Some(free) = (*tp).tp_free {
            free(obj as *mut c_void);
        }
        // Every instance of a heap type owns a reference to it, released
        // here (our base is a heap type, so CPython's subtype_dealloc leaves
        // that to us) — unless the memory was kept, which keeps the type.
        if (*tp).tp_flags & ffi::Py_TPFLAGS_HEAPTYPE != 0 && !KEPT.with(|k| k.get()) {
            ffi::Py_DECREF(tp as *mut ffi::PyObject);
        }
    }
}

/// `tp_free` of every wrapper type: the Python half of the handshake.
pub unsafe extern "C" fn tp_free(p: *mut c_void) {
    // SAFETY: `p` is a wrapper at the end of its dealloc; module invariants.
    unsafe {
        let o = p as *mut CObject;
        let h = (*o).pending;
        if h.is_null() {
            ffi::PyObject_GC_Del(p);
            return;
        }
        (*o).pending = ptr::null_mut();
        let w = word(h);
        let mut cur = w.load(Ordering::Acquire);
        loop {
            if cur & TRANSIT == 0 {
                // The handle died during our DecRef and deferred to us.
                ffi::PyObject_GC_Del(p);
                free_deferred_block(h);
                return;
            }
            match w.compare_exchange(cur, cur & !TRANSIT, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    // Inactive: keep the memory for revival.
                    KEPT.with(|k| k.set(true));
                    return;
                }
                Err(actual) => cur = actual,
            }
        }
    }
}

/// `tp_traverse`: wrappers own no Python references of their own.
pub unsafe extern "C" fn tp_traverse(_o: *mut ffi::PyObject, _v: ffi::visitproc, _a: *mut c_void) -> i32 {
    0
}

/// Make `tp` (a subclass of the wrapper base) use our slots.
///
/// # Safety
/// `tp` must be a type whose instances have the CObject layout.
pub unsafe fn install_slots(tp: *mut ffi::PyTypeObject) {
    // SAFETY: writing slots of a non-static type before instances that
    // depend on them exist (called when the class is created).
    unsafe {
        (*tp).tp_alloc = Some(tp_alloc);
        (*tp).tp_free = Some(tp_free);
        ffi::PyType_Modified(tp);
    }
}

// ---- the one return path ----------------------------------------------------

/// The wrapper for a handle the caller owns (+1), creating, reusing or
/// reviving it; the +1 moves into the wrapper or is dropped.
///
/// Returns a new reference, or NULL with a Python exception set.
///
/// # Safety
/// GIL held; `h` live with +1 owned by the caller; `cls` a wrapper type
/// (slots installed) whose instances fit `h`'s type.
#[allow(unpredictable_function_pointer_comparisons)]
pub unsafe fn make_ret_object(h: *mut TVMFFIObject, cls: *mut ffi::PyTypeObject) -> *mut ffi::PyObject {
    // SAFETY: GIL held; module invariants.
    unsafe {
        if is_ours(h) {
            let w = word(h);
            let cur = w.load(Ordering::Acquire);
            if cur != 0 && cur & TAGS == 0 {
                // Active: the canonical wrapper already owns +1.
                let obj = cur as *mut ffi::PyObject;
                ffi::Py_INCREF(obj);
                TVMFFIObjectDecRef(h as *mut c_void);
                return obj;
            }
            if cur & MOVING != 0 {
                // The canonical wrapper's handle is being moved into a call:
                // hand out a fresh wrapper and bind nothing.
                return fresh_wrapper(h, cls);
            }
            if cur & TAGS == INACTIVE {
                let kept = (cur & !TAGS) as *mut ffi::PyObject;
                // ob_type of kept memory is compared, never dereferenced.
                if (*kept).ob_type == cls && (*cls).tp_alloc == Some(tp_alloc) {
                    REVIVE_SLOT.with(|s| s.set(kept));
                    let obj = tp_alloc(cls, 0);
                    (*(obj as *mut CObject)).chandle = h;
                    w.store(obj as usize, Ordering::Release);
                    return obj;
                }
                // The class for this type changed: drop the kept memory.
                w.store(0, Ordering::Release);
                discard_kept(kept);
            }
            // InTransit cannot be seen here with the GIL held; treat it like
            // Detached but leave the binding alone.
        }
        let obj = fresh_wrapper(h, cls);
        if !obj.is_null() {
            bind_if_detached(h, obj);
        }
        obj
    }
}

/// A new wrapper of `cls` owning the caller's +1 on `h`, not bound.
///
/// # Safety
/// As for [`make_ret_object`].
unsafe fn fresh_wrapper(h: *mut TVMFFIObject, cls: *mut ffi::PyTypeObject) -> *mut ffi::PyObject {
    // SAFETY: per the caller.
    unsafe {
        let alloc = (*cls).tp_alloc.unwrap_or(ffi::PyType_GenericAlloc);
        let obj = alloc(cls, 0);
        if obj.is_null() {
            TVMFFIObjectDecRef(h as *mut c_void);
            return ptr::null_mut();
        }
        (*(obj as *mut CObject)).chandle = h;
        obj
    }
}

// ---- moves ----------------------------------------------------------------------

/// Before `obj`'s handle is passed by move to a call that runs without the
/// GIL: pin the handle's storage (a weak reference) and, if `obj` is its
/// canonical wrapper, mark the binding Moving.
///
/// # Safety
/// GIL held; `obj` is a live wrapper owning +1 on `h`. Pair with [`end_move`].
pub unsafe fn begin_move(h: *mut TVMFFIObject, obj: *mut ffi::PyObject) {
    // SAFETY: per the caller; module invariants.
    unsafe {
        weak_pin(h);
        if is_ours(h) {
            let _ = word(h).compare_exchange(obj as usize, obj as usize | MOVING, Ordering::AcqRel, Ordering::Acquire);
        }
    }
}

/// After the call: if the callee left the handle in `obj`, `obj` is
/// canonical again; if it took it, the binding is cleared. Then the pin
/// is dropped (which may free the storage).
///
/// # Safety
/// GIL held; pairs with [`begin_move`] for the same `h` and `obj`.
pub unsafe fn end_move(h: *mut TVMFFIObject, obj: *mut ffi::PyObject) {
    // SAFETY: per the caller; the pin keeps the word readable.
    unsafe {
        if is_ours(h) {
            let w = word(h);
            let taken = (*(obj as *mut CObject)).chandle.is_null();
            let settled = if taken { 0 } else { obj as usize };
            if w.compare_exchange(obj as usize | MOVING, settled, Ordering::AcqRel, Ordering::Acquire).is_err() && !taken {
                let _ = w.compare_exchange(0, obj as usize, Ordering::AcqRel, Ordering::Acquire);
            }
        }
        weak_unpin(h);
    }
}

/// The callee side of a move: take the handle out of an rvalue-reference
/// slot. If the slot is the handle field of the wrapper whose move is in
/// flight (Moving), that wrapper stops being canonical here, so the
/// wrapper made for the taken handle can become the canonical one.
///
/// # Safety
/// GIL held; `slot` is a valid rvalue-reference slot.
pub unsafe fn take_moved(slot: *mut *mut TVMFFIObject) -> *mut TVMFFIObject {
    // SAFETY: per the caller; the taken +1 keeps `h` (and its word) alive.
    unsafe {
        let h = ptr::replace(slot, ptr::null_mut());
        if !h.is_null() && is_ours(h) {
            let w = word(h);
            let cur = w.load(Ordering::Acquire);
            let owner = (cur & !TAGS) as *mut CObject;
            if cur & MOVING != 0 && ptr::addr_of_mut!((*owner).chandle) == slot {
                let _ = w.compare_exchange(cur, 0, Ordering::AcqRel, Ordering::Acquire);
            }
        }
        h
    }
}

/// Take a weak reference: the storage (and our word) outlives the contents.
///
/// # Safety
/// `h` is live.
unsafe fn weak_pin(h: *mut TVMFFIObject) {
    // SAFETY: the combined count is the object's first atomic word.
    unsafe { counter(h).fetch_add(WEAK_ONE, Ordering::Relaxed) };
}

/// Drop a weak reference from [`weak_pin`], freeing the storage if it was the last.
///
/// # Safety
/// The caller owns the weak reference.
unsafe fn weak_unpin(h: *mut TVMFFIObject) {
    // SAFETY: as above; the deleter with the Weak flag frees the storage.
    unsafe {
        if counter(h).fetch_sub(WEAK_ONE, Ordering::Release) == WEAK_ONE {
            std::sync::atomic::fence(Ordering::Acquire);
            if let Some(d) = (*h).deleter {
                d(h as *mut c_void, tether_sys::abi::kTVMFFIObjectDeleterFlagBitMaskWeak);
            }
        }
    }
}

const WEAK_ONE: u64 = 1 << 32;

/// # Safety
/// `h` is an object whose storage is not freed.
unsafe fn counter<'a>(h: *mut TVMFFIObject) -> &'a std::sync::atomic::AtomicU64 {
    // SAFETY: `combined_ref_count` is a naturally aligned u64 updated only atomically.
    unsafe { &*(ptr::addr_of_mut!((*h).combined_ref_count) as *const std::sync::atomic::AtomicU64) }
}

/// Bind `obj` as the canonical wrapper of `h` if it has none (construction
/// by handle, pickle, a move that the callee did not consume).
///
/// # Safety
/// GIL held; `obj` is a live wrapper owning +1 on `h`.
pub unsafe fn bind_if_detached(h: *mut TVMFFIObject, obj: *mut ffi::PyObject) {
    // SAFETY: per the caller; module invariants.
    unsafe {
        if is_ours(h) {
            let _ = word(h).compare_exchange(0, obj as usize, Ordering::AcqRel, Ordering::Acquire);
        }
    }
}

/// Before a wrapper's handle is moved out: unbind it if canonical.
///
/// # Safety
/// GIL held; `obj` is a live wrapper owning +1 on `h`.
pub unsafe fn detach(h: *mut TVMFFIObject, obj: *mut ffi::PyObject) {
    // SAFETY: per the caller; module invariants.
    unsafe {
        if is_ours(h) {
            let _ = word(h).compare_exchange(obj as usize, 0, Ordering::AcqRel, Ordering::Acquire);
        }
    }
}

/// The canonical wrapper of `h`, if it has a live one (for tests/debugging).
///
/// # Safety
/// GIL held; `h` live.
pub unsafe fn state_of(h: *mut TVMFFIObject) -> (&'static str, usize) {
    // SAFETY: per the caller.
    unsafe {
        if !is_ours(h) {
            return ("Foreign", 0);
        }
        let cur = word(h).load(Ordering::Acquire);
        let name = match cur & TAGS {
            _ if cur == 0 => "Detached",
            0 => "Active",
            INACTIVE => "Inactive",
            MOVING => "Moving",
            _ => "InTransit",
        };
        (name, cur & !TAGS)
    }
}
