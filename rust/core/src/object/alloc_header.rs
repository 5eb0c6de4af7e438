//! The custom allocator registry and the builtin allocator.
//!
//! Every object this core allocates goes through
//! [`current_allocator`]`.allocate(size, alignment, type_index, context)`,
//! which returns a body pointer immediately preceded by a
//! [`TVMFFIObjectAllocHeader`]; `delete_space(body)` later reclaims the whole
//! block. Objects allocated this way carry [`MARKER_REGISTRY_ALLOCATED`] in
//! their `__padding` word, so a frontend may read the header only when the
//! marker is set (objects built by upstream headers have `__padding == 0`
//! and no header in front of them).
//!
//! Builtin block layout, for any power-of-two alignment `a`:
//!
//! ```text
//! block start (aligned to max(a, 16))
//! | ... | offset: usize | delete_space | body ...
//!       ^ body - 16      ^ body - 8     ^ body = start + max(a, 16)
//! ```
//!
//! The offset is stored in the block itself, so freeing never has to guess
//! the alignment the block was made with.
//!
//! SAFETY invariants of this module: a body handed out by the builtin
//! allocator always has 16 writable bytes before it inside the same block,
//! the word at `body - 16` holds the distance back to the block start, and
//! the block came from `aligned_alloc_raw` with that start.

use std::ffi::c_void;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::abi::{TVMFFICustomAllocator, TVMFFIObject, TVMFFIObjectAllocHeader};
use crate::object::object_error::ObjectError;

pub use crate::abi::MARKER_REGISTRY_ALLOCATED;

/// Largest alignment the builtin allocator serves.
pub const MAX_ALIGNMENT: usize = 1 << 16;

/// The builtin allocator entry. Wrapped so it can be a `static`: the entry
/// itself is never written after initialisation.
struct BuiltinEntry(std::cell::UnsafeCell<TVMFFICustomAllocator>);
// SAFETY: the entry is immutable after construction; the UnsafeCell is only
// there because the C ABI hands out a `*mut` to it.
unsafe impl Sync for BuiltinEntry {}

static BUILTIN: BuiltinEntry = BuiltinEntry(std::cell::UnsafeCell::new(TVMFFICustomAllocator {
    allocate: Some(builtin_allocate),
    context: ptr::null_mut(),
}));

/// The installed allocator; NULL means the builtin one.
static CURRENT: AtomicPtr<TVMFFICustomAllocator> = AtomicPtr::new(ptr::null_mut());

/// The builtin allocator entry (what `TVMFFISetCustomAllocator(NULL)` restores).
pub fn builtin_allocator() -> *mut TVMFFICustomAllocator {
    BUILTIN.0.get()
}

/// The allocator every object allocation goes through. Never NULL.
pub fn current_allocator() -> *mut TVMFFICustomAllocator {
    let p = CURRENT.load(Ordering::Acquire);
    if p.is_null() {
        builtin_allocator()
    } else {
        p
    }
}

/// Install `allocator`, or restore the builtin one when it is NULL.
///
/// Rejects an entry whose `allocate` is NULL.
///
/// # Safety
/// `allocator`, when non-NULL, must stay valid for the rest of the process.
pub unsafe fn set_allocator(allocator: *mut TVMFFICustomAllocator) -> Result<(), ObjectError> {
    if !allocator.is_null() {
        // SAFETY: caller guarantees a valid entry when non-NULL.
        if unsafe { (*allocator).allocate.is_none() } {
            return Err(ObjectError::value_error("TVMFFISetCustomAllocator: allocator->allocate is NULL"));
        }
    }
    CURRENT.store(allocator, Ordering::Release);
    Ok(())
}

/// Allocate an object body of `size` bytes aligned to `alignment` through the
/// installed allocator. The body's `TVMFFIObject` header is left for the
/// caller to initialise (see [`init_header`]).
pub fn allocate_body(size: usize, alignment: usize, type_index: i32) -> Result<NonNull<u8>, ObjectError> {
    if !alignment.is_power_of_two() || alignment > MAX_ALIGNMENT {
        return Err(ObjectError::value_error(format!(
            "object alignment {alignment} is not a power of two up to {MAX_ALIGNMENT}"
        )));
    }
    if size < std::mem::size_of::<TVMFFIObject>() {
        return Err(ObjectError::value_error(format!("object size {size} is smaller than the object header")));
    }
    let entry = current_allocator();
    // SAFETY: `current_allocator` never returns NULL and installed entries
    // outlive the process (contract of `set_allocator`).
    let (allocate, context) = unsafe { ((*entry).allocate, (*entry).context) };
    let allocate = allocate.ok_or_else(|| ObjectError::runtime_error("installed allocator has no allocate function"))?;
    // SAFETY: calling the registered allocate function with valid arguments.
    let mut body = unsafe { allocate(size, alignment, type_index, context) };
    if body.is_null() && type_index == crate::abi::type_index::kTVMFFIError && entry != builtin_allocator() {
        // An Error must be creatable even when the installed allocator
        // fails, or the failure itself could not be reported.
        // SAFETY: the builtin allocator with valid arguments.
        body = unsafe { builtin_allocate(size, alignment, type_index, std::ptr::null_mut()) };
    }
    NonNull::new(body as *mut u8).ok_or_else(|| {
        ObjectError::memory_error(
            format!("allocation of {size} bytes (alignment {alignment}) for type index {type_index} failed"),
        )
    })
}

