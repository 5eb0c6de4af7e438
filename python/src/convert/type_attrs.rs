//! Attribute lookups on a Python type along its MRO, without the instance
//! and without raising on a miss: conversions ask "does this type speak
//! protocol X?" of every value that is not a plain one, and `hasattr`
//! would format an AttributeError for each miss.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;

extern "C" {
    /// CPython's attribute lookup along a type's MRO (borrowed result,
    /// NULL when absent, no exception): cheaper than `hasattr`, which
    /// formats an AttributeError for every miss.
    fn _PyType_Lookup(tp: *mut ffi::PyTypeObject, name: *mut ffi::PyObject) -> *mut ffi::PyObject;
}

/// The attribute `name` of type `tp` along its MRO, borrowed; NULL when
/// absent (no exception).
///
/// # Safety
/// GIL held; `tp` a live type.
pub unsafe fn type_lookup(tp: *mut ffi::PyTypeObject, name: &Bound<'_, PyString>) -> *mut ffi::PyObject {
    // SAFETY: per the caller; an interned string.
    unsafe { _PyType_Lookup(tp, name.as_ptr()) }
}

/// Whether the type of `obj` has the attribute `name` (no exception on a miss).
pub fn type_has_attr(obj: &Bound<'_, PyAny>, name: &Bound<'_, PyString>) -> bool {
    // SAFETY: a live object's type; the result is only compared.
    unsafe { !type_lookup(ffi::Py_TYPE(obj.as_ptr()), name).is_null() }
}
