//! Wrapper classes: the base type `CObject` with the tying slots, and the
//! functions `tether.core` uses to give its classes native slots and to
//! register them in the class table.

use std::ffi::c_void;
use std::ptr;

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::convert::registry;
use crate::module::{descriptor, seq_index};
use crate::tie::tie_state::{self, CObject};

/// Create the wrapper base type with our slots.
pub(crate) fn make_base_type(py: Python<'_>) -> PyResult<Py<PyType>> {
    // Weak references for every wrapper class, lean ones included.
    let mut members = [
        ffi::PyMemberDef {
            name: c"__weaklistoffset__".as_ptr(),
            type_code: ffi::Py_T_PYSSIZET,
            offset: std::mem::offset_of!(CObject, weaklist) as ffi::Py_ssize_t,
            flags: ffi::Py_READONLY,
            doc: ptr::null(),
        },
        ffi::PyMemberDef::default(),
    ];
    let mut slots = [
        ffi::PyType_Slot { slot: ffi::Py_tp_dealloc, pfunc: tie_state::tp_dealloc as *mut c_void },
        ffi::PyType_Slot { slot: ffi::Py_tp_alloc, pfunc: tie_state::tp_alloc as *mut c_void },
        ffi::PyType_Slot { slot: ffi::Py_tp_free, pfunc: tie_state::tp_free as *mut c_void },
        ffi::PyType_Slot { slot: ffi::Py_tp_new, pfunc: ffi::PyType_GenericNew as *mut c_void },
        ffi::PyType_Slot { slot: ffi::Py_tp_members, pfunc: members.as_mut_ptr() as *mut c_void },
        ffi::PyType_Slot { slot: 0, pfunc: ptr::null_mut() },
    ];
    let mut spec = ffi::PyType_Spec {
        name: c"tether._ffi.CObject".as_ptr(),
        basicsize: std::mem::size_of::<CObject>() as i32,
        itemsize: 0,
        // Not a GC type: a wrapper holds no Python reference but its type
        // (subclasses that add storage become GC types; see
        // `tie_state::install_slots`).
        flags: (ffi::Py_TPFLAGS_DEFAULT | ffi::Py_TPFLAGS_BASETYPE) as u32,
        slots: slots.as_mut_ptr(),
    };
    // SAFETY: a valid spec; the result is a new reference or NULL.
    let t = unsafe { ffi::PyType_FromSpec(&mut spec) };
    if t.is_null() {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: a new reference to a type object.
    Ok(unsafe { Bound::from_owned_ptr(py, t).cast_into_unchecked::<PyType>() }.unbind())
}

/// Give a subclass of CObject the tying slots (called by `__init_subclass__`).
#[pyfunction]
pub(crate) fn install_slots(py: Python<'_>, cls: &Bound<'_, PyType>) -> PyResult<()> {
    if !cls.is_subclass(registry::base(py))? {
        return Err(PyTypeError::new_err(format!("{} is not a subclass of tether.Object", cls.name()?)));
    }
    // SAFETY: a subclass of CObject has the CObject layout.
    unsafe { tie_state::install_slots(cls.as_ptr() as *mut ffi::PyTypeObject) };
    Ok(())
}

/// Give a field descriptor class the native read slot.
#[pyfunction]
pub(crate) fn install_field_get(cls: &Bound<'_, PyType>) -> PyResult<()> {
    descriptor::install_field_get(cls)
}

/// Give an Array or List wrapper class the native `a[i]`.
#[pyfunction]
pub(crate) fn install_seq_getitem(py: Python<'_>, cls: &Bound<'_, PyType>) -> PyResult<()> {
    seq_index::install(py, cls)
}

#[pyfunction]
pub(crate) fn register_class(py: Python<'_>, type_index: i32, cls: &Bound<'_, PyType>) -> PyResult<()> {
    registry::register(py, type_index, cls)
}

#[pyfunction]
pub(crate) fn registered_class(py: Python<'_>, type_index: i32) -> Option<Py<PyType>> {
    registry::registered_class(py, type_index).map(|c| c.unbind())
}

#[pyfunction]
pub(crate) fn set_class_factory(py: Python<'_>, f: Py<PyAny>) -> PyResult<()> {
    registry::set_factory(py, f)
}