/// Initialise a freshly allocated object's header: one strong and one weak
/// reference, the registry marker, and the deleter.
///
/// # Safety
/// `body` must come from [`allocate_body`] with at least a `TVMFFIObject`'s
/// worth of writable bytes.
pub unsafe fn init_header(
    body: NonNull<u8>,
    type_index: i32,
    deleter: unsafe extern "C" fn(*mut c_void, i32),
) -> *mut TVMFFIObject {
    let obj = body.as_ptr() as *mut TVMFFIObject;
    // SAFETY: caller guarantees the body is writable and large enough.
    unsafe {
        ptr::write(
            obj,
            TVMFFIObject {
                combined_ref_count: crate::object::refcount::COMBINED_BOTH_ONE,
                type_index,
                __padding: MARKER_REGISTRY_ALLOCATED,
                deleter: Some(deleter),
            },
        );
    }
    obj
}

/// Reclaim the block of a body that came from [`allocate_body`].
///
/// # Safety
/// `body` must come from [`allocate_body`] and not have been freed.
pub unsafe fn free_body(body: *mut c_void) {
    // SAFETY: every registry-allocated body has its header right before it.
    let header = unsafe { &*(body as *const TVMFFIObjectAllocHeader).sub(1) };
    if let Some(delete_space) = header.delete_space {
        // SAFETY: the header's own reclaim function for this very body.
        unsafe { delete_space(body) }
    }
}

/// Whether `obj` says a `TVMFFIObjectAllocHeader` precedes it.
///
/// # Safety
/// `obj` must point to a live object header.
pub unsafe fn has_registry_marker(obj: *const TVMFFIObject) -> bool {
    // SAFETY: reading a field of a live object.
    unsafe { (*obj).__padding & MARKER_REGISTRY_ALLOCATED != 0 }
}

/// Distance from block start to body for a given alignment.
fn body_offset(alignment: usize) -> usize {
    alignment.max(16)
}

unsafe extern "C" fn builtin_allocate(size: usize, alignment: usize, _type_index: i32, _ctx: *mut c_void) -> *mut c_void {
    if !alignment.is_power_of_two() || alignment > MAX_ALIGNMENT {
        return ptr::null_mut();
    }
    let offset = body_offset(alignment);
    let Some(total) = size.checked_add(offset) else { return ptr::null_mut() };
    let start = aligned_alloc_raw(total, offset);
    if start.is_null() {
        return ptr::null_mut();
    }
    // SAFETY: `start` has `total >= offset + size` bytes; offset >= 16 leaves
    // room for the offset word and the header inside the block.
    unsafe {
        let body = start.add(offset);
        ptr::write((body as *mut usize).sub(2), offset);
        ptr::write(
            (body as *mut TVMFFIObjectAllocHeader).sub(1),
            TVMFFIObjectAllocHeader { delete_space: Some(builtin_delete_space) },
        );
        body as *mut c_void
    }
}

unsafe extern "C" fn builtin_delete_space(body: *mut c_void) {
    // SAFETY: module invariant: the offset word sits at body - 16 and the
    // block start is body - offset.
    unsafe {
        let offset = ptr::read((body as *const usize).sub(2));
        aligned_free_raw((body as *mut u8).sub(offset));
    }
}

/// The builtin `delete_space`, for frontends that want to recognise it.
pub fn builtin_delete_space_fn() -> unsafe extern "C" fn(*mut c_void) {
    builtin_delete_space
}

#[cfg(unix)]
fn aligned_alloc_raw(size: usize, alignment: usize) -> *mut u8 {
    let mut out: *mut c_void = ptr::null_mut();
    // SAFETY: posix_memalign with a power-of-two alignment >= sizeof(void*).
    let rc = unsafe { libc::posix_memalign(&mut out, alignment, size) };
    if rc != 0 {
        ptr::null_mut()
    } else {
        out as *mut u8
    }
}

#[cfg(unix)]
unsafe fn aligned_free_raw(p: *mut u8) {
    // SAFETY: `p` came from posix_memalign.
    unsafe { libc::free(p as *mut c_void) }
}

#[cfg(windows)]
extern "C" {
    fn _aligned_malloc(size: usize, alignment: usize) -> *mut c_void;
    fn _aligned_free(p: *mut c_void);
}

#[cfg(windows)]
fn aligned_alloc_raw(size: usize, alignment: usize) -> *mut u8 {
    // SAFETY: CRT aligned allocation with a power-of-two alignment.
    unsafe { _aligned_malloc(size, alignment) as *mut u8 }
}

#[cfg(windows)]
unsafe fn aligned_free_raw(p: *mut u8) {
    // SAFETY: `p` came from _aligned_malloc.
    unsafe { _aligned_free(p as *mut c_void) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_serves_every_alignment_and_frees_what_it_allocated() {
        let mut align = 1;
        while align <= 4096 {
            for size in [24usize, 40, 100, 4097] {
                // SAFETY: test of the builtin entry points.
                unsafe {
                    let body = builtin_allocate(size, align, 64, ptr::null_mut());
                    assert!(!body.is_null());
                    assert_eq!(body as usize % align, 0, "alignment {align}");
                    ptr::write_bytes(body as *mut u8, 0xAB, size);
                    free_body(body);
                }
            }
            align *= 2;
        }
    }

    #[test]
    fn bad_alignment_is_an_error_not_an_abort() {
        let err = allocate_body(64, 3, 64).unwrap_err();
        assert!(err.message().contains("alignment 3"), "{}", err.message());
        let err = allocate_body(8, 8, 64).unwrap_err();
        assert!(err.message().contains("smaller than the object header"));
    }
}
