//! Errors across the boundary: a raised FFI error taken as a Python
//! exception (the very exception object when it started in Python, else
//! the builtin named by its kind), and a Python exception put into the
//! FFI's raised slot as an Error whose extra context carries the
//! exception itself, so it round-trips unchanged.
//!
//! SAFETY invariants of this module: error handles read here are live
//! Error objects (their cell follows the header, the C ABI's layout).

use std::ffi::{c_int, c_void, CString};
use std::ptr;

use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use tether_sys::abi::{type_index as ti, TVMFFIByteArray, TVMFFIErrorCell, TVMFFIObject, TVMFFIOpaqueObjectCell};
use tether_sys::*;

use crate::convert::{any_to_py, opaque_from_object, OwnedAny};
use crate::{exit_park, registry};

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
    if let Some(hooks) = registry::hooks(py) {
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
        .filter(|c| c.downcast::<pyo3::types::PyType>().is_ok_and(|t| t.is_subclass_of::<pyo3::exceptions::PyException>().unwrap_or(false)));
    match cls {
        Some(c) => match exit_park::call_py(&c, (message.clone(),), None) {
            Ok(e) => PyErr::from_value(e),
            Err(e) => e,
        },
        None => PyRuntimeError::new_err(format!("{kind}: {message}")),
    }
}

/// Put a Python exception into the FFI's raised slot.
pub fn raise_into_ffi(py: Python<'_>, e: PyErr) {
    let value = e.into_value(py);
    match error_from_exception(py, value.bind(py)) {
        Ok(err) => {
            // SAFETY: SetRaised takes its own reference; we drop ours.
            unsafe {
                TVMFFIErrorSetRaised(err as *mut c_void);
                TVMFFIObjectDecRef(err as *mut c_void);
            }
        }
        Err(_) => {
            let k = CString::new("RuntimeError").unwrap();
            let m = CString::new("a Python exception could not be converted to an FFI error").unwrap();
            // SAFETY: NUL-terminated strings.
            unsafe { TVMFFIErrorSetRaisedFromCStr(k.as_ptr(), m.as_ptr()) };
        }
    }
}

/// An Error object for a Python exception; the exception itself rides in
/// `extra_context` so it comes back as the very same exception.
pub fn error_from_exception(py: Python<'_>, exc: &Bound<'_, PyAny>) -> PyResult<*mut TVMFFIObject> {
    let kind = match registry::hooks(py) {
        Some(h) => exit_park::call_py(h.error_kind.bind(py), (exc,), None)?.extract::<String>()?,
        None => exc.get_type().name()?.to_string(),
    };
    let message = exc.str().map(|s| s.to_string()).unwrap_or_default();
    let ctx = opaque_from_object(py, exc)?;
    let k = TVMFFIByteArray { data: kind.as_ptr() as *const _, size: kind.len() };
    let m = TVMFFIByteArray { data: message.as_ptr() as *const _, size: message.len() };
    let mut out: *mut c_void = ptr::null_mut();
    // SAFETY: valid arrays; the error takes its own reference on `ctx`.
    let rc = unsafe {
        TVMFFIErrorCreateWithCauseAndExtraContext(&k, &m, ptr::null(), ptr::null_mut(), ctx as *mut c_void, &mut out)
    };
    // SAFETY: drop our reference on the context either way.
    unsafe { TVMFFIObjectDecRef(ctx as *mut c_void) };
    check(py, rc)?;
    Ok(out as *mut TVMFFIObject)
}
