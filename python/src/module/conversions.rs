//! Conversions asked for by name from Python: a value to its FFI value and
//! back (`tether.convert`), and a value as the FFI object it converts to.

use pyo3::prelude::*;
use tether_sys::abi::type_index as ti;

use crate::convert::ffi_to_py;
use crate::convert::owned_any::OwnedAny;
use crate::convert::py_to_ffi;
use crate::convert::registry;
use crate::tie::tie_state;

/// Convert a Python value to an FFI value and back (lists become Arrays…).
#[pyfunction]
#[pyo3(name = "convert")]
pub(crate) fn convert_value(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let v = py_to_ffi::py_to_any(py, value)?;
    ffi_to_py::any_to_py(py, v)
}

/// `_ffi.to_object(value)`: the FFI object a value converts to, as a
/// wrapper: strings and bytes stored out of line come back as their
/// `ffi.String`/`ffi.Bytes` object, tied as any object is (other values as
/// `any_to_py` returns them; None for inline strings).
#[pyfunction]
pub fn to_object(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let v = py_to_ffi::py_to_any(py, value)?;
    match v.0.type_index {
        ti::kTVMFFIStr | ti::kTVMFFIBytes => {
            let raw = v.into_raw();
            // SAFETY: an owned object value; its +1 moves into the wrapper.
            unsafe {
                let cls = registry::class_for(py, raw.type_index).inspect_err(|_| drop(OwnedAny(raw)))?;
                let obj = tie_state::make_ret_object(raw.value.v_obj, cls);
                if obj.is_null() {
                    return Err(PyErr::fetch(py));
                }
                Ok(Bound::from_owned_ptr(py, obj).unbind())
            }
        }
        ti::kTVMFFISmallStr | ti::kTVMFFISmallBytes => Ok(py.None()),
        _ => ffi_to_py::any_to_py(py, v),
    }
}
