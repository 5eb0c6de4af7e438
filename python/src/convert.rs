//! Values crossing between Python and the FFI: Python objects to owned
//! `TVMFFIAny`s, FFI values back to Python (objects through the one return
//! path, `tie_state::make_ret_object`); errors are in [`crate::error_bridge`].
//! Calls from Python into native functions are in [`crate::native_call`], Python
//! callables called by native code in [`crate::callback`].
//!
//! SAFETY invariants of this module: every function taking raw FFI values
//! runs with the GIL held unless it says otherwise; an [`OwnedAny`] owns one
//! strong reference when its type index is an object index.

use std::ffi::c_void;
use std::ptr;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyFloat, PyInt, PyString};
use pyo3::ffi;
use tether_sys::abi::{type_index as ti, TVMFFIAny, TVMFFIAnyValue, TVMFFIByteArray, TVMFFIObject, TVMFFIOpaqueObjectCell};
use tether_sys::*;

use crate::arg_buffer::StackVec;
use crate::error_bridge::{check, error_from_exception, take_ffi_error};
use crate::exit_park;
use crate::nested;
use crate::registry;
use crate::tie_state::{self, CObject};

/// An owned FFI value that releases its reference when dropped.
pub struct OwnedAny(pub TVMFFIAny);

impl OwnedAny {
    fn pod(type_index: i32, value: TVMFFIAnyValue) -> Self {
        OwnedAny(TVMFFIAny { type_index, small_str_len: 0, value })
    }
    /// Give up ownership.
    pub fn into_raw(self) -> TVMFFIAny {
        let r = self.0;
        std::mem::forget(self);
        r
    }
    /// Own an object handle (+1 already held).
    pub fn from_handle(h: *mut TVMFFIObject) -> Self {
        // SAFETY: the caller owns +1 on a live object.
        let index = unsafe { (*h).type_index };
        OwnedAny::pod(index, TVMFFIAnyValue { v_obj: h })
    }
}

impl Drop for OwnedAny {
    fn drop(&mut self) {
        if self.0.type_index >= ti::kTVMFFIStaticObjectBegin {
            // SAFETY: module invariant: we own this reference.
            unsafe { TVMFFIObjectDecRef(self.0.value.v_obj as *mut c_void) };
        }
    }
}


// ---- Python -> FFI ------------------------------------------------------------

