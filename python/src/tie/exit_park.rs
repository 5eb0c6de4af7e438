//! Re-entering the interpreter from native code without crashing at exit.
//!
//! A daemon thread that calls back into Python (a callback run by native
//! code, the GIL taken back after a native call, a Python object released
//! by a native owner) can meet interpreter finalization. CPython before 3.14
//! then ends the thread with `pthread_exit`, a forced unwind that Rust frames
//! cannot carry (it aborts the process). These calls run inside the C frames
//! of `exit_park.c`, which park such a thread for good, as CPython 3.14 does,
//! before the unwind reaches any Rust frame.
//!
//! SAFETY invariants of this module: the wrapped functions have exactly the
//! preconditions of the CPython functions they call.

use std::sync::atomic::{AtomicBool, Ordering};

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

static PYTHON_ALIVE: AtomicBool = AtomicBool::new(true);

/// Called at interpreter exit (an `atexit` hook): from then on native code
/// does not take the GIL for housekeeping (kept wrapper memory and Python
/// objects held natively are left to the OS).
pub fn mark_python_finalizing() {
    PYTHON_ALIVE.store(false, Ordering::Release);
}

/// Whether native code may still take the GIL.
pub fn python_alive() -> bool {
    PYTHON_ALIVE.load(Ordering::Acquire)
}

extern "C" {
    fn tether_park_gil_ensure() -> ffi::PyGILState_STATE;
    fn tether_park_restore_thread(ts: *mut ffi::PyThreadState);
    fn tether_park_call(callable: *mut ffi::PyObject, args: *mut ffi::PyObject, kwargs: *mut ffi::PyObject) -> *mut ffi::PyObject;
    fn tether_park_decref(o: *mut ffi::PyObject);
}

/// `PyGILState_Ensure`, parking the thread if the interpreter is gone.
pub fn gil_ensure() -> ffi::PyGILState_STATE {
    // SAFETY: callable from any thread while the interpreter exists; after
    // finalization began the call parks instead of returning.
    unsafe { tether_park_gil_ensure() }
}

/// `PyEval_RestoreThread`, parking the thread if the interpreter is gone.
///
/// # Safety
/// `ts` came from `PyEval_SaveThread` on this thread.
pub unsafe fn restore_thread(ts: *mut ffi::PyThreadState) {
    // SAFETY: per the caller.
    unsafe { tether_park_restore_thread(ts) }
}

/// Call Python code from the extension (hooks, factories, protocol
/// methods) through the parking frame: a daemon thread that meets
/// interpreter exit inside that code parks instead of unwinding through
/// the Rust frames above.
pub fn call_py<'py>(
    callable: &Bound<'py, PyAny>,
    args: impl IntoPyObject<'py, Target = PyTuple, Output = Bound<'py, PyTuple>>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = callable.py();
    let args: Bound<'py, PyTuple> = args.into_pyobject(py).map_err(Into::into)?;
    let kw = kwargs.map_or(std::ptr::null_mut(), |k| k.as_ptr());
    // SAFETY: the GIL is held (we have Bound values); live objects.
    let r = unsafe { tether_park_call(callable.as_ptr(), args.as_ptr(), kw) };
    if r.is_null() {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: a new reference.
    Ok(unsafe { Bound::from_owned_ptr(py, r) })
}

/// `obj.name(*args)` through the parking frame.
pub fn call_method<'py>(
    obj: &Bound<'py, PyAny>,
    name: &str,
    args: impl IntoPyObject<'py, Target = PyTuple, Output = Bound<'py, PyTuple>>,
) -> PyResult<Bound<'py, PyAny>> {
    call_py(&obj.getattr(name)?, args, None)
}

/// `Py_DECREF`, which may run arbitrary Python code (`__del__`).
///
/// # Safety
/// GIL held; the caller owns the reference.
pub unsafe fn decref(o: *mut ffi::PyObject) {
    // SAFETY: per the caller.
    unsafe { tether_park_decref(o) }
}
