//! `a[i]` on Arrays and Lists without a Python frame: the classes'
//! `mp_subscript` slot reads the item natively for integer indices and
//! hands anything else (slices, index-like objects, errors of type) to the
//! Python `__getitem__` (`_getitem_py`), which keeps every other behaviour.
//!
//! Arrays are immutable once built, so the item is read from the sequence
//! cell directly (as `seq_items` does). Lists are mutable and guarded by
//! the core's lock, so they are read through the core's own `ffi.ListSize`
//! and `ffi.ListGetItem`, called natively.
//!
//! Items read from a container returned by a call that took PyTorch
//! tensors come back as PyTorch tensors (`exchange_out`).
//!
//! SAFETY invariants of this module: the slot is installed only on
//! wrapper classes of Arrays or Lists (checked at install), and reads the
//! handle of a wrapper whose +1 keeps it alive for the read.

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyType;
use tether_sys::abi::{type_index as ti, TVMFFIAny, TVMFFIAnyValue, TVMFFIObject, TVMFFISeqCell};
use tether_sys::*;

use crate::convert::builtin_calls;
use crate::convert::ffi_to_py;
use crate::convert::owned_any::OwnedAny;
use crate::convert::registry;
use crate::convert::wrapper_access::{handle_of, wrapper};
use crate::tie::tie_state::CObject;

static LIST_SIZE: AtomicPtr<TVMFFIObject> = AtomicPtr::new(ptr::null_mut());
static LIST_GET: AtomicPtr<TVMFFIObject> = AtomicPtr::new(ptr::null_mut());

/// Python's index rules, with TVM-FFI's message.
fn normalize(i: i64, n: i64) -> PyResult<i64> {
    let j = if i < 0 { i + n } else { i };
    if !(0..n).contains(&j) {
        return Err(PyIndexError::new_err(format!("Index out of range. size: {n}, got index {i}")));
    }
    Ok(j)
}

fn call_list(py: Python<'_>, f: &AtomicPtr<TVMFFIObject>, args: &mut [TVMFFIAny]) -> PyResult<OwnedAny> {
    let mut out = TVMFFIAny::NONE;
    // SAFETY: the cached builtin handle lives for the process; the
    // argument views are alive (the caller's wrapper holds the list).
    let rc = unsafe { TVMFFIFunctionCall(f.load(Ordering::Acquire) as *mut c_void, args.as_mut_ptr(), args.len() as i32, &mut out) };
    if rc != 0 {
        return Err(crate::convert::error_bridge::take_ffi_error(py));
    }
    Ok(OwnedAny(out))
}

/// The item at integer index `i` of the Array or List `h`.
///
/// # Safety
/// GIL held; `h` is a live Array or List.
unsafe fn item(py: Python<'_>, h: *mut TVMFFIObject, i: i64) -> PyResult<Py<PyAny>> {
    // SAFETY: per the caller.
    unsafe {
        if (*h).type_index == ti::kTVMFFIArray {
            let cell = &*((h as *const u8).add(std::mem::size_of::<TVMFFIObject>()) as *const TVMFFISeqCell);
            let j = normalize(i, cell.size)?;
            return ffi_to_py::view_to_py(py, &*(cell.data as *const TVMFFIAny).add(j as usize));
        }
        let list = TVMFFIAny { type_index: ti::kTVMFFIList, small_str_len: 0, value: TVMFFIAnyValue { v_obj: h } };
        let size = call_list(py, &LIST_SIZE, &mut [list])?;
        let n = size.0.value.v_int64;
        let j = normalize(i, n)?;
        let index = TVMFFIAny { type_index: ti::kTVMFFIInt, small_str_len: 0, value: TVMFFIAnyValue { v_int64: j } };
        ffi_to_py::any_to_py(py, call_list(py, &LIST_GET, &mut [list, index])?)
    }
}

/// `mp_subscript` of Array and List classes.
unsafe extern "C" fn seq_subscript(obj: *mut ffi::PyObject, key: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: called by CPython with the GIL held on a live instance of a
    // class this slot was installed on (so a wrapper) and a live key.
    unsafe {
        let py = Python::assume_attached();
        let h = (*(obj as *mut CObject)).chandle;
        if !h.is_null() && ffi::PyLong_CheckExact(key) != 0 {
            let i = ffi::PyLong_AsLongLong(key);
            if !(i == -1 && !ffi::PyErr_Occurred().is_null()) {
                let api = crate::convert::dlpack::exchange_out::tag_of(&pyo3::Borrowed::from_ptr(py, obj));
                let got = item(py, h, i).and_then(|v| crate::convert::dlpack::exchange_out::convert_back(py, api, v));
                return match got {
                    Ok(v) => v.into_ptr(),
                    Err(e) => {
                        e.restore(py);
                        ptr::null_mut()
                    }
                };
            }
            ffi::PyErr_Clear(); // a huge int: the Python path raises
        }
        let name = pyo3::intern!(py, "_getitem_py");
        ffi::PyObject_CallMethodOneArg(obj, name.as_ptr(), key)
    }
}

/// Give `cls` (a wrapper class of Arrays or Lists with a Python
/// `_getitem_py`) the native `a[i]`.
pub fn install(py: Python<'_>, cls: &Bound<'_, PyType>) -> PyResult<()> {
    if !cls.is_subclass(registry::base(py))? || !cls.hasattr("_getitem_py")? {
        return Err(PyTypeError::new_err(format!("{} is not a sequence wrapper class", cls.name()?)));
    }
    for (name, slot) in [("ffi.ListSize", &LIST_SIZE), ("ffi.ListGetItem", &LIST_GET)] {
        if slot.load(Ordering::Acquire).is_null() {
            slot.store(builtin_calls::builtin_function(py, name)?, Ordering::Release);
        }
    }
    // SAFETY: a heap type (its mapping methods live in the type object),
    // slot written with a function of the slot's signature.
    unsafe {
        let tp = cls.as_ptr() as *mut ffi::PyTypeObject;
        if ffi::PyType_GetFlags(tp) & ffi::Py_TPFLAGS_HEAPTYPE == 0 || (*tp).tp_as_mapping.is_null() {
            return Err(PyValueError::new_err("not a heap type"));
        }
        (*(*tp).tp_as_mapping).mp_subscript = Some(seq_subscript);
        ffi::PyType_Modified(tp);
    }
    Ok(())
}

/// The items of an Array, read from its sequence cell. Arrays are immutable
/// once built, so no lock is needed; Lists (mutable, locked) are read
/// through their accessor functions instead.
#[pyfunction]
pub(crate) fn seq_items(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Vec<Py<PyAny>>> {
    let h = handle_of(wrapper(obj)?)?;
    // SAFETY: live handle; an Array's cell never changes after creation.
    unsafe {
        let t = (*h).type_index;
        if t != ti::kTVMFFIArray {
            return Err(PyTypeError::new_err(format!("expected ffi.Array, got {}", registry::type_key_of(t))));
        }
        let cell = &*((h as *const u8).add(std::mem::size_of::<TVMFFIObject>()) as *const tether_sys::abi::TVMFFISeqCell);
        let data = cell.data as *const TVMFFIAny;
        let api = crate::convert::dlpack::exchange_out::tag_of(obj);
        (0..cell.size as usize)
            .map(|i| {
                ffi_to_py::view_to_py(py, &*data.add(i))
                    .and_then(|v| crate::convert::dlpack::exchange_out::convert_back(py, api, v))
            })
            .collect()
    }
}