/// The handle a wrapper holds, or a ValueError if it was moved from.
pub fn handle_of(obj: &Bound<'_, PyAny>) -> PyResult<*mut TVMFFIObject> {
    // SAFETY: callers pass wrappers (checked with `registry::is_wrapper`), which have the CObject layout.
    let h = unsafe { (*(obj.as_ptr() as *mut CObject)).chandle };
    if h.is_null() {
        return Err(PyValueError::new_err(format!(
            "{} object has no handle (it was moved from or not initialised)",
            obj.get_type().name().map(|n| n.to_string()).unwrap_or_default()
        )));
    }
    Ok(h)
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
    // Every check below before the tensor one depends on the type alone,
    // so a type that converted as a tensor and has not changed since goes
    // straight there (see `dlpack::TensorTypeMemo`).
    if let Some(v) = crate::dlpack::TensorTypeMemo::convert(py, obj) {
        return v;
    }
    // SAFETY: a type check on a live object.
    if unsafe { ffi::PyLong_CheckExact(obj.as_ptr()) } != 0 {
        return int_to_any(obj); // beyond int64 (plain ints that fit never get here)
    }
    if let Some(v) = crate::value_classes::value_to_any(obj)? {
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
    if let Ok(s) = obj.downcast::<PyString>() {
        if let Some(v) = cached_string_object(obj)? {
            return Ok(v);
        }
        return new_string(py, s.to_str()?.as_bytes(), false);
    }
    if let Ok(b) = obj.downcast::<PyBytes>() {
        if let Some(v) = cached_string_object(obj)? {
            return Ok(v);
        }
        return new_string(py, b.as_bytes(), true);
    }
    if let Ok(b) = obj.downcast::<PyByteArray>() {
        return new_string(py, &b.to_vec(), true);
    }
    if crate::as_rvalue_ref(obj).is_some() {
        return Err(PyTypeError::new_err(
            "a moved value (x._move()) can only be a call argument or a callback's return value",
        ));
    }
    if is_plain_function(obj) {
        // Functions, builtins and bound methods speak none of the
        // conversion protocols (those are looked up on the type): skip
        // the protocol hook.
        return crate::callback::function_from_callable(py, obj).map(OwnedAny::from_handle);
    }
    if let Some(v) = crate::shape_values::shape_value_object(obj)? {
        return Ok(v); // a tether.Shape crosses as its ffi.Shape object
    }
    if nested::is_container(obj) {
        return nested::container_to_any(py, obj);
    }
    if is_tensor_like(obj) {
        return crate::dlpack::TensorTypeMemo::convert_and_remember(py, obj);
    }
    if let Some(v) = protocol_value(py, obj)? {
        return Ok(v);
    }
    if obj.is_instance_of::<pyo3::exceptions::PyBaseException>() {
        return error_from_exception(py, obj).map(OwnedAny::from_handle);
    }
    if obj.is_callable() {
        return crate::callback::function_from_callable(py, obj).map(OwnedAny::from_handle);
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
        return crate::big_int::from_py(obj.py(), obj);
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

extern "C" {
    /// CPython's attribute lookup along a type's MRO (borrowed result,
    /// NULL when absent, no exception): cheaper than `hasattr`, which
    /// formats an AttributeError for every miss.
    fn _PyType_Lookup(tp: *mut ffi::PyTypeObject, name: *mut ffi::PyObject) -> *mut ffi::PyObject;
    /// The type of bound methods (not declared by pyo3's bindings).
    static mut PyMethod_Type: ffi::PyTypeObject;
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

/// A `tether.core.String`/`Bytes` (a `str`/`bytes` subclass) that keeps
/// the FFI object it came from crosses as that object, without a copy.
fn cached_string_object(obj: &Bound<'_, PyAny>) -> PyResult<Option<OwnedAny>> {
    if obj.is_exact_instance_of::<PyString>() || obj.is_exact_instance_of::<PyBytes>() {
        return Ok(None);
    }
    let Ok(cached) = obj.getattr(pyo3::intern!(obj.py(), "_tvm_ffi_cached_object")) else { return Ok(None) };
    if !registry::is_wrapper(&cached) {
        return Ok(None);
    }
    let h = handle_of(&cached)?;
    // SAFETY: the wrapper owns +1; we add our own.
    unsafe { TVMFFIObjectIncRef(h as *mut c_void) };
    Ok(Some(OwnedAny::from_handle(h)))
}

/// Objects speaking TVM-FFI's conversion protocols (`__tvm_ffi_object__`,
/// numbers.Integral/Real such as NumPy scalars, `ctypes.c_void_p`,
/// `__tvm_ffi_opaque_ptr__`, `__tvm_ffi_int__`/`__tvm_ffi_float__`/
/// `__tvm_ffi_value__`, `ObjectConvertible`): the Python hook maps them to
/// a value converted in their place, or NotImplemented for plain objects.
fn protocol_value(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Option<OwnedAny>> {
    let Some(hooks) = registry::hooks(py) else { return Ok(None) };
    let v = exit_park::call_py(hooks.value_from_protocol.bind(py), (obj,), None)?;
    if v.is(&py.NotImplemented()) {
        return Ok(None);
    }
    if let Ok(p) = v.downcast::<OpaquePtrValue>() {
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

/// Call a builtin global function with owned arguments (consumed).
pub fn call_builtin(py: Python<'_>, name: &str, mut args: Vec<OwnedAny>) -> PyResult<OwnedAny> {
    let f = registry::builtin_function(py, name)?;
    let mut raw: Vec<TVMFFIAny> = args.iter().map(|a| a.0).collect();
    let mut result = TVMFFIAny::NONE;
    // SAFETY: `args` keeps the values alive during the call.
    let rc = unsafe { TVMFFIFunctionCall(f as *mut c_void, raw.as_mut_ptr(), raw.len() as i32, &mut result) };
    args.clear();
    check(py, rc)?;
    Ok(OwnedAny(result))
}

pub unsafe extern "C" fn release_pyobject(p: *mut c_void) {
    if p.is_null() || !exit_park::python_alive() {
        return; // after interpreter exit the OS reclaims it
    }
    // Any thread may drop the last native owner; the decref needs the GIL
    // and may run `__del__`, so both go through the exit parking frames.
    let gil = exit_park::gil_ensure();
    // SAFETY: `p` is a PyObject we hold one reference on; GIL held.
    unsafe {
        exit_park::decref(p as *mut ffi::PyObject);
        ffi::PyGILState_Release(gil);
    }
}

/// Wrap any Python object as an `ffi.OpaquePyObject` holding a reference.
pub fn opaque_from_object(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<*mut TVMFFIObject> {
    let p = obj.clone().into_ptr();
    let mut out: *mut c_void = ptr::null_mut();
    // SAFETY: the opaque object takes our reference; on failure we drop it.
    let rc = unsafe { TVMFFIObjectCreateOpaque(p as *mut c_void, ti::kTVMFFIOpaquePyObject, Some(release_pyobject), &mut out) };
    if rc != 0 {
        // SAFETY: the reference we took above.
        unsafe { ffi::Py_DECREF(p) };
        return Err(take_ffi_error(py));
    }
    Ok(out as *mut TVMFFIObject)
}

// ---- FFI -> Python --------------------------------------------------------------

fn decode(py: Python<'_>, b: &[u8]) -> PyResult<PyObject> {
    Ok(PyString::new(py, std::str::from_utf8(b).map_err(|_| PyValueError::new_err("FFI string is not valid UTF-8"))?).into_any().unbind())
}

/// `ctypes.c_void_p`, looked up once: opaque pointers come back as one (as
/// with TVM-FFI), so passing them back crosses as a pointer again.
static C_VOID_P: pyo3::sync::GILOnceCell<Py<PyAny>> = pyo3::sync::GILOnceCell::new();

fn opaque_ptr_to_py(py: Python<'_>, addr: usize) -> PyResult<PyObject> {
    let cls = C_VOID_P.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py.import("ctypes")?.getattr("c_void_p")?.unbind())
    })?;
    Ok(cls.bind(py).call1((addr,))?.unbind())
}

/// Convert an owned FFI value to Python, consuming it.
pub fn any_to_py(py: Python<'_>, v: OwnedAny) -> PyResult<PyObject> {
    let raw = v.into_raw();
    // SAFETY: reading the union per the type index; we own `raw`.
    unsafe {
        match raw.type_index {
            ti::kTVMFFINone => Ok(py.None()),
            ti::kTVMFFIInt => Ok(raw.value.v_int64.into_pyobject(py)?.into_any().unbind()),
            ti::kTVMFFIBool => Ok(PyBool::new(py, raw.value.v_int64 != 0).to_owned().into_any().unbind()),
            ti::kTVMFFIFloat => Ok(raw.value.v_float64.into_pyobject(py)?.into_any().unbind()),
            ti::kTVMFFIOpaquePtr => opaque_ptr_to_py(py, raw.value.v_ptr as usize),
            ti::kTVMFFIDataType | ti::kTVMFFIDevice => crate::value_classes::value_to_py(py, &raw),
            ti::kTVMFFIBigInt => {
                let _owner = OwnedAny(raw);
                crate::big_int::to_py(py, &raw)
            }
            ti::kTVMFFISmallStr | ti::kTVMFFISmallBytes => {
                let len = (raw.small_str_len as usize).min(7);
                let b = &raw.value.v_bytes[..len];
                if raw.type_index == ti::kTVMFFISmallStr {
                    decode(py, b)
                } else {
                    Ok(PyBytes::new(py, b).into_any().unbind())
                }
            }
            // Heap strings come back as `tether.core.String`/`Bytes`
            // holding the object (the +1 moves into it).
            ti::kTVMFFIStr | ti::kTVMFFIBytes => {
                let obj = crate::string_values::string_object_to_py(raw.value.v_obj);
                if obj.is_null() {
                    Err(PyErr::fetch(py))
                } else {
                    Ok(Py::from_owned_ptr(py, obj))
                }
            }
            // Shapes come back as `tether.Shape` tuples holding the object.
            ti::kTVMFFIShape => crate::shape_values::shape_object_to_py(py, raw.value.v_obj),
            ti::kTVMFFIOpaquePyObject => {
                let h = raw.value.v_obj;
                let _owner = OwnedAny(raw);
                let cell = &*((h as *const u8).add(std::mem::size_of::<TVMFFIObject>()) as *const TVMFFIOpaqueObjectCell);
                Ok(Py::from_borrowed_ptr(py, cell.handle as *mut ffi::PyObject))
            }
            i if i >= ti::kTVMFFIStaticObjectBegin => {
                let h = raw.value.v_obj;
                let cls = match registry::class_for(py, i) {
                    Ok(c) => c,
                    Err(e) => {
                        drop(OwnedAny(raw));
                        return Err(e);
                    }
                };
                let obj = tie_state::make_ret_object(h, cls);
                if obj.is_null() {
                    Err(PyErr::fetch(py))
                } else {
                    Ok(Py::from_owned_ptr(py, obj))
                }
            }
            other => Err(PyTypeError::new_err(format!(
                "FFI value of type {} has no Python equivalent",
                registry::type_key_of(other)
            ))),
        }
    }
}

/// Convert a borrowed argument view to Python (callbacks).
///
/// # Safety
/// `v` is a valid view alive for the call.
pub unsafe fn view_to_py(py: Python<'_>, v: &TVMFFIAny) -> PyResult<PyObject> {
    // SAFETY: per the caller.
    unsafe {
        match v.type_index {
            ti::kTVMFFIObjectRValueRef => {
                let slot = v.value.v_ptr as *mut *mut TVMFFIObject;
                let h = if slot.is_null() { ptr::null_mut() } else { tie_state::take_moved(slot) };
                if h.is_null() {
                    return Err(PyValueError::new_err("argument was already moved from"));
                }
                any_to_py(py, OwnedAny::from_handle(h))
            }
            ti::kTVMFFIBigInt => crate::big_int::to_py(py, v),
            i if i >= ti::kTVMFFIStaticObjectBegin => {
                if v.value.v_obj.is_null() {
                    return Err(PyValueError::new_err("argument object handle is NULL"));
                }
                TVMFFIObjectIncRef(v.value.v_obj as *mut c_void);
                any_to_py(py, OwnedAny(*v))
            }
            // Borrowed C strings and byte arrays come back as plain values.
            ti::kTVMFFIRawStr | ti::kTVMFFIByteArrayPtr => {
                let obj = if v.type_index == ti::kTVMFFIRawStr {
                    crate::string_values::raw_str_to_py(v.value.v_c_str)
                } else {
                    crate::string_values::byte_array_to_py(v.value.v_ptr as *const TVMFFIByteArray)
                };
                if obj.is_null() {
                    Err(PyErr::fetch(py))
                } else {
                    Ok(Py::from_owned_ptr(py, obj))
                }
            }
            _ => any_to_py(py, OwnedAny(*v)),
        }
    }
}

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

/// Owned FFI values for one call, inline for up to 32 (a constructor's
/// fields), released on drop.
pub struct OwnedArgs(StackVec<TVMFFIAny, 32>);

impl OwnedArgs {
    pub fn new() -> Self {
        OwnedArgs(StackVec::new(TVMFFIAny::NONE))
    }

    pub fn push(&mut self, v: OwnedAny) {
        self.0.push(v.into_raw());
    }

    pub fn as_mut_slice(&mut self) -> &mut [TVMFFIAny] {
        self.0.as_mut_slice()
    }
}

impl Drop for OwnedArgs {
    fn drop(&mut self) {
        for v in self.0.as_slice() {
            drop(OwnedAny(*v));
        }
    }
}

/// A callback's result `x._move()`: the handle moves out of `x` into the
/// result (`x` is left without a handle), as TVM-FFI does.
pub fn move_out(r: &Bound<'_, crate::RValueRef>) -> PyResult<OwnedAny> {
    let target = r.get().target.bind(r.py()).clone();
    let h = handle_of(&target)?;
    let o = target.as_ptr() as *mut CObject;
    // SAFETY: a wrapper (checked at construction); GIL held.
    unsafe {
        if (*o).borrows.load(std::sync::atomic::Ordering::Acquire) > 0 {
            return Err(PyValueError::new_err(format!(
                "cannot move a {} object that a running call holds by reference",
                type_name(&target)
            )));
        }
        tie_state::detach(h, target.as_ptr());
        (*o).chandle = ptr::null_mut();
    }
    Ok(OwnedAny::from_handle(h))
}

/// The static class of a wrapper argument, for error messages.
pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}

