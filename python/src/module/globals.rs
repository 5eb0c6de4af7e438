//! Global functions and direct calls: looking up and registering global
//! functions, calling a Function wrapper, a Function over a library
//! symbol, new Error objects, and the Python hooks `tether.core` installs.

use std::ffi::c_void;
use std::ptr;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use tether_sys::abi::{type_index as ti, TVMFFIObject, TVMFFISafeCallType};
use tether_sys::*;

use crate::call::{function_type, native_call};
use crate::convert::error_bridge;
use crate::convert::ffi_to_py;
use crate::convert::owned_any::OwnedAny;
use crate::convert::py_to_ffi;
use crate::convert::python_hooks;
use crate::convert::sequence_build;
use crate::convert::wrapper_access::{handle_of, type_name, wrapper};
use crate::core_link::byte_array;

/// The handle of a Function wrapper (a TypeError for anything else).
fn function_handle(f: &Bound<'_, PyAny>) -> PyResult<*mut TVMFFIObject> {
    let h = handle_of(wrapper(f)?)?;
    // SAFETY: live handle.
    if unsafe { (*h).type_index } != ti::kTVMFFIFunction {
        return Err(PyTypeError::new_err(format!("{} object is not an ffi.Function", type_name(f))));
    }
    Ok(h)
}

/// Call a Function wrapper.
#[pyfunction]
#[pyo3(signature = (f, *args))]
pub(crate) fn call(py: Python<'_>, f: &Bound<'_, PyAny>, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let h = function_handle(f)?;
    // SAFETY: `f` is a live wrapper.
    native_call::call_function(py, h, args, unsafe { function_type::release_gil_of(f.as_ptr()) })
}

/// Call a Function wrapper with a dict's items as its arguments, key then
/// value (`ffi.Map`/`ffi.Dict` from a dict), without building the flat
/// argument list in Python. The items are referenced before any is
/// converted, so a conversion that runs Python code cannot change what is
/// passed.
#[pyfunction]
pub(crate) fn call_pairs(py: Python<'_>, f: &Bound<'_, PyAny>, mapping: &Bound<'_, PyDict>) -> PyResult<Py<PyAny>> {
    let h = function_handle(f)?;
    let mut items = Vec::with_capacity(mapping.len().saturating_mul(2));
    for (k, v) in mapping.iter() {
        items.push(k);
        items.push(v);
    }
    let args: Vec<*mut pyo3::ffi::PyObject> = items.iter().map(|o| o.as_ptr()).collect();
    // SAFETY: `f` is a live wrapper; `items` keeps every argument alive.
    native_call::call_function_args(py, h, &args, unsafe { function_type::release_gil_of(f.as_ptr()) })
}

/// `Array(items)`/`List(items)` of a list or tuple (`type_index` says
/// which): built in one crossing (`convert::sequence_build`), or, when an
/// item is a move (`x._move()`), by calling `f` (`ffi.Array`/`ffi.List`)
/// with the items as arguments, which moves them once every conversion
/// succeeded.
#[pyfunction]
pub(crate) fn call_seq(py: Python<'_>, f: &Bound<'_, PyAny>, items: &Bound<'_, PyAny>, type_index: i32) -> PyResult<Py<PyAny>> {
    if let Some(made) = sequence_build::build(py, items, type_index)? {
        return Ok(made);
    }
    let h = function_handle(f)?;
    let tuple = match items.cast::<PyTuple>() {
        Ok(t) => t.clone(),
        Err(_) => match items.cast::<PyList>() {
            Ok(l) => l.to_tuple(),
            Err(_) => return Err(PyTypeError::new_err(format!("expected a list or tuple, got {}", type_name(items)))),
        },
    };
    // SAFETY: `f` is a live wrapper; `tuple` keeps its items alive.
    native_call::call_function(py, h, &tuple, unsafe { function_type::release_gil_of(f.as_ptr()) })
}

/// A global function wrapper, or None.
#[pyfunction]
pub(crate) fn get_global(py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
    let n = byte_array(name);
    let mut out: *mut c_void = ptr::null_mut();
    // SAFETY: valid name and output slot.
    if unsafe { TVMFFIFunctionGetGlobal(&n, &mut out) } != 0 {
        return Err(error_bridge::take_ffi_error(py));
    }
    if out.is_null() {
        return Ok(py.None());
    }
    ffi_to_py::any_to_py(py, OwnedAny::from_handle(out as *mut TVMFFIObject))
}

#[pyfunction]
#[pyo3(signature = (name, f, allow_override=false))]
pub(crate) fn set_global(py: Python<'_>, name: &str, f: &Bound<'_, PyAny>, allow_override: bool) -> PyResult<()> {
    let v = py_to_ffi::py_to_any(py, f)?;
    if v.0.type_index != ti::kTVMFFIFunction {
        return Err(PyTypeError::new_err(format!("register_global_func needs a callable, got {}", type_name(f))));
    }
    let n = byte_array(name);
    // SAFETY: valid name; the registry takes its own reference.
    let rc = unsafe { TVMFFIFunctionSetGlobal(&n, v.0.value.v_obj as *mut c_void, allow_override as i32) };
    if rc != 0 {
        return Err(error_bridge::take_ffi_error(py));
    }
    Ok(())
}

/// A Function over a `TVMFFISafeCallType` symbol of a loaded library.
#[pyfunction]
pub(crate) fn function_from_symbol(py: Python<'_>, address: usize) -> PyResult<Py<PyAny>> {
    if address == 0 {
        return Err(PyValueError::new_err("symbol address is NULL"));
    }
    // SAFETY: the caller passes the address of a safe-call function.
    let call: TVMFFISafeCallType = unsafe { std::mem::transmute(address) };
    let mut out: *mut c_void = ptr::null_mut();
    // SAFETY: a valid safe-call; no self, no deleter.
    if unsafe { TVMFFIFunctionCreate(ptr::null_mut(), Some(call), None, &mut out) } != 0 {
        return Err(error_bridge::take_ffi_error(py));
    }
    ffi_to_py::any_to_py(py, OwnedAny::from_handle(out as *mut TVMFFIObject))
}

#[pyfunction]
pub(crate) fn set_hooks(py: Python<'_>, error_from_ffi: Py<PyAny>, error_kind: Py<PyAny>, value_from_protocol: Py<PyAny>) -> PyResult<()> {
    python_hooks::set_hooks(py, python_hooks::Hooks { error_from_ffi, error_kind, value_from_protocol })
}

/// A new `ffi.Error` object.
#[pyfunction]
pub(crate) fn error_new(py: Python<'_>, kind: &str, message: &str, backtrace: &str) -> PyResult<Py<PyAny>> {
    let (k, m, b) = (byte_array(kind), byte_array(message), byte_array(backtrace));
    let mut out: *mut c_void = ptr::null_mut();
    // SAFETY: valid byte arrays and output slot.
    if unsafe { TVMFFIErrorCreate(&k, &m, &b, &mut out) } != 0 {
        return Err(error_bridge::take_ffi_error(py));
    }
    ffi_to_py::any_to_py(py, OwnedAny::from_handle(out as *mut TVMFFIObject))
}
