//! Python references released where the GIL is not held, kept until it is.
//!
//! Native code drops FFI objects that own Python state (a lent `str`'s
//! owner, an `ffi.OpaquePyObject`, a callback's callable, a wrapper's kept
//! memory) on any thread, often while holding locks of its own. Taking the
//! GIL there could wait forever (the thread holding the GIL may be waiting
//! for one of those locks), so a release never waits for it: a thread that
//! holds the GIL releases at once; any other parks the release here and
//! asks the interpreter to run [`drain`] (`Py_AddPendingCall`, which needs
//! no GIL), as pyo3's reference pool does. Calls back from native code
//! drain the pool too, so parked releases do not wait for the main thread.
//! After interpreter exit nothing is released (the OS reclaims it).
//!
//! SAFETY invariants of this module: every parked pointer is a Python
//! object (or kept wrapper memory) the parker owned one reference on (the
//! memory), handed over to the pool; the pool's lock is never held while
//! Python code runs or while the GIL is waited for.

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;
use pyo3::ffi;

use super::exit_park;

/// What a parked release does once the GIL is held.
#[derive(Clone, Copy)]
enum Release {
    /// Drop one reference on a Python object.
    Decref(usize),
    /// Free a wrapper's kept memory (`kept_memory::discard_kept`).
    DiscardKept(usize),
}

static PENDING: Mutex<Vec<Release>> = parking_lot::const_mutex(Vec::new());
/// Whether anything is parked (read without the lock on every drain point).
static HAS_PENDING: AtomicBool = AtomicBool::new(false);
/// Whether a `Py_AddPendingCall` for [`drain`] is outstanding.
static SCHEDULED: AtomicBool = AtomicBool::new(false);

/// Whether the calling thread holds the GIL (on a free-threaded build:
/// has an attached thread state).
fn holds_gil() -> bool {
    // SAFETY: callable from any thread at any time.
    unsafe { ffi::PyGILState_Check() == 1 }
}

/// Release one reference on `obj`: now when this thread holds the GIL,
/// else when it is next held. Never waits for the GIL.
///
/// # Safety
/// `obj` is a Python object the caller owns one reference on, handed over.
pub unsafe fn decref(obj: *mut ffi::PyObject) {
    if obj.is_null() || !exit_park::python_alive() {
        return;
    }
    if holds_gil() {
        // SAFETY: per the caller; GIL held.
        unsafe { exit_park::decref(obj) };
    } else {
        park(Release::Decref(obj as usize));
    }
}

/// Free a wrapper's kept memory: now when this thread holds the GIL, else
/// when it is next held. Never waits for the GIL.
///
/// # Safety
/// `wrapper` is kept wrapper memory nobody references, handed over.
pub unsafe fn discard_kept(wrapper: *mut ffi::PyObject) {
    if wrapper.is_null() || !exit_park::python_alive() {
        return;
    }
    if holds_gil() {
        // SAFETY: per the caller; GIL held.
        unsafe { super::kept_memory::discard_kept(wrapper) };
    } else {
        park(Release::DiscardKept(wrapper as usize));
    }
}

fn park(release: Release) {
    PENDING.lock().push(release);
    HAS_PENDING.store(true, Ordering::Release);
    if !SCHEDULED.swap(true, Ordering::AcqRel) {
        // SAFETY: Py_AddPendingCall may be called from any thread without
        // the GIL; `drain` has the signature it expects.
        if unsafe { ffi::Py_AddPendingCall(Some(drain), std::ptr::null_mut()) } != 0 {
            // The interpreter's queue is full: the next drain point (a call
            // back from native code) releases it instead.
            SCHEDULED.store(false, Ordering::Release);
        }
    }
}

extern "C" fn drain(_arg: *mut c_void) -> c_int {
    SCHEDULED.store(false, Ordering::Release);
    // SAFETY: the interpreter runs pending calls with the GIL held.
    unsafe { drain_with_gil() };
    0
}

/// Run the parked releases. Cheap when none are parked.
///
/// # Safety
/// The calling thread holds the GIL.
pub unsafe fn drain_with_gil() {
    if !HAS_PENDING.load(Ordering::Acquire) {
        return;
    }
    let parked = {
        let mut pending = PENDING.lock();
        HAS_PENDING.store(false, Ordering::Release);
        std::mem::take(&mut *pending)
    };
    if !exit_park::python_alive() {
        return;
    }
    // Releasing may run Python code (`__del__`) that parks more; those wait
    // for the next drain. The lock is not held here.
    for r in parked {
        // SAFETY: per the module invariant; GIL held per the caller.
        unsafe {
            match r {
                Release::Decref(p) => exit_park::decref(p as *mut ffi::PyObject),
                Release::DiscardKept(p) => super::kept_memory::discard_kept(p as *mut ffi::PyObject),
            }
        }
    }
}
