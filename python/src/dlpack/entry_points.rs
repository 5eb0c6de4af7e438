//! The DLPack calls Python makes once per tensor, done natively so they
//! cost one call instead of a Python frame around one: `from_dlpack` with
//! its argument checks (an FFI Tensor is returned as it is), and a Tensor's
//! `(device_type, device_id)` for `__dlpack_device__` (which consumers such
//! as `numpy.from_dlpack` ask before every import).
//!
//! SAFETY invariants: as in the parent module (GIL held).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt};
use tether_sys::abi::{type_index as ti, TVMFFIObject};
use tether_sys::dlpack::DLTensor;

use super::{tensor_from_py, tensor_handle};
use crate::convert::{self, handle_of};

/// `tether.from_dlpack(ext_tensor, *, require_alignment=0,
/// require_contiguous=False)`: a Tensor sharing memory with `ext_tensor`
/// (anything with `__dlpack__`, or a DLPack capsule).
#[pyfunction]
#[pyo3(signature = (ext_tensor, *, require_alignment = None, require_contiguous = None))]
pub fn from_dlpack(
    py: Python<'_>,
    ext_tensor: &Bound<'_, PyAny>,
    require_alignment: Option<&Bound<'_, PyAny>>,
    require_contiguous: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyObject> {
    if crate::registry::is_wrapper(ext_tensor) {
        if let Ok(h) = handle_of(ext_tensor) {
            // SAFETY: a live handle (the wrapper owns +1).
            if unsafe { (*h).type_index } == ti::kTVMFFITensor {
                return Ok(ext_tensor.clone().unbind());
            }
        }
    }
    let align = match require_alignment {
        None => 0,
        Some(a) => {
            let refuse = || PyValueError::new_err(format!("require_alignment must be a non-negative int, got {}", a.repr().map(|r| r.to_string()).unwrap_or_default()));
            if a.is_instance_of::<PyBool>() || !a.is_instance_of::<PyInt>() {
                return Err(refuse());
            }
            let v: i64 = a.extract()?;
            if v < 0 {
                return Err(refuse());
            }
            i32::try_from(v).map_err(|_| PyValueError::new_err(format!("require_alignment {v} is too large")))?
        }
    };
    let contiguous = match require_contiguous {
        None => false,
        Some(c) => c.is_truthy()?,
    };
    let t = tensor_from_py(py, ext_tensor, align, contiguous)?;
    convert::any_to_py(py, t)
}

/// `(device_type, device_id)` of a Tensor.
#[pyfunction]
pub fn tensor_device(t: &Bound<'_, PyAny>) -> PyResult<(i32, i32)> {
    let h = tensor_handle(t)?;
    // SAFETY: a Tensor's DLTensor follows its object header and lives as
    // long as the object, which the wrapper keeps alive.
    let dl = unsafe { &*((h as *const u8).add(std::mem::size_of::<TVMFFIObject>()) as *const DLTensor) };
    Ok((dl.device.device_type as i32, dl.device.device_id))
}
