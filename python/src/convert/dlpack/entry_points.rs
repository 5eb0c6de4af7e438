//! The DLPack calls Python makes once per tensor, done natively so they
//! cost one call instead of a Python frame around one: `from_dlpack` with
//! its argument checks (an FFI Tensor is returned as it is), and a Tensor's
//! `(device_type, device_id)` for `__dlpack_device__` (which consumers such
//! as `numpy.from_dlpack` ask before every import).
//!
//! SAFETY invariants: as in the parent module (GIL held).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyTuple};
use tether_sys::abi::{type_index as ti, TVMFFIObject};
use tether_sys::dlpack::DLTensor;

use super::tensor_import::{tensor_from_py, tensor_handle};
use crate::convert::ffi_to_py;
use crate::convert::wrapper_access::handle_of;

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
) -> PyResult<Py<PyAny>> {
    if crate::convert::registry::is_wrapper(ext_tensor) {
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
    ffi_to_py::any_to_py(py, t)
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

/// `from_dlpack` for Python.
#[pyfunction]
pub fn tensor_from_dlpack(py: Python<'_>, obj: &Bound<'_, PyAny>, require_alignment: i32, require_contiguous: bool) -> PyResult<Py<PyAny>> {
    let t = tensor_from_py(py, obj, require_alignment, require_contiguous)?;
    ffi_to_py::any_to_py(py, t)
}

/// `(data, (device_type, device_id), ndim, (code, bits, lanes), shape,
/// strides, byte_offset)` of a Tensor; strides are made compact row-major
/// when the tensor has none.
#[pyfunction]
pub fn tensor_info<'py>(py: Python<'py>, t: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
    let h = tensor_handle(t)?;
    // SAFETY: a Tensor's DLTensor follows its object header and lives as
    // long as the object, which the wrapper keeps alive.
    let dl = unsafe { &*((h as *const u8).add(std::mem::size_of::<TVMFFIObject>()) as *const DLTensor) };
    let ndim = dl.ndim.max(0) as usize;
    // SAFETY: shape (and strides, when present) hold ndim entries.
    let shape: Vec<i64> = if ndim == 0 { Vec::new() } else { unsafe { std::slice::from_raw_parts(dl.shape, ndim) }.to_vec() };
    let strides: Vec<i64> = if dl.strides.is_null() || ndim == 0 {
        let mut s = vec![1i64; ndim];
        for i in (0..ndim.saturating_sub(1)).rev() {
            s[i] = s[i + 1] * shape[i + 1];
        }
        s
    } else {
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts(dl.strides, ndim) }.to_vec()
    };
    PyTuple::new(
        py,
        [
            (dl.data as usize).into_pyobject(py)?.into_any(),
            (dl.device.device_type, dl.device.device_id).into_pyobject(py)?.into_any(),
            dl.ndim.into_pyobject(py)?.into_any(),
            (dl.dtype.code, dl.dtype.bits, dl.dtype.lanes).into_pyobject(py)?.into_any(),
            PyTuple::new(py, shape)?.into_any(),
            PyTuple::new(py, strides)?.into_any(),
            dl.byte_offset.into_pyobject(py)?.into_any(),
        ],
    )
}
