//! `ffi.OpaquePyObject` as a wrapper, not as the value it carries: a call
//! returning one gives the Python object back (convert.rs), but
//! `tvm_ffi.convert(x)` of a value with no FFI form gives the opaque
//! object itself, whose `pyobject()` reads the carried object.
//!
//! SAFETY invariants of this module: the GIL is held; a handle's type index
//! is checked to be `kTVMFFIOpaquePyObject` before its cell is read.

use std::mem::size_of;

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use tether_sys::abi::{type_index as ti, TVMFFIObject, TVMFFIOpaqueObjectCell};

use crate::convert::opaque_cell::opaque_from_object;
use crate::convert::registry;
use crate::convert::wrapper_access::handle_of;
use crate::tie::tie_state;

/// `_ffi.opaque_object(x)`: a new `ffi.OpaquePyObject` holding `x`, as a
/// wrapper of the class registered for that type.
#[pyfunction]
pub fn opaque_object(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let h = opaque_from_object(py, obj)?;
    let cls = match registry::class_for(py, ti::kTVMFFIOpaquePyObject) {
        Ok(c) => c,
        Err(e) => {
            // SAFETY: the +1 opaque_from_object gave us.
            unsafe { tether_sys::TVMFFIObjectDecRef(h as *mut std::ffi::c_void) };
            return Err(e);
        }
    };
    // SAFETY: `h` is live with our +1, which the wrapper takes over; `cls`
    // is a wrapper class for this type.
    let out = unsafe { tie_state::make_ret_object(h, cls) };
    if out.is_null() {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: a new reference.
    Ok(unsafe { Bound::from_owned_ptr(py, out).unbind() })
}

/// `_ffi.opaque_payload(w)`: the Python object an `ffi.OpaquePyObject`
/// wrapper carries; TypeError for a wrapper of another type.
#[pyfunction]
pub fn opaque_payload(py: Python<'_>, wrapper: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let w = crate::convert::wrapper_access::wrapper(wrapper)?;
    let h: *mut TVMFFIObject = handle_of(w)?;
    // SAFETY: a live handle held by the wrapper; its header is readable.
    let index = unsafe { (*h).type_index };
    if index != ti::kTVMFFIOpaquePyObject {
        return Err(PyTypeError::new_err(format!("expected ffi.OpaquePyObject, got {}", registry::type_key_of(index))));
    }
    // SAFETY: an opaque object's cell follows its header; the carried
    // object lives as long as the opaque object, which the wrapper holds.
    unsafe {
        let cell = &*((h as *const u8).add(size_of::<TVMFFIObject>()) as *const TVMFFIOpaqueObjectCell);
        Ok(Bound::from_borrowed_ptr(py, cell.handle as *mut ffi::PyObject).unbind())
    }
}
