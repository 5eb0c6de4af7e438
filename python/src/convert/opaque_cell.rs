//! Any Python object as an `ffi.OpaquePyObject`: the FFI object holds a
//! reference on it and releases it when the last native owner lets go (at
//! once under the GIL, else parked until the GIL is next held: a release
//! never waits for it, `tie::release_pool`).

use std::ffi::c_void;
use std::ptr;

use pyo3::ffi;
use pyo3::prelude::*;
use tether_sys::abi::{type_index as ti, TVMFFIObject};
use tether_sys::*;

use crate::convert::error_bridge::take_ffi_error;
use crate::tie::release_pool;

pub unsafe extern "C" fn release_pyobject(p: *mut c_void) {
    // Any thread may drop the last native owner, holding locks of its own:
    // the decref happens now only if this thread holds the GIL.
    // SAFETY: `p` is a Python object we hold one reference on, handed over.
    unsafe { release_pool::decref(p as *mut ffi::PyObject) }
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
