//! The Python classes of the FFI's DataType and Device values: which class
//! the values returned by any function take, and which Python objects cross
//! as such values.
//!
//! Each kind has an original class (the first one set: `tether.dtype`,
//! `tether.Device`) and a current class, which starts as the original and
//! may be replaced by a subclass of it (TVM installs its own `Device` and
//! data-type classes this way). Returned values are instances of the
//! current class. Arguments cross as DataType/Device values when their
//! type is the current or the original class exactly (checked first, being
//! the common case) or a subclass of the original.
//!
//! The classes are read on every conversion of a value that is not a
//! plain value or a wrapper, so the slots are atomic pointers read without
//! a lock, also on free-threaded builds; a class once set is kept alive for
//! the process, so a reader holding a pointer that another thread has just
//! replaced still holds a live class. Setting (rare) is serialised by the
//! lock of the kept classes.

use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyType};
use tether_sys::abi::{type_index as ti, DLDataType, DLDevice, TVMFFIAny, TVMFFIAnyValue};

use crate::tie::exit_park::{call_method, call_py};

/// One kind's classes (NULL until set).
struct Slot {
    original: AtomicPtr<ffi::PyTypeObject>,
    current: AtomicPtr<ffi::PyTypeObject>,
}

impl Slot {
    const fn new() -> Self {
        Slot { original: AtomicPtr::new(std::ptr::null_mut()), current: AtomicPtr::new(std::ptr::null_mut()) }
    }
}

static DTYPE: Slot = Slot::new();
static DEVICE: Slot = Slot::new();

/// Every class ever set, each held once: never released, so the slots'
/// pointers stay valid whatever readers still hold.
static KEPT: Mutex<Vec<Py<PyType>>> = Mutex::new(Vec::new());

/// A TypeError unless `cls` may become the class of `slot`: any class
/// while none is set, else a subclass of the original.
fn check(slot: &Slot, cls: &Bound<'_, PyType>, what: &str) -> PyResult<()> {
    let original = slot.original.load(Ordering::Acquire);
    // SAFETY: both are live types (`original` is kept forever); the MRO
    // check runs no Python code.
    if original.is_null() || unsafe { ffi::PyType_IsSubtype(cls.as_ptr() as *mut ffi::PyTypeObject, original) } != 0 {
        return Ok(());
    }
    // SAFETY: a kept type.
    let base = unsafe { Bound::from_borrowed_ptr(cls.py(), original as *mut ffi::PyObject) };
    let name = |t: &Bound<'_, PyAny>| t.str().map(|s| s.to_string()).unwrap_or_default();
    Err(PyTypeError::new_err(format!("the {what} class must be a subclass of {}, got {}", name(&base), name(cls.as_any()))))
}

/// Make `cls` the current class of `slot` (and its original, the first time).
fn set(slot: &Slot, cls: &Bound<'_, PyType>, what: &str) -> PyResult<()> {
    let p = cls.as_ptr() as *mut ffi::PyTypeObject;
    // The lock makes the check and the stores one step: of two first
    // settings, one becomes the original and the other must derive from it.
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    let original = slot.original.load(Ordering::Acquire);
    // SAFETY: live types (`original` is kept forever); the MRO check runs
    // no Python code.
    if !original.is_null() && unsafe { ffi::PyType_IsSubtype(p, original) } == 0 {
        drop(kept); // the message may run Python code
        return check(slot, cls, what);
    }
    if !kept.iter().any(|k| k.as_ptr() == cls.as_ptr()) {
        kept.push(cls.clone().unbind());
    }
    if original.is_null() {
        slot.original.store(p, Ordering::Release);
    }
    slot.current.store(p, Ordering::Release);
    Ok(())
}

/// The current class of `slot`, if set.
fn current<'py>(py: Python<'py>, slot: &Slot) -> Option<Bound<'py, PyType>> {
    let p = slot.current.load(Ordering::Acquire);
    // SAFETY: a kept type.
    (!p.is_null()).then(|| unsafe { Bound::from_borrowed_ptr(py, p as *mut ffi::PyObject).cast_into_unchecked() })
}

/// `(original, current)` of `slot`, or an error before the classes are set.
fn both<'py>(py: Python<'py>, slot: &Slot) -> PyResult<(Bound<'py, PyType>, Bound<'py, PyType>)> {
    let (o, c) = (slot.original.load(Ordering::Acquire), slot.current.load(Ordering::Acquire));
    if o.is_null() || c.is_null() {
        return Err(PyValueError::new_err("tether.tensor is not initialised"));
    }
    // SAFETY: kept types.
    unsafe {
        Ok((
            Bound::from_borrowed_ptr(py, o as *mut ffi::PyObject).cast_into_unchecked(),
            Bound::from_borrowed_ptr(py, c as *mut ffi::PyObject).cast_into_unchecked(),
        ))
    }
}

/// `dtype_cls` and `device_cls` as the classes of DataType and Device
/// values (the first pair set is the original one; later classes must
/// derive from it).
#[pyfunction]
pub fn set_value_classes(dtype_cls: &Bound<'_, PyType>, device_cls: &Bound<'_, PyType>) -> PyResult<()> {
    // Both checked first, so a refused pair changes neither.
    check(&DTYPE, dtype_cls, "dtype")?;
    check(&DEVICE, device_cls, "device")?;
    set(&DTYPE, dtype_cls, "dtype")?;
    set(&DEVICE, device_cls, "device")
}

