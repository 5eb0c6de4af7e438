//! Errors from the FFI: a raised FFI error taken as a Python exception
//! (the very exception object when it started in Python, else what
//! `tether.error` makes of it, else the builtin named by its kind). The
//! other direction is [`crate::convert::exception_to_ffi`].
//!
//! Handing the Error object to `tether.error` needs its wrapper, made by
//! `ffi_to_py::any_to_py`, which itself reports failures through this
//! module: the conversion reaches it through [`install_any_to_py`], filled
//! at module start-up.
//!
//! SAFETY invariants of this module: error handles read here are live
//! Error objects (their cell follows the header, the C ABI's layout).

use std::ffi::{c_int, c_void};
use std::sync::OnceLock;
use std::ptr;

use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use tether_sys::abi::{type_index as ti, TVMFFIByteArray, TVMFFIErrorCell, TVMFFIObject, TVMFFIOpaqueObjectCell};
use tether_sys::*;

use crate::convert::owned_any::OwnedAny;
use crate::convert::python_hooks;
use crate::tie::exit_park;

/// A `PyResult` as a C-level entry point (a method slot, a vectorcall)
/// returns it: a new reference, or NULL with the Python exception set.
pub fn result_into_ptr(py: Python<'_>, r: PyResult<Py<PyAny>>) -> *mut ffi::PyObject {
    match r {
        Ok(v) => v.into_ptr(),
        Err(e) => {
            e.restore(py);
            ptr::null_mut()
        }
    }
}

/// Converts an owned FFI value to Python, consuming it.
pub type AnyToPy = fn(Python<'_>, OwnedAny) -> PyResult<Py<PyAny>>;

static ANY_TO_PY: OnceLock<AnyToPy> = OnceLock::new();

/// Installs the FFI-to-Python conversion (once, at module initialisation;
/// later calls keep the first).
pub fn install_any_to_py(f: AnyToPy) {
    let _ = ANY_TO_PY.set(f);
}

/// `Ok` for a zero return code, else the raised FFI error as a Python
/// exception.
pub fn check(py: Python<'_>, rc: c_int) -> PyResult<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(take_ffi_error(py))
    }
}

/// Take the raised FFI error and turn it into a Python exception: the very
/// exception object when it started in Python, else the builtin exception
/// named by the error kind (RuntimeError for kinds Python does not have).
pub fn take_ffi_error(py: Python<'_>) -> PyErr {
    let mut err: *mut c_void = ptr::null_mut();
    // SAFETY: valid output slot.
    unsafe { TVMFFIErrorMoveFromRaised(&mut err) };
    if err.is_null() {
        return PyRuntimeError::new_err("FFI call failed without raising an error");
    }
    let owner = OwnedAny::from_handle(err as *mut TVMFFIObject);
    // SAFETY: an Error object: the cell follows the header.
    let cell = unsafe { &*((err as *const u8).add(std::mem::size_of::<TVMFFIObject>()) as *const TVMFFIErrorCell) };
    let text = |b: &TVMFFIByteArray| {
        // SAFETY: byte arrays of a live error.
        String::from_utf8_lossy(unsafe { if b.size == 0 { &[][..] } else { std::slice::from_raw_parts(b.data as *const u8, b.size) } })
            .into_owned()
    };
    let ctx = cell.extra_context as *mut TVMFFIObject;
    // SAFETY: reading the context object's type index and opaque cell.
    if !ctx.is_null() && unsafe { (*ctx).type_index } == ti::kTVMFFIOpaquePyObject {
        let pyobj = unsafe {
            let c = &*((ctx as *const u8).add(std::mem::size_of::<TVMFFIObject>()) as *const TVMFFIOpaqueObjectCell);
            Bound::from_borrowed_ptr(py, c.handle as *mut ffi::PyObject)
        };
        if pyobj.is_instance_of::<pyo3::exceptions::PyBaseException>() {
            return PyErr::from_value(pyobj);
        }
    }
    if let (Some(hooks), Some(any_to_py)) = (python_hooks::hooks(py), ANY_TO_PY.get()) {
        return match any_to_py(py, owner).and_then(|err| exit_park::call_py(hooks.error_from_ffi.bind(py), (err,), None).map(|e| e.unbind())) {
            Ok(e) => PyErr::from_value(e.into_bound(py)),
            Err(e) => e,
        };
    }
    let (kind, message) = (text(&cell.kind), text(&cell.message));
    drop(owner);
    let builtins = py.import("builtins").ok();
    let cls = builtins
        .and_then(|b| b.getattr(kind.as_str()).ok())
        .filter(|c| c.cast::<pyo3::types::PyType>().is_ok_and(|t| t.is_subclass_of::<pyo3::exceptions::PyException>().unwrap_or(false)));
    match cls {
        Some(c) => match exit_park::call_py(&c, (message.clone(),), None) {
            Ok(e) => PyErr::from_value(e),
            Err(e) => e,
        },
        None => PyRuntimeError::new_err(format!("{kind}: {message}")),
    }
}
