//! What differs on free-threaded CPython (PEP 703), in one place.
//!
//! With the GIL, Python-side tying transitions never interleave: the state
//! machine reads and writes a binding and increfs its wrapper as one step.
//! Without it, two threads can return the same handle while a third drops
//! its wrapper. There, each binding is its own spin-lock (a tag bit taken
//! with compare-and-swap, see [`crate::binding::Binding::lock`]; critical
//! sections never call into Python), and a wrapper whose reference count
//! already reached zero is treated as being torn down: a lookup makes a new
//! canonical wrapper instead of reviving the dying one ([`dying`], which the
//! GIL build needs too: `subtype_dealloc` can run Python code after the
//! count reached zero), and a teardown that finds its wrapper referenced
//! again gives up ([`resurrected`]). Together these are the try-incref of
//! the Active hit: the increment happens under the binding's lock only on a
//! wrapper whose count is not zero, and a teardown racing with it takes the
//! same lock before it decides. On the GIL build the lock is a plain load
//! and `resurrected` is always false, so both builds run the same
//! transition code.

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

/// Whether the wrapper's reference count reached zero: its teardown has
/// begun (or is queued), so it must not be handed out again.
///
/// # Safety
/// `w` is a wrapper whose memory is not freed (a binding names it).
#[inline(always)]
pub unsafe fn dying(w: *mut ffi::PyObject) -> bool {
    // SAFETY: per the caller.
    unsafe { ffi::Py_REFCNT(w) == 0 }
}

/// Inside `tp_dealloc`, under the lock: whether another thread took a new
/// reference to the wrapper after its count reached zero (free-threaded
/// only; with the GIL `dying` prevents it).
///
/// # Safety
/// `w` is the wrapper being deallocated.
#[inline(always)]
pub unsafe fn resurrected(w: *mut ffi::PyObject) -> bool {
    #[cfg(Py_GIL_DISABLED)]
    {
        // SAFETY: per the caller.
        unsafe { ffi::Py_REFCNT(w) > 0 }
    }
    #[cfg(not(Py_GIL_DISABLED))]
    {
        let _ = w;
        false
    }
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
