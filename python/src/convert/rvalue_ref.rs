//! `x._move()`: an argument or callback result that passes `x`'s handle
//! as an rvalue reference (the handle moves out of `x`).

use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;

use crate::convert::owned_any::OwnedAny;
use crate::convert::wrapper_access::{handle_of, type_name, wrapper};
use crate::tie::tie_state::{self, CObject};

/// `x._move()`: passes `x`'s handle to a call as an rvalue reference.
/// Final (no Python subclasses), so its instances are recognised by their
/// exact type.
#[pyclass(module = "tether._ffi", frozen)]
pub struct RValueRef {
    pub target: Py<PyAny>,
}

#[pymethods]
impl RValueRef {
    #[new]
    fn new(target: &Bound<'_, PyAny>) -> PyResult<Self> {
        wrapper(target)?;
        handle_of(target)?;
        Ok(RValueRef { target: target.clone().unbind() })
    }
}

/// The `RValueRef` type object, recorded at module initialisation: calls
/// and conversions ask "is this a move?" of every argument that is not a
/// plain value or a wrapper, and a pointer comparison answers without
/// pyo3's lazy type lookup and subtype walk.
static RVALUE_REF_TYPE: AtomicPtr<ffi::PyTypeObject> = AtomicPtr::new(ptr::null_mut());

/// Records the `RValueRef` type object (module initialisation).
pub fn record_type(py: Python<'_>) {
    RVALUE_REF_TYPE.store(py.get_type::<RValueRef>().as_ptr() as *mut ffi::PyTypeObject, Ordering::Relaxed);
}

/// `obj` as an `RValueRef`, if it is one.
pub fn as_rvalue_ref<'a, 'py>(obj: &'a Bound<'py, PyAny>) -> Option<&'a Bound<'py, RValueRef>> {
    // SAFETY: `obj` is live; an exact match of the final type is an instance.
    unsafe { is_rvalue_ref_ptr(obj.as_ptr()).then(|| obj.cast_unchecked::<RValueRef>()) }
}

/// Whether `obj` is an `RValueRef`.
///
/// # Safety
/// `obj` is a live object.
#[inline]
pub unsafe fn is_rvalue_ref_ptr(obj: *mut ffi::PyObject) -> bool {
    let tp = RVALUE_REF_TYPE.load(Ordering::Relaxed);
    // SAFETY: reading the type of a live object (per the caller).
    !tp.is_null() && unsafe { ffi::Py_TYPE(obj) } == tp
}

/// A callback's result `x._move()`: the handle moves out of `x` into the
/// result (`x` is left without a handle), as TVM-FFI does.
pub fn move_out(r: &Bound<'_, RValueRef>) -> PyResult<OwnedAny> {
    let target = r.get().target.bind(r.py()).clone();
    let h = handle_of(&target)?;
    let o = target.as_ptr() as *mut CObject;
    // SAFETY: a wrapper (checked at construction); GIL held.
    unsafe {
        if (*o).borrows.load(std::sync::atomic::Ordering::Acquire) > 0 {
            return Err(PyValueError::new_err(format!(
                "cannot move a {} object that a running call holds by reference",
                type_name(&target)
            )));
        }
        tie_state::detach(h, target.as_ptr());
        (*o).chandle = ptr::null_mut();
    }
    Ok(OwnedAny::from_handle(h))
}
