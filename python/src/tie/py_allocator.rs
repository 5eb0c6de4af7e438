//! The Python allocator: every object created while the extension is
//! loaded comes from [`py_allocate`], whose block carries the wrapper word in
//! front of the generic `TVMFFIObjectAllocHeader`:
//!
//! ```text
//! block start            body - 16      body - 8        body
//! | [offset] (align>16) | wrapper word | delete_space | object ...
//! ```
//!
//! [`is_ours`] recognises these blocks (the core's marker plus one of our
//! two `delete_space` functions); [`word`] gives the word, whose states are
//! in [`crate::tie::binding`]. `delete_space` is the native half of the teardown
//! handshake with the wrapper teardown (`tie_state::settle_teardown`): it runs when the handle's weak
//! count reaches zero, on any thread.
//!
//! SAFETY invariants of this module: a handle for which [`is_ours`] holds
//! came from [`py_allocate`], so its word lives at `body - 16` and is valid
//! until the block is freed; the block is freed only by `delete_space` (no
//! InTransit binding) or by the teardown through [`free_deferred_block`].

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};

use pyo3::ffi;
use tether_sys::abi::{TVMFFICustomAllocator, TVMFFIObject, TVMFFIObjectAllocHeader, MARKER_REGISTRY_ALLOCATED};
use tether_sys::TVMFFISetCustomAllocator;

use crate::tie::binding_word::{load_unlocked, INACTIVE, TAGS, TRANSIT};

struct AllocatorEntry(std::cell::UnsafeCell<TVMFFICustomAllocator>);
// SAFETY: the entry is never written after construction.
unsafe impl Sync for AllocatorEntry {}

static ALLOCATOR: AllocatorEntry = AllocatorEntry(std::cell::UnsafeCell::new(TVMFFICustomAllocator {
    allocate: Some(py_allocate),
    context: ptr::null_mut(),
}));

/// Install the allocator for every object created from now on.
pub fn install_allocator() -> Result<(), String> {
    // SAFETY: the entry is a static that lives for the process.
    if unsafe { TVMFFISetCustomAllocator(ALLOCATOR.0.get()) } != 0 {
        return Err("installing the tether Python allocator failed".into());
    }
    Ok(())
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
pub unsafe fn word<'a>(h: *mut TVMFFIObject) -> &'a AtomicUsize {
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
    let mut cur = load_unlocked(w);
    loop {
        if cur & TRANSIT == 0 {
            break;
        }
        // A wrapper teardown is half done: its end frees both.
        match w.compare_exchange(cur, cur & !TRANSIT, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return,
            Err(_) => cur = load_unlocked(w),
        }
    }
    if cur & INACTIVE != 0 {
        let wrapper = (cur & !TAGS) as *mut c_void;
        // Freeing Python memory needs the GIL, which a release never waits
        // for: without it the memory is freed when the GIL is next held.
        // SAFETY: the kept memory is a GC allocation nobody references
        // (module invariant), handed over.
        unsafe { crate::tie::release_pool::discard_kept(wrapper as *mut ffi::PyObject) };
    }
    // After interpreter exit kept wrapper memory is left to the OS.
    // SAFETY: no reference to the object or its wrapper binding remains.
    unsafe { aligned_free((body as *mut u8).sub(offset) as *mut c_void) };
}

/// The alignment every `malloc` result has on the Unix C libraries tether
/// runs on (glibc, musl, macOS: at least two words, 16 bytes on 64-bit
/// targets).
#[cfg(unix)]
const MALLOC_ALIGNMENT: usize = 2 * std::mem::size_of::<usize>();

#[cfg(unix)]
fn aligned_alloc(size: usize, alignment: usize) -> *mut c_void {
    if alignment <= MALLOC_ALIGNMENT {
        // Nearly every object (16-byte alignment): plain malloc, which
        // allocators serve faster than posix_memalign; `free` releases
        // either kind.
        // SAFETY: a plain allocation.
        return unsafe { libc::malloc(size) };
    }
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

/// Free the block of a handle whose `delete_space` deferred to the wrapper teardown.
///
/// # Safety
/// `h` came from [`py_allocate`], its weak count reached zero, and its
/// `delete_space` returned early because of InTransit.
pub unsafe fn free_deferred_block(h: *mut TVMFFIObject) {
    // SAFETY: per the caller: with the word cleared, the block's own
    // delete_space only frees the block (it knows its layout).
    unsafe {
        word(h).store(0, Ordering::Release);
        if let Some(d) = (*(h as *const TVMFFIObjectAllocHeader).sub(1)).delete_space {
            d(h as *mut c_void);
        }
    }
}

