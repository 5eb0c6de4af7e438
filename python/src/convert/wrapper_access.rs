//! Reading a wrapper: checking that an object is one, the handle it
//! holds, and its class name for error messages.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use std::ffi::c_void;

use tether_sys::abi::TVMFFIObject;
use tether_sys::TVMFFIObjectIncRef;

use crate::convert::owned_any::OwnedAny;
use crate::convert::registry;
use crate::tie::tie_state::CObject;

/// `obj` if it is a wrapper (so it has the `CObject` layout), else a
/// TypeError.
pub(crate) fn wrapper<'a, 'py>(obj: &'a Bound<'py, PyAny>) -> PyResult<&'a Bound<'py, PyAny>> {
    if registry::is_wrapper(obj) {
        Ok(obj)
    } else {
        Err(PyTypeError::new_err(format!("expected a tether.Object, got {}", type_name(obj))))
    }
}

/// The handle a wrapper holds, or a ValueError if it was moved from.
pub fn handle_of(obj: &Bound<'_, PyAny>) -> PyResult<*mut TVMFFIObject> {
    // SAFETY: callers pass wrappers (checked with `registry::is_wrapper`), which have the CObject layout.
    let h = unsafe { (*(obj.as_ptr() as *mut CObject)).chandle };
    if h.is_null() {
        return Err(PyValueError::new_err(format!(
            "{} object has no handle (it was moved from or not initialised)",
            obj.get_type().name().map(|n| n.to_string()).unwrap_or_default()
        )));
    }
    Ok(h)
}

/// The FFI object a Python value keeps in `_tvm_ffi_cached_object` (a
/// `tether.core.String`/`Bytes`, a `tether.Shape`), with a reference of its
/// own; None when the value keeps no wrapper there.
pub fn cached_object(obj: &Bound<'_, PyAny>) -> PyResult<Option<OwnedAny>> {
    let Ok(cached) = obj.getattr(pyo3::intern!(obj.py(), "_tvm_ffi_cached_object")) else { return Ok(None) };
    if !registry::is_wrapper(&cached) {
        return Ok(None);
    }
    let h = handle_of(&cached)?;
    // SAFETY: the wrapper owns +1 on a live object; we add our own.
    unsafe { TVMFFIObjectIncRef(h as *mut c_void) };
    Ok(Some(OwnedAny::from_handle(h)))
}

/// The static class of a wrapper argument, for error messages.
pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}
