//! Python exceptions into the FFI: an Error whose extra context carries
//! the exception itself (as an `ffi.OpaquePyObject`), so it round-trips
//! unchanged, put into the FFI's raised slot or returned as an object.

use std::ffi::{c_void, CString};
use std::ptr;

use pyo3::prelude::*;
use tether_sys::abi::{TVMFFIByteArray, TVMFFIObject};
use tether_sys::*;

use crate::convert::error_bridge::check;
use crate::convert::opaque_cell::opaque_from_object;
use crate::convert::python_hooks;
use crate::tie::exit_park;

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
    let kind = match python_hooks::hooks(py) {
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
