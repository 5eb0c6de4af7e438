//! Wrapper memory kept for revival (Inactive): freeing it the way its type
//! allocated it, and re-initialising it in place as a fresh instance, with
//! CPython's finalized mark cleared so a `__del__` runs again on the next
//! drop. Which classes may keep memory, and the binding transitions that
//! decide when it is kept or revived, are in [`crate::tie::tie_state`].
//!
//! SAFETY invariants of this module: kept memory has refcount 0, is not
//! tracked by the collector, keeps a valid `ob_type` and owns one
//! reference to it (heap types), and no binding names it once it is
//! discarded or revived.

use std::ffi::c_void;
use std::ptr;

use pyo3::ffi;

use crate::tie::tying_lock;

/// Free kept (Inactive) wrapper memory and the type reference it holds.
///
/// Kept memory owns one reference to its heap type, so the class cannot be
/// freed (and its address reused by another class) while revival may still
/// compare against it.
///
/// # Safety
/// GIL held; `kept` is kept wrapper memory no binding names any more.
pub unsafe fn discard_kept(kept: *mut ffi::PyObject) {
    // SAFETY: per the caller; kept memory keeps its (valid) ob_type.
    unsafe {
        let tp = (*kept).ob_type;
        free_memory(kept);
        if ffi::PyType_GetFlags(tp) & ffi::Py_TPFLAGS_HEAPTYPE != 0 {
            ffi::Py_DECREF(tp as *mut ffi::PyObject);
        }
    }
}

/// Whether instances of `tp` are GC objects (a collector header in front,
/// tracked while alive).
///
/// # Safety
/// `tp` must be a live type object.
#[inline]
pub unsafe fn is_gc_type(tp: *mut ffi::PyTypeObject) -> bool {
    // SAFETY: reading the flags of a live type.
    unsafe { ffi::PyType_GetFlags(tp) & ffi::Py_TPFLAGS_HAVE_GC != 0 }
}

/// Release the memory of a wrapper (dead, or kept and untracked) the way
/// its type allocated it.
///
/// # Safety
/// GIL held; `p` is wrapper memory with refcount 0 and a valid `ob_type`,
/// not tracked by the collector, and nothing refers to it any more.
pub unsafe fn free_memory(p: *mut ffi::PyObject) {
    // SAFETY: per the caller; the type's flag says which allocator made it.
    unsafe {
        if is_gc_type((*p).ob_type) {
            ffi::PyObject_GC_Del(p as *mut c_void);
        } else {
            ffi::PyObject_Free(p as *mut c_void);
        }
    }
}

/// Kept wrapper memory re-initialised in place as a fresh instance of `tp`
/// (what `tp_alloc` would have returned, at the same address).
///
/// # Safety
/// GIL held; `kept` is untracked memory of an instance of `tp` (checked by
/// the caller), refcount 0, its finalized mark cleared.
pub unsafe fn revive(kept: *mut ffi::PyObject, tp: *mut ffi::PyTypeObject) -> *mut ffi::PyObject {
    // SAFETY: per the caller.
    unsafe {
        let head = std::mem::size_of::<ffi::PyObject>();
        let size = (*tp).tp_basicsize as usize;
        ptr::write_bytes((kept as *mut u8).add(head), 0, size - head);
        ffi::PyObject_Init(kept, tp);
        if ffi::PyType_GetFlags(tp) & ffi::Py_TPFLAGS_HEAPTYPE != 0 {
            // PyObject_Init took a reference for the live object; the one
            // the kept memory held is no longer needed.
            ffi::Py_DECREF(tp as *mut ffi::PyObject);
        }
        tying_lock::enable_try_incref(kept);
        super::function_init::init_function_object(kept, tp);
        if is_gc_type(tp) {
            ffi::PyObject_GC_Track(kept as *mut c_void);
        }
    }
    kept
}

/// Make kept wrapper memory look never finalized, so `__del__` runs again
/// on its next drop; false if the mark could not be cleared (the caller then
/// discards the memory instead of reviving it).
///
/// CPython keeps the mark outside the public API: in the `PyGC_Head` in
/// front of the object (bit 0 of `_gc_prev`) on GIL builds, in
/// `ob_gc_bits` on free-threaded ones; an untracked object keeps only that
/// flag there, so the word is reset whole. `PyObject_GC_IsFinalized`
/// confirms the result. Objects of non-GC types are never marked (their
/// finalizer runs on every deallocation) and have no such header.
///
/// # Safety
/// GIL held; `kept` is kept (untracked, refcount 0) wrapper memory.
pub unsafe fn clear_finalized(kept: *mut ffi::PyObject) -> bool {
    // SAFETY: per the caller; the GC header precedes every GC object.
    unsafe {
        if !is_gc_type((*kept).ob_type) || ffi::PyObject_GC_IsFinalized(kept) == 0 {
            return true;
        }
        #[cfg(not(Py_GIL_DISABLED))]
        {
            let gc_prev = (kept as *mut usize).sub(1);
            *gc_prev = 0;
        }
        #[cfg(Py_GIL_DISABLED)]
        {
            const FINALIZED: u8 = 1 << 1;
            (*kept).ob_gc_bits &= !FINALIZED;
        }
        ffi::PyObject_GC_IsFinalized(kept) == 0
    }
}
