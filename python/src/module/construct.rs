//! `construct`: binding a freshly constructed object to the wrapper
//! `__init__` runs on (re-initialising it when it already has a handle).

use std::ffi::c_void;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use tether_sys::abi::{type_index as ti, TVMFFIAny};
use tether_sys::*;

use crate::convert::error_bridge;
use crate::convert::owned_any::{OwnedAny, OwnedArgs};
use crate::convert::py_to_ffi;
use crate::convert::wrapper_access::{handle_of, type_name, wrapper};
use crate::tie::tie_state::{self, CObject};

/// Bind a freshly constructed handle to `obj`: call `init(*values)` and
/// move the resulting object's handle into the wrapper. A wrapper that has
/// a handle already is re-initialised, as TVM-FFI does: it becomes the
/// canonical wrapper of the new object and releases the old one (whose
/// binding to it is cleared first, so a later return of the old object
/// gets a wrapper of its own). Refused while a running call holds the old
/// handle by reference or is taking it by move.
#[pyfunction]
#[pyo3(signature = (obj, init, *values))]
pub(crate) fn construct(py: Python<'_>, obj: &Bound<'_, PyAny>, init: &Bound<'_, PyAny>, values: &Bound<'_, PyTuple>) -> PyResult<()> {
    let o = wrapper(obj)?.as_ptr() as *mut CObject;
    let held_by_a_call = || {
        // SAFETY: a wrapper has the CObject layout; GIL held.
        let (old, borrows) = unsafe { ((*o).chandle, (*o).borrows.load(std::sync::atomic::Ordering::Acquire)) };
        if !old.is_null() && borrows > 0 {
            return Err(PyValueError::new_err(format!(
                "cannot re-initialise a {} object that a running call holds by reference",
                type_name(obj)
            )));
        }
        Ok(())
    };
    held_by_a_call()?;
    let f = handle_of(wrapper(init)?)?;
    let mut args = OwnedArgs::new();
    for v in values.iter() {
        args.push(py_to_ffi::py_to_any(py, &v)?);
    }
    let raw = args.as_mut_slice();
    let mut result = TVMFFIAny::NONE;
    // SAFETY: `args` keeps the arguments alive.
    let rc = unsafe { TVMFFIFunctionCall(f as *mut c_void, raw.as_mut_ptr(), raw.len() as i32, &mut result) };
    drop(args);
    if rc != 0 {
        return Err(error_bridge::take_ffi_error(py));
    }
    if result.type_index < ti::kTVMFFIStaticObjectBegin {
        drop(OwnedAny(result));
        return Err(PyTypeError::new_err("constructor did not return an object"));
    }
    let fresh = OwnedAny(result);
    // The constructor ran Python code (callbacks, field converters): check
    // again before the old handle is let go.
    held_by_a_call()?;
    // SAFETY: GIL held; `obj` owns +1 on `old` (when not NULL) until it is
    // released at the end; the fresh result's +1 moves into the wrapper,
    // which is then bound as canonical (the handle is new, so it has no
    // other wrapper).
    unsafe {
        let old = (*o).chandle;
        if !old.is_null() && !tie_state::release_binding(old, obj.as_ptr()) {
            drop(fresh);
            return Err(PyValueError::new_err(format!(
                "cannot re-initialise a {} object whose handle a running call is taking by move",
                type_name(obj)
            )));
        }
        let h = fresh.0.value.v_obj;
        std::mem::forget(fresh);
        (*o).chandle = h;
        tie_state::bind_if_detached(h, obj.as_ptr());
        if !old.is_null() {
            // Outside any binding lock: the old object may be destroyed here.
            TVMFFIObjectDecRef(old as *mut c_void);
        }
    }
    Ok(())
}
