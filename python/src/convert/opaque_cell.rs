//! Any Python object as an `ffi.OpaquePyObject`: the FFI object holds a
//! reference on it and releases it (under the GIL, through the exit
//! parking frames) when the last native owner lets go.

use std::ffi::c_void;
use std::ptr;

use pyo3::ffi;
use pyo3::prelude::*;
use tether_sys::abi::{type_index as ti, TVMFFIObject};
use tether_sys::*;

use crate::convert::error_bridge::take_ffi_error;
use crate::tie::exit_park;

pub unsafe extern "C" fn release_pyobject(p: *mut c_void) {
    if p.is_null() || !exit_park::python_alive() {
        return; // after interpreter exit the OS reclaims it
    }
    // Any thread may drop the last native owner; the decref needs the GIL
    // and may run `__del__`, so both go through the exit parking frames.
    let gil = exit_park::gil_ensure();
    // SAFETY: `p` is a PyObject we hold one reference on; GIL held.
    unsafe {
        exit_park::decref(p as *mut ffi::PyObject);
        ffi::PyGILState_Release(gil);
    }
}

/// Wrap any Python object as an `ffi.OpaquePyObject` holding a reference.
pub fn opaque_from_object(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<*mut TVMFFIObject> {
    let p = obj.clone().into_ptr();
    let mut out: *mut c_void = ptr::null_mut();
    // SAFETY: the opaque object takes our reference; on failure we drop it.
    let rc = unsafe { TVMFFIObjectCreateOpaque(p as *mut c_void, ti::kTVMFFIOpaquePyObject, Some(release_pyobject), &mut out) };
    if rc != 0 {
        // SAFETY: the reference we took above.
        unsafe { ffi::Py_DECREF(p) };
        return Err(take_ffi_error(py));
    }
    Ok(out as *mut TVMFFIObject)
}
