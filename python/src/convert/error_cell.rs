//! Reading and updating an `ffi.Error`'s cell from Python: its kind and
//! message, its backtrace (and replacing or extending it, through the
//! cell's own `update_backtrace`, as a Python traceback joins it), and the
//! payload in `extra_context`.
//!
//! Invariant: every function checks that the handle is a live `ffi.Error`
//! before reading the cell that follows its object header.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use tether_sys::abi::{type_index as ti, TVMFFIByteArray, TVMFFIErrorCell, TVMFFIObject};
use tether_sys::{TVMFFIObjectIncRef, TetherFFIBacktraceResolve};

use crate::convert::error_bridge::take_ffi_error;
use crate::convert::owned_any::OwnedAny;
use crate::convert::registry;
use crate::convert::wrapper_access::handle_of;
use crate::convert::wrapper_access::wrapper;
use crate::core_link::byte_array;

/// The Error cell of a wrapper, or TypeError for any other object.
fn cell<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<(*mut TVMFFIObject, &'a TVMFFIErrorCell)> {
    let h = handle_of(wrapper(obj)?)?;
    // SAFETY: live handle (the wrapper owns +1 while `obj` is borrowed).
    if unsafe { (*h).type_index } != ti::kTVMFFIError {
        // SAFETY: as above.
        let key = registry::type_key_of(unsafe { (*h).type_index });
        return Err(PyTypeError::new_err(format!("expected ffi.Error, got {key}")));
    }
    // SAFETY: checked to be an Error, whose cell follows the header and
    // lives as long as the object (kept by `obj`).
    let c = unsafe { &*((h as *const u8).add(std::mem::size_of::<TVMFFIObject>()) as *const TVMFFIErrorCell) };
    Ok((h, c))
}

/// `(kind, message)` of an `ffi.Error` wrapper.
#[pyfunction]
pub fn error_parts(obj: &Bound<'_, PyAny>) -> PyResult<(String, String)> {
    let (_, c) = cell(obj)?;
    // SAFETY: the cell's byte arrays live as long as the object.
    Ok(unsafe { (registry::bytes_to_string(&c.kind), registry::bytes_to_string(&c.message)) })
}

/// The backtrace text of an `ffi.Error` wrapper, its native frames
/// resolved (they are kept as addresses until read).
#[pyfunction]
pub fn error_backtrace(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    let (_, c) = cell(obj)?;
    // SAFETY: as in `error_parts`.
    let text = unsafe { registry::bytes_to_string(&c.backtrace) };
    if !text.contains(UNRESOLVED_FRAME) {
        return Ok(text);
    }
    let input = byte_array(&text);
    let mut out = TVMFFIByteArray::EMPTY;
    // SAFETY: a byte array valid for the call and an output slot; the
    // result lives in the core's thread-local buffer until this thread's
    // next call, and is copied out at once.
    let rc = unsafe { TetherFFIBacktraceResolve(&input, &mut out) };
    if rc != 0 {
        return Err(take_ffi_error(obj.py()));
    }
    // SAFETY: as above.
    Ok(unsafe { registry::bytes_to_string(&out) })
}

/// How the core writes a native frame not yet resolved (c_api.h).
const UNRESOLVED_FRAME: &str = "File \"<unresolved>\"";

/// An `ffi.Error` wrapper's backtrace as stored (native frames not resolved).
pub fn error_backtrace_raw(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    let (_, c) = cell(obj)?;
    // SAFETY: the cell's byte array lives as long as the object.
    Ok(unsafe { registry::bytes_to_string(&c.backtrace) })
}

/// How many lines an `ffi.Error` wrapper's backtrace holds (read as it is,
/// nothing resolved).
pub fn error_backtrace_lines(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    let (_, c) = cell(obj)?;
    if c.backtrace.size == 0 || c.backtrace.data.is_null() {
        return Ok(0);
    }
    // SAFETY: the cell's byte array lives as long as the object.
    let bytes = unsafe { std::slice::from_raw_parts(c.backtrace.data as *const u8, c.backtrace.size) };
    Ok(bytes.iter().filter(|&&b| b == b'\n').count())
}

/// Replace (`append` false) or extend the error's backtrace with `text`.
#[pyfunction]
pub fn error_update_backtrace(obj: &Bound<'_, PyAny>, text: &str, append: bool) -> PyResult<()> {
    let (h, c) = cell(obj)?;
    let update = c.update_backtrace.ok_or_else(|| PyValueError::new_err("this ffi.Error cannot update its backtrace"))?;
    let bytes = byte_array(text);
    // SAFETY: the cell's own update function, called on its object with a
    // byte array valid for the call (mode 0 replaces, 1 appends).
    unsafe { update(h as *mut _, &bytes, i32::from(append)) };
    Ok(())
}

/// The object attached as the error's extra context, or None.
#[pyfunction]
pub fn error_extra_context(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let (_, c) = cell(obj)?;
    let ctx = c.extra_context as *mut TVMFFIObject;
    if ctx.is_null() {
        return Ok(py.None());
    }
    // SAFETY: a live object the error holds; take our own reference for
    // the value handed to Python.
    unsafe { TVMFFIObjectIncRef(ctx as *mut _) };
    crate::convert::ffi_to_py::any_to_py(py, OwnedAny::from_handle(ctx))
}
