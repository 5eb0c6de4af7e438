//! What differs on free-threaded CPython (PEP 703), in one place.
//!
//! With the GIL, Python-side tying transitions never interleave: the state
//! machine reads and writes a binding and increfs its wrapper as one step.
//! Without it, two threads can return the same handle while a third drops
//! its wrapper. There, each binding is its own spin-lock (a tag bit taken
//! with compare-and-swap, see [`crate::tie::binding::Binding::lock`]; critical
//! sections never call into Python), and the Active hit takes its reference
//! with [`try_incref`], which fails on a wrapper whose teardown has begun:
//! the lookup then makes a new canonical wrapper instead of reviving the
//! dying one (the GIL build needs that too: `subtype_dealloc` can run
//! Python code after the count reached zero). On the GIL build the lock is a
//! plain load and try-incref a check of the count, so both builds run the
//! same transition code.

use pyo3::ffi;

/// Back off while another thread holds a binding: spin briefly (critical
/// sections are a few loads and stores), then yield the CPU.
#[inline]
pub fn spin_wait(spins: &mut u32) {
    *spins += 1;
    if *spins < 64 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
}

#[cfg(Py_GIL_DISABLED)]
extern "C" {
    fn tether_try_incref(op: *mut ffi::PyObject) -> std::ffi::c_int;
    fn tether_enable_try_incref(op: *mut ffi::PyObject);
}

/// Take a reference to a wrapper a binding names, unless its teardown has
/// begun (then nothing is taken and the caller makes a new wrapper). On
/// free-threaded builds this is CPython's weak-reference protocol
/// (`try_incref.c`); with the GIL the count cannot change meanwhile.
///
/// # Safety
/// `w` is a wrapper whose memory is not freed: the caller holds the binding
/// that names it (its teardown takes that binding before freeing it).
#[inline(always)]
pub unsafe fn try_incref(w: *mut ffi::PyObject) -> bool {
    #[cfg(Py_GIL_DISABLED)]
    {
        // SAFETY: per the caller.
        unsafe { tether_try_incref(w) != 0 }
    }
    #[cfg(not(Py_GIL_DISABLED))]
    {
        // SAFETY: per the caller.
        unsafe {
            // A count of zero: `subtype_dealloc` is running Python code
            // (finalizers of the wrapper's __dict__ or slots) on the way
            // to our tp_dealloc.
            if ffi::Py_REFCNT(w) == 0 {
                return false;
            }
            ffi::Py_INCREF(w);
        }
        true
    }
}

/// Prepare a new wrapper for [`try_incref`] (free-threaded builds: route its
/// teardown through the atomic merge of its counts). Called on every
/// wrapper allocation, before any binding can name it.
///
/// # Safety
/// `w` is a live object.
#[inline(always)]
pub unsafe fn enable_try_incref(w: *mut ffi::PyObject) {
    #[cfg(Py_GIL_DISABLED)]
    // SAFETY: per the caller.
    unsafe {
        tether_enable_try_incref(w)
    }
    #[cfg(not(Py_GIL_DISABLED))]
    let _ = w;
}

/// Add `flags` to a type's flags (an atomic field on free-threaded builds).
///
/// # Safety
/// `tp` is a heap type being set up, before instances use the flags.
pub unsafe fn set_type_flags(tp: *mut ffi::PyTypeObject, flags: std::ffi::c_ulong) {
    // SAFETY: per the caller.
    unsafe {
        #[cfg(Py_GIL_DISABLED)]
        (*tp).tp_flags.fetch_or(flags as u64, std::sync::atomic::Ordering::Relaxed);
        #[cfg(not(Py_GIL_DISABLED))]
        {
            (*tp).tp_flags |= flags;
        }
    }
}

/// Remove `flags` from a type's flags (an atomic field on free-threaded
/// builds).
///
/// # Safety
/// `tp` is a heap type being set up, before instances use the flags.
pub unsafe fn clear_type_flags(tp: *mut ffi::PyTypeObject, flags: std::ffi::c_ulong) {
    // SAFETY: per the caller.
    unsafe {
        #[cfg(Py_GIL_DISABLED)]
        (*tp).tp_flags.fetch_and(!(flags as u64), std::sync::atomic::Ordering::Relaxed);
        #[cfg(not(Py_GIL_DISABLED))]
        {
            (*tp).tp_flags &= !flags;
        }
    }
}

#[cfg(Py_GIL_DISABLED)]
static FIELDS: parking_lot::ReentrantMutex<()> = parking_lot::ReentrantMutex::new(());

/// Held while Python reads a reflected field (taking its reference) or
/// writes one (releasing the old value), so that on free-threaded builds a
/// read never takes a reference to a value another thread's write is
/// releasing. Reentrant: a write's released value may run Python code that
/// reads fields. With the GIL this is a no-op.
#[cfg(Py_GIL_DISABLED)]
pub struct FieldGuard(#[allow(dead_code)] parking_lot::ReentrantMutexGuard<'static, ()>);
#[cfg(not(Py_GIL_DISABLED))]
pub struct FieldGuard;

#[inline(always)]
pub fn field_access() -> FieldGuard {
    #[cfg(Py_GIL_DISABLED)]
    {
        FieldGuard(FIELDS.lock())
    }
    #[cfg(not(Py_GIL_DISABLED))]
    {
        FieldGuard
    }
}
