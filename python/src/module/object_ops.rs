//! Operations on wrappers and types that the pure-Python layer calls
//! directly: moving a handle from one wrapper to another
//! (`Object.__move_handle_from__`) and registering a type attribute
//! (`tether.core._register_type_attr`, the core's `TVMFFITypeRegisterAttr`)
//! or a type method (`py_class`'s `@tvm_ffi.method`s, the core's
//! `TVMFFITypeRegisterMethod`).
//!
//! SAFETY invariants of this module: wrappers are checked to be wrappers
//! (the `CObject` layout) before their fields are read; the GIL is held.

use std::sync::atomic::Ordering;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use tether_sys::abi::TVMFFIByteArray;
use tether_sys::*;

use crate::convert::error_bridge::check;
use crate::convert::py_to_ffi;
use crate::convert::wrapper_access::handle_of;
use crate::convert::wrapper_access;
use crate::tie::tie_state::{self, CObject};

/// `_ffi.move_handle(dst, src)`: `dst` (a wrapper without a handle)
/// becomes the wrapper of `src`'s object, taking over `src`'s +1 and, if
/// `src` was canonical, its binding; `src` is left moved-from (no handle).
#[pyfunction]
pub fn move_handle(dst: &Bound<'_, PyAny>, src: &Bound<'_, PyAny>) -> PyResult<()> {
    let (dst, src) = (crate::convert::wrapper_access::wrapper(dst)?, crate::convert::wrapper_access::wrapper(src)?);
    let (d, s) = (dst.as_ptr() as *mut CObject, src.as_ptr() as *mut CObject);
    // SAFETY: both are wrappers (checked above), so both have the CObject
    // layout; GIL held.
    unsafe {
        if !(*d).chandle.is_null() {
            return Err(PyTypeError::new_err(format!(
                "cannot move a handle into a {} object that already has one",
                wrapper_access::type_name(dst)
            )));
        }
        let h = handle_of(src)?;
        if (*s).borrows.load(Ordering::Acquire) > 0 {
            return Err(PyValueError::new_err(format!(
                "cannot move the handle of a {} object that a running call holds by reference",
                wrapper_access::type_name(src)
            )));
        }
        // `dst` holds the handle before it may become canonical, and `src`
        // loses it only after the binding moved (tie_state::move_binding).
        (*d).chandle = h;
        if !tie_state::move_binding(h, src.as_ptr(), dst.as_ptr()) {
            (*d).chandle = std::ptr::null_mut();
            return Err(PyValueError::new_err(format!(
                "cannot move the handle of a {} object that is being moved into a running call",
                wrapper_access::type_name(src)
            )));
        }
        (*s).chandle = std::ptr::null_mut();
    }
    Ok(())
}

/// `_ffi.register_type_attr(type_index, name, value)`: set type attribute
/// `name` of `type_index` to `value` (converted as a call argument); the
/// core keeps its own reference. Errors the core raises (an unknown type,
/// a slot already holding another value) surface as Python exceptions.
#[pyfunction]
pub fn register_type_attr(py: Python<'_>, type_index: i32, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
    let v = py_to_ffi::py_to_any(py, value)?;
    let n = TVMFFIByteArray { data: name.as_ptr() as *const _, size: name.len() };
    // SAFETY: a valid name and value, alive for the call; the core copies
    // the value (taking its own reference) and does not keep the name.
    let rc = unsafe { TVMFFITypeRegisterAttr(type_index, &n, &v.0) };
    check(py, rc)
}

/// `_ffi.register_type_method(type_index, name, func, is_static,
/// metadata_json)`: add a method to a type's reflection record (its
/// `TypeInfo.methods`); `func` (a callable, converted to an FFI Function)
/// takes the object first unless `is_static`. The core copies the record
/// and keeps its own reference to the Function.
#[pyfunction]
pub fn register_type_method(
    py: Python<'_>,
    type_index: i32,
    name: &str,
    func: &Bound<'_, PyAny>,
    is_static: bool,
    metadata_json: &str,
) -> PyResult<()> {
    let method = py_to_ffi::py_to_any(py, func)?;
    let bytes = |s: &str| TVMFFIByteArray { data: s.as_ptr() as *const _, size: s.len() };
    let info = tether_sys::abi::TVMFFIMethodInfo {
        name: bytes(name),
        doc: bytes(""),
        metadata: bytes(metadata_json),
        flags: if is_static { 1 << 2 } else { 0 },
        method: method.0,
    };
    // SAFETY: a valid record whose strings and value outlive the call; the
    // core copies the strings and takes its own reference to the value.
    let rc = unsafe { TVMFFITypeRegisterMethod(type_index, &info) };
    check(py, rc)
}
