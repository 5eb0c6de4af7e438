//! Python values to owned FFI values (`TVMFFIAny`): plain values, wrappers,
//! strings, ints beyond int64, dtype/device values, shapes, nested
//! containers, tensors, exceptions, the conversion protocols, callables,
//! and anything else as an opaque object. Errors cross in
//! [`crate::convert::error_bridge`] and [`crate::convert::exception_to_ffi`];
//! the way back is [`crate::convert::ffi_to_py`].
//!
//! A Python callable becomes an `ffi.Function` through the call layer
//! (`call::callback`), above this one: it installs that conversion through
//! [`install_callable_to_function`] at module start-up.
//!
//! SAFETY invariants of this module: every function taking raw FFI values
//! runs with the GIL held unless it says otherwise; an [`OwnedAny`] owns one
//! strong reference when its type index is an object index.

use std::ffi::c_void;
use std::ptr;
use std::sync::OnceLock;

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyFloat, PyInt, PyString};
use pyo3::ffi;
use tether_sys::abi::{type_index as ti, TVMFFIAny, TVMFFIAnyValue, TVMFFIByteArray, TVMFFIObject};
use tether_sys::*;

use crate::convert::lent_strings;
use crate::convert::error_bridge::check;
use crate::convert::exception_to_ffi::error_from_exception;
use crate::convert::nested;
use crate::convert::opaque_cell::opaque_from_object;
use crate::convert::owned_any::OwnedAny;
use crate::convert::python_hooks;
use crate::convert::registry;
use crate::convert::type_attrs::type_has_attr;
use crate::convert::wrapper_access::{cached_object, handle_of, type_name};
use crate::tie::exit_park;

/// Turns a Python callable into a new `ffi.Function` handle (+1 owned by
/// the caller).
pub type CallableToFunction = fn(Python<'_>, &Bound<'_, PyAny>) -> PyResult<*mut TVMFFIObject>;

static CALLABLE_TO_FUNCTION: OnceLock<CallableToFunction> = OnceLock::new();

/// Installs the callable-to-Function conversion (once, at module
/// initialisation; later calls keep the first).
pub fn install_callable_to_function(f: CallableToFunction) {
    let _ = CALLABLE_TO_FUNCTION.set(f);
}

