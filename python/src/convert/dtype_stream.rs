//! Data types and the current device stream, as TVM-FFI's C ABI keeps
//! them: parsing and printing dtype spellings, and the per-device stream
//! kernels launched through the FFI use.

use std::ffi::c_void;
use std::ptr;

use pyo3::prelude::*;
use tether_sys::abi::{TVMFFIAny, TVMFFIByteArray};
use tether_sys::dlpack::DLDataType;
use tether_sys::*;

use crate::convert::error_bridge::take_ffi_error;
use crate::convert::ffi_to_py;
use crate::convert::owned_any::OwnedAny;

/// `(code, bits, lanes)` of a dtype spelling.
#[pyfunction]
pub fn dtype_parse(py: Python<'_>, text: &str) -> PyResult<(u8, u8, u16)> {
    let s = TVMFFIByteArray { data: text.as_ptr() as *const _, size: text.len() };
    let mut out = DLDataType { code: 0, bits: 0, lanes: 0 };
    // SAFETY: valid byte array and output slot.
    if unsafe { TVMFFIDataTypeFromString(&s, &mut out) } != 0 {
        return Err(take_ffi_error(py));
    }
    Ok((out.code, out.bits, out.lanes))
}

/// The canonical spelling of a dtype.
#[pyfunction]
pub fn dtype_format(py: Python<'_>, code: u8, bits: u8, lanes: u16) -> PyResult<Py<PyAny>> {
    let dt = DLDataType { code, bits, lanes };
    let mut out = TVMFFIAny::NONE;
    // SAFETY: valid input and output slot.
    if unsafe { TVMFFIDataTypeToString(&dt, &mut out) } != 0 {
        return Err(take_ffi_error(py));
    }
    ffi_to_py::any_to_py(py, OwnedAny(out))
}

/// Set the current stream of a device; returns the previous one.
#[pyfunction]
pub fn env_set_stream(py: Python<'_>, device_type: i32, device_id: i32, stream: usize) -> PyResult<usize> {
    let mut prev: *mut c_void = ptr::null_mut();
    // SAFETY: plain values and an output slot.
    if unsafe { TVMFFIEnvSetStream(device_type, device_id, stream as *mut c_void, &mut prev) } != 0 {
        return Err(take_ffi_error(py));
    }
    Ok(prev as usize)
}

/// The current stream of a device (0 when none was set).
#[pyfunction]
pub fn env_get_stream(device_type: i32, device_id: i32) -> usize {
    // SAFETY: plain values.
    unsafe { TVMFFIEnvGetStream(device_type, device_id) as usize }
}
