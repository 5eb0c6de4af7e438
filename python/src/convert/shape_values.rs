//! Shapes coming back from the FFI, as TVM-FFI's Python layer returns them.
//!
//! An `ffi.Shape` object (type index 69) comes back as an instance of
//! `tether.Shape`, a `tuple` subclass of its dimensions whose
//! `_tvm_ffi_cached_object` holds a wrapper of the object, so passing the
//! tuple back passes that object (not a new Array). As for heap strings,
//! the wrapper is not tied (value-typed, no identity): a fresh, unbound
//! wrapper owning +1 on the object. The class builds its instances itself
//! (`Shape.__from_tvm_ffi_object__(wrapper)`), registered once by
//! `tether.container` ([`register_shape_class`]); until then shapes come
//! back as their plain wrappers.
//!
//! SAFETY invariants of this module: functions run with the GIL held; the
//! registered class is kept alive forever (the slot holds a reference that
//! is never released).

use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyTuple, PyType};
use pyo3::ffi;
use tether_sys::abi::{type_index as ti, TVMFFIObject};

use crate::convert::owned_any::OwnedAny;
use crate::convert::registry;
use crate::convert::wrapper_access::cached_object;
use crate::tie::tie_state;

/// `tether.Shape` (NULL until registered).
static SHAPE_CLASS: AtomicPtr<ffi::PyTypeObject> = AtomicPtr::new(ptr::null_mut());

/// `_ffi.register_shape_class(Shape)`: the `tuple` subclass shapes come back
/// as. A later call replaces the earlier class (which stays alive: values
/// of it may exist).
#[pyfunction]
pub fn register_shape_class(cls: &Bound<'_, PyType>) -> PyResult<()> {
    let py = cls.py();
    if !cls.is_subclass(&py.get_type::<PyTuple>())? {
        return Err(PyTypeError::new_err(format!("{} is not a subclass of tuple", cls.name()?)));
    }
    if !cls.hasattr(pyo3::intern!(py, "__from_tvm_ffi_object__"))? {
        return Err(PyTypeError::new_err(format!("{} has no __from_tvm_ffi_object__", cls.name()?)));
    }
    // Kept forever: released nowhere (module invariant).
    SHAPE_CLASS.store(cls.clone().into_ptr() as *mut ffi::PyTypeObject, Ordering::Release);
    Ok(())
}

/// Whether `obj` is a `tether.Shape` value (an instance of the registered
/// class or of a subclass).
pub fn is_shape_value(obj: &Bound<'_, PyAny>) -> bool {
    let cls = SHAPE_CLASS.load(Ordering::Acquire);
    // SAFETY: a live object and a live type; GIL held.
    !cls.is_null() && unsafe { ffi::PyObject_TypeCheck(obj.as_ptr(), cls) } != 0
}

/// The object a `tether.Shape` value holds, as an owned value; None for
/// anything else (and for a Shape whose cached object is not a wrapper:
/// it then converts as the tuple it is).
pub fn shape_value_object(obj: &Bound<'_, PyAny>) -> PyResult<Option<OwnedAny>> {
    if !is_shape_value(obj) {
        return Ok(None);
    }
    cached_object(obj)
}

/// Convert the Shape object `h` (the caller's +1 is consumed) to a
/// `tether.Shape` holding an untied wrapper of it, or to that wrapper alone
/// before the class is registered.
///
/// # Safety
/// GIL held; `h` a live Shape object on which the caller owns +1.
pub unsafe fn shape_object_to_py(py: Python<'_>, h: *mut TVMFFIObject) -> PyResult<Py<PyAny>> {
    // SAFETY: per the caller; the +1 on `h` moves into the wrapper (or is
    // dropped by untied_wrapper on failure) exactly once.
    unsafe {
        debug_assert_eq!((*h).type_index, ti::kTVMFFIShape);
        let wrapper_cls = match registry::class_for(py, ti::kTVMFFIShape) {
            Ok(c) => c,
            Err(e) => {
                drop(OwnedAny::from_handle(h));
                return Err(e);
            }
        };
        let wrapper = tie_state::untied_wrapper(h, wrapper_cls);
        if wrapper.is_null() {
            return Err(PyErr::fetch(py));
        }
        let wrapper: Py<PyAny> = Bound::from_owned_ptr(py, wrapper).unbind();
        let cls = SHAPE_CLASS.load(Ordering::Acquire);
        if cls.is_null() {
            return Ok(wrapper);
        }
        let cls = Bound::from_borrowed_ptr(py, cls as *mut ffi::PyObject);
        Ok(cls.call_method1(pyo3::intern!(py, "__from_tvm_ffi_object__"), (wrapper,))?.unbind())
    }
}