fn function_from_callable(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<*mut TVMFFIObject> {
    match CALLABLE_TO_FUNCTION.get() {
        Some(f) => f(py, obj),
        None => Err(PyRuntimeError::new_err("tether._ffi is not initialised: callables cannot cross yet")),
    }
}

extern "C" {
    /// The type of bound methods (not declared by pyo3's bindings).
    static mut PyMethod_Type: ffi::PyTypeObject;
}

fn new_string(py: Python<'_>, bytes: &[u8], is_bytes: bool) -> PyResult<OwnedAny> {
    let ba = TVMFFIByteArray { data: bytes.as_ptr() as *const _, size: bytes.len() };
    let mut out = TVMFFIAny::NONE;
    // SAFETY: valid byte array and output slot.
    let rc = unsafe {
        if is_bytes {
            TVMFFIBytesFromByteArray(&ba, &mut out)
        } else {
            TVMFFIStringFromByteArray(&ba, &mut out)
        }
    };
    check(py, rc)?;
    Ok(OwnedAny(out))
}

/// Convert a Python value into an owned FFI value.
pub fn py_to_any(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<OwnedAny> {
    if let Some(v) = plain_value(obj) {
        return Ok(OwnedAny(v));
    }
    if registry::is_wrapper(obj) {
        let h = handle_of(obj)?;
        // SAFETY: the wrapper owns +1; we add our own.
        unsafe { TVMFFIObjectIncRef(h as *mut c_void) };
        return Ok(OwnedAny::from_handle(h));
    }
    py_to_any_other(py, obj)
}

/// [`py_to_any`] for a value that is neither a plain value nor a wrapper
/// (the caller checked).
pub fn py_to_any_other(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<OwnedAny> {
    // Exact str and bytes first: the commonest values in bulk conversions,
    // and no subclass hook (dtype, cached String/Bytes) can apply to them.
    // SAFETY: type checks on a live object.
    // Long ones are lent, not copied (`lent_strings`).
    if unsafe { ffi::PyUnicode_CheckExact(obj.as_ptr()) } != 0 {
        // SAFETY: an exact str.
        let text = unsafe { obj.cast_unchecked::<PyString>() }.to_str()?.as_bytes();
        if text.len() >= lent_strings::LEND_MIN {
            return Ok(lent_strings::lend(obj, text, false));
        }
        return new_string(py, text, false);
    }
    // SAFETY: as above.
    if unsafe { ffi::PyBytes_CheckExact(obj.as_ptr()) } != 0 {
        // SAFETY: an exact bytes.
        let content = unsafe { obj.cast_unchecked::<PyBytes>() }.as_bytes();
        if content.len() >= lent_strings::LEND_MIN {
            return Ok(lent_strings::lend(obj, content, true));
        }
        return new_string(py, content, true);
    }
    // Every check below before the tensor one depends on the type alone,
    // so a type that converted as a tensor and has not changed since goes
    // straight there (see `dlpack::TensorTypeMemo`).
    if let Some(v) = crate::convert::dlpack::tensor_import::TensorTypeMemo::convert(py, obj) {
        return v;
    }
    // SAFETY: a type check on a live object.
    if unsafe { ffi::PyLong_CheckExact(obj.as_ptr()) } != 0 {
        return int_to_any(obj); // beyond int64 (plain ints that fit never get here)
    }
    if let Some(v) = crate::convert::value_classes::value_to_any(obj)? {
        return Ok(OwnedAny(v)); // a tether.dtype (a str) or tether.Device
    }
    if obj.is_instance_of::<PyBool>() {
        let b: bool = obj.extract()?;
        return Ok(OwnedAny::pod(ti::kTVMFFIBool, TVMFFIAnyValue { v_int64: b as i64 }));
    }
    if obj.is_instance_of::<PyInt>() {
        return int_to_any(obj);
    }
    if obj.is_instance_of::<PyFloat>() {
        let v: f64 = obj.extract()?;
        return Ok(OwnedAny::pod(ti::kTVMFFIFloat, TVMFFIAnyValue { v_float64: v }));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        if let Some(v) = cached_string_object(obj)? {
            return Ok(v);
        }
        return new_string(py, s.to_str()?.as_bytes(), false);
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        if let Some(v) = cached_string_object(obj)? {
            return Ok(v);
        }
        return new_string(py, b.as_bytes(), true);
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return new_string(py, &b.to_vec(), true);
    }
    if crate::convert::rvalue_ref::as_rvalue_ref(obj).is_some() {
        return Err(PyTypeError::new_err(
            "a moved value (x._move()) can only be a call argument or a callback's return value",
        ));
    }
    if is_plain_function(obj) {
        // Functions, builtins and bound methods speak none of the
        // conversion protocols (those are looked up on the type): skip
        // the protocol hook.
        return function_from_callable(py, obj).map(OwnedAny::from_handle);
    }
    if let Some(v) = crate::convert::shape_values::shape_value_object(obj)? {
        return Ok(v); // a tether.Shape crosses as its ffi.Shape object
    }
    if nested::is_container(obj) {
        return nested::container_to_any(py, obj, py_to_any);
    }
    if is_tensor_like(obj) {
        return crate::convert::dlpack::tensor_import::TensorTypeMemo::convert_and_remember(py, obj);
    }
    if let Some(v) = protocol_value(py, obj)? {
        return Ok(v);
    }
    if obj.is_instance_of::<pyo3::exceptions::PyBaseException>() {
        return error_from_exception(py, obj).map(OwnedAny::from_handle);
    }
    if obj.is_callable() {
        return function_from_callable(py, obj).map(OwnedAny::from_handle);
    }
    opaque_from_object(py, obj).map(OwnedAny::from_handle)
}

/// An int (or subclass) as an FFI int, or as an `ffi.BigInt` when it does
/// not fit in int64.
fn int_to_any(obj: &Bound<'_, PyAny>) -> PyResult<OwnedAny> {
    let mut overflow = 0;
    // SAFETY: an int object; the flag reports a value beyond int64 without
    // raising.
    let v = unsafe { ffi::PyLong_AsLongLongAndOverflow(obj.as_ptr(), &mut overflow) };
    if overflow != 0 {
        return crate::convert::big_int::from_py(obj.py(), obj);
    }
    // SAFETY: GIL held; -1 with an error set means the conversion failed.
    if v == -1 && unsafe { !ffi::PyErr_Occurred().is_null() } {
        return Err(PyErr::fetch(obj.py()));
    }
    Ok(OwnedAny::pod(ti::kTVMFFIInt, TVMFFIAnyValue { v_int64: v }))
}

/// Plain Python functions, builtin functions and bound methods (exact types).
fn is_plain_function(obj: &Bound<'_, PyAny>) -> bool {
    // SAFETY: reading the type of a live object and comparing it with static types.
    unsafe {
        let tp = ffi::Py_TYPE(obj.as_ptr());
        tp == ptr::addr_of_mut!(ffi::PyFunction_Type)
            || tp == ptr::addr_of_mut!(ffi::PyCFunction_Type)
            || tp == ptr::addr_of_mut!(PyMethod_Type)
    }
}

/// A `tether.core.String`/`Bytes` (a `str`/`bytes` subclass) that keeps
/// the FFI object it came from crosses as that object, without a copy.
fn cached_string_object(obj: &Bound<'_, PyAny>) -> PyResult<Option<OwnedAny>> {
    if obj.is_exact_instance_of::<PyString>() || obj.is_exact_instance_of::<PyBytes>() {
        return Ok(None);
    }
    cached_object(obj)
}

/// Objects speaking TVM-FFI's conversion protocols (`__tvm_ffi_object__`,
/// numbers.Integral/Real such as NumPy scalars, `ctypes.c_void_p`,
/// `__tvm_ffi_opaque_ptr__`, `__tvm_ffi_int__`/`__tvm_ffi_float__`/
/// `__tvm_ffi_value__`, `ObjectConvertible`): the Python hook maps them to
/// a value converted in their place, or NotImplemented for plain objects.
fn protocol_value(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Option<OwnedAny>> {
    let Some(hooks) = python_hooks::hooks(py) else { return Ok(None) };
    let v = exit_park::call_py(hooks.value_from_protocol.bind(py), (obj,), None)?;
    if v.is(&py.NotImplemented()) {
        return Ok(None);
    }
    if let Ok(p) = v.cast::<OpaquePtrValue>() {
        let addr = p.get().0;
        return Ok(Some(OwnedAny::pod(ti::kTVMFFIOpaquePtr, TVMFFIAnyValue { v_ptr: addr as *mut c_void })));
    }
    if v.is(obj) {
        return Err(PyTypeError::new_err(format!("{} converts to itself", type_name(obj))));
    }
    py_to_any(py, &v).map(Some)
}

/// An opaque pointer value (`void*`) produced by the protocol hook.
#[pyclass(module = "tether._ffi", frozen)]
pub struct OpaquePtrValue(pub usize);

#[pymethods]
impl OpaquePtrValue {
    #[new]
    fn new(address: usize) -> Self {
        OpaquePtrValue(address)
    }
}

/// Whether `obj` crosses as a tensor: it speaks DLPack (NumPy arrays,
/// framework tensors) or is a DLPack capsule.
fn is_tensor_like(obj: &Bound<'_, PyAny>) -> bool {
    // SAFETY: a type check on a live object.
    let capsule = unsafe { ffi::PyCapsule_CheckExact(obj.as_ptr()) } == 1;
    capsule || type_has_attr(obj, pyo3::intern!(obj.py(), "__dlpack__"))
}

// ---- FFI -> Python --------------------------------------------------------------

/// None, and exact ints (that fit), floats and bools as FFI values, with
/// no subtype checks; None for anything else (converted the long way,
/// where an int beyond int64 becomes an `ffi.BigInt`).
#[inline]
fn plain_value(obj: &Bound<'_, PyAny>) -> Option<TVMFFIAny> {
    // SAFETY: a live object; the token proves the GIL.
    unsafe { plain_value_ptr(obj.as_ptr()) }
}

/// [`plain_value`] on a raw object pointer.
///
/// # Safety
/// GIL held; `p` live.
#[inline]
pub unsafe fn plain_value_ptr(p: *mut ffi::PyObject) -> Option<TVMFFIAny> {
    // SAFETY: type checks and value reads on a live object.
    unsafe {
        let (index, value) = if p == ffi::Py_None() {
            (ti::kTVMFFINone, TVMFFIAnyValue { v_int64: 0 })
        } else if ffi::PyLong_CheckExact(p) != 0 {
            let mut overflow = 0;
            let v = ffi::PyLong_AsLongLongAndOverflow(p, &mut overflow);
            if overflow != 0 {
                return None; // too big: the long way makes a BigInt (nothing raised)
            }
            (ti::kTVMFFIInt, TVMFFIAnyValue { v_int64: v })
        } else if ffi::PyFloat_CheckExact(p) != 0 {
            (ti::kTVMFFIFloat, TVMFFIAnyValue { v_float64: ffi::PyFloat_AS_DOUBLE(p) })
        } else if ffi::PyBool_Check(p) != 0 {
            (ti::kTVMFFIBool, TVMFFIAnyValue { v_int64: (p == ffi::Py_True()) as i64 })
        } else {
            return None;
        };
        Some(TVMFFIAny { type_index: index, small_str_len: 0, value })
    }
}