/// `cls` as the class of DataType values returned from now on.
#[pyfunction]
pub fn set_dtype_class(cls: &Bound<'_, PyType>) -> PyResult<()> {
    set(&DTYPE, cls, "dtype")
}

/// `cls` as the class of Device values returned from now on.
#[pyfunction]
pub fn set_device_class(cls: &Bound<'_, PyType>) -> PyResult<()> {
    set(&DEVICE, cls, "device")
}

/// The current class of DataType values (None before one is set).
#[pyfunction]
pub fn dtype_class(py: Python<'_>) -> Option<Bound<'_, PyType>> {
    current(py, &DTYPE)
}

/// The current class of Device values (None before one is set).
#[pyfunction]
pub fn device_class(py: Python<'_>) -> Option<Bound<'_, PyType>> {
    current(py, &DEVICE)
}

/// Add this module's functions to `tether._ffi`.
pub fn add_functions(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(set_value_classes, m)?)?;
    m.add_function(wrap_pyfunction!(set_dtype_class, m)?)?;
    m.add_function(wrap_pyfunction!(set_device_class, m)?)?;
    m.add_function(wrap_pyfunction!(dtype_class, m)?)?;
    m.add_function(wrap_pyfunction!(device_class, m)?)?;
    Ok(())
}

/// Which kind `tp` converts as: exact matches first, then subclasses of
/// the originals.
fn kind_of(tp: *mut ffi::PyTypeObject) -> Option<i32> {
    let (d0, d1) = (DTYPE.original.load(Ordering::Acquire), DTYPE.current.load(Ordering::Acquire));
    let (v0, v1) = (DEVICE.original.load(Ordering::Acquire), DEVICE.current.load(Ordering::Acquire));
    if !d0.is_null() && (tp == d1 || tp == d0) {
        return Some(ti::kTVMFFIDataType);
    }
    if !v0.is_null() && (tp == v1 || tp == v0) {
        return Some(ti::kTVMFFIDevice);
    }
    // SAFETY: live types (kept forever, or the type of a live object).
    unsafe {
        if !d0.is_null() && ffi::PyType_IsSubtype(tp, d0) != 0 {
            return Some(ti::kTVMFFIDataType);
        }
        if !v0.is_null() && ffi::PyType_IsSubtype(tp, v0) != 0 {
            return Some(ti::kTVMFFIDevice);
        }
    }
    None
}

/// A data-type or device object (of the classes above) as an FFI value,
/// or None for other objects.
pub fn value_to_any(obj: &Bound<'_, PyAny>) -> PyResult<Option<TVMFFIAny>> {
    // SAFETY: the type of a live object.
    let Some(kind) = kind_of(unsafe { ffi::Py_TYPE(obj.as_ptr()) }) else { return Ok(None) };
    let value = if kind == ti::kTVMFFIDataType {
        let (code, bits, lanes): (u8, u8, u16) =
            (obj.getattr("type_code")?.extract()?, obj.getattr("bits")?.extract()?, obj.getattr("lanes")?.extract()?);
        TVMFFIAnyValue { v_dtype: DLDataType { code, bits, lanes } }
    } else {
        let device_type: i32 = call_method(obj, "dlpack_device_type", ())?.extract()?;
        let device_id: i32 = obj.getattr("index")?.extract()?;
        TVMFFIAnyValue { v_device: DLDevice { device_type, device_id } }
    };
    Ok(Some(TVMFFIAny { type_index: kind, small_str_len: 0, value }))
}

/// A DataType or Device FFI value as an instance of the current class.
///
/// Instances of a replaced class are made as TVM-FFI makes them, without
/// running the subclass's constructor: a data type is the string and
/// attributes of the original class's value, a device an instance set up
/// by the original class's `__init__`.
pub fn value_to_py(py: Python<'_>, v: &TVMFFIAny) -> PyResult<Py<PyAny>> {
    if v.type_index == ti::kTVMFFIDataType {
        // SAFETY: the union member named by the type index.
        let d = unsafe { v.value.v_dtype };
        let (_, cls) = both(py, &DTYPE)?;
        let made = call_method(&cls, "from_dlpack_data_type", ((d.code, d.bits, d.lanes),))?;
        if made.get_type().is(&cls) {
            return Ok(made.unbind());
        }
        // A `from_dlpack_data_type` that makes the original class: the same
        // text and attributes in an instance of `cls`.
        let text = PyString::new(py, made.cast::<PyString>()?.to_str()?);
        let obj = call_method(&py.get_type::<PyString>(), "__new__", (&cls, text))?;
        let attrs = made.getattr(pyo3::intern!(py, "__dict__"))?;
        call_method(&obj.getattr(pyo3::intern!(py, "__dict__"))?, "update", (attrs,))?;
        Ok(obj.unbind())
    } else {
        // SAFETY: the union member named by the type index.
        let d = unsafe { v.value.v_device };
        let (original, cls) = both(py, &DEVICE)?;
        if cls.is(&original) {
            return Ok(call_py(&cls, (d.device_type, d.device_id), None)?.unbind());
        }
        let obj = call_method(&cls, "__new__", (&cls,))?;
        call_method(&original, "__init__", (&obj, d.device_type, d.device_id))?;
        Ok(obj.unbind())
    }
}
