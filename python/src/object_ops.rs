//! Operations on wrappers and types that the pure-Python layer calls
//! directly: moving a handle from one wrapper to another
//! (`Object.__move_handle_from__`) and registering a type attribute
//! (`tether.core._register_type_attr`, the core's `TVMFFITypeRegisterAttr`).
//!
//! SAFETY invariants of this module: wrappers are checked to be wrappers
//! (the `CObject` layout) before their fields are read; the GIL is held.

use std::sync::atomic::Ordering;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use tether_sys::abi::TVMFFIByteArray;
use tether_sys::*;

use crate::convert::{self, handle_of};
use crate::error_bridge::check;
use crate::tie_state::{self, CObject};

/// `_ffi.move_handle(dst, src)`: `dst` (a wrapper without a handle)
/// becomes the wrapper of `src`'s object, taking over `src`'s +1 and, if
/// `src` was canonical, its binding; `src` is left moved-from (no handle).
#[pyfunction]
pub fn move_handle(dst: &Bound<'_, PyAny>, src: &Bound<'_, PyAny>) -> PyResult<()> {
    let (dst, src) = (crate::wrapper(dst)?, crate::wrapper(src)?);
    let (d, s) = (dst.as_ptr() as *mut CObject, src.as_ptr() as *mut CObject);
    // SAFETY: both are wrappers (checked above), so both have the CObject
    // layout; GIL held.
    unsafe {
        if !(*d).chandle.is_null() {
            return Err(PyTypeError::new_err(format!(
                "cannot move a handle into a {} object that already has one",
                convert::type_name(dst)
            )));
        }
        let h = handle_of(src)?;
        if (*s).borrows.load(Ordering::Acquire) > 0 {
            return Err(PyValueError::new_err(format!(
                "cannot move the handle of a {} object that a running call holds by reference",
                convert::type_name(src)
            )));
        }
        // `dst` holds the handle before it may become canonical, and `src`
        // loses it only after the binding moved (tie_state::move_binding).
        (*d).chandle = h;
        if !tie_state::move_binding(h, src.as_ptr(), dst.as_ptr()) {
            (*d).chandle = std::ptr::null_mut();
            return Err(PyValueError::new_err(format!(
                "cannot move the handle of a {} object that is being moved into a running call",
                convert::type_name(src)
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
    let v = convert::py_to_any(py, value)?;
    let n = TVMFFIByteArray { data: name.as_ptr() as *const _, size: name.len() };
    // SAFETY: a valid name and value, alive for the call; the core copies
    // the value (taking its own reference) and does not keep the name.
    let rc = unsafe { TVMFFITypeRegisterAttr(type_index, &n, &v.0) };
    check(py, rc)
}
