//! `Tensor.__dlpack__` and `Tensor.__dlpack_device__` as native method
//! descriptors on the Python `Tensor` class, so a consumer's
//! `np.from_dlpack(t)` runs no Python frame of tether's (what TVM-FFI's
//! compiled class offers).
//!
//! The descriptors cover what consumers ask on every import: `__dlpack__()`
//! or `__dlpack__(max_version=...)` with `stream`, `dl_device` and `copy`
//! absent or None. Any other request goes to the Python method the class
//! keeps for it (`Tensor._dlpack_checked`), which checks devices, streams
//! and copies, so the two cannot disagree on those.
//!
//! SAFETY invariants: the functions here are called by CPython with the GIL
//! held and with `args`/`kwnames` as the vectorcall protocol lays them out
//! (`nargs` positional pointers, then one value per name in `kwnames`);
//! the method definitions are leaked once at installation and live for the
//! process, as CPython requires of a `PyMethodDef`.

use std::ffi::{c_char, CStr};
use std::sync::OnceLock;

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyString, PyType};

use super::entry_points::tensor_device;
use super::export::tensor_to_dlpack;
use crate::convert::error_bridge::result_into_ptr;

/// `__dlpack__`'s keywords; `max_version` first (the one read here).
const KEYWORD_NAMES: [&str; 4] = ["max_version", "stream", "dl_device", "copy"];
static KEYWORDS: PyOnceLock<[Py<PyString>; 4]> = PyOnceLock::new();

/// The Python fallback for requests the native path does not cover.
static CHECKED: OnceLock<Py<PyAny>> = OnceLock::new();

const DLPACK_DOC: &CStr = c"A DLPack capsule of this tensor (versioned when the consumer asks for DLPack 1.x with \
`max_version`, the legacy form otherwise).";
const DEVICE_DOC: &CStr = c"(device_type, device_id) of this tensor, as DLPack numbers them.";

/// Whether `max_version` asks for DLPack 1.x (`max_version[0] >= 1`).
fn wants_versioned(v: &Bound<'_, PyAny>) -> PyResult<bool> {
    if v.is_none() {
        return Ok(false);
    }
    // The usual `(1, 0)`: read in place.
    // SAFETY: an exact tuple's items, read while it is alive.
    unsafe {
        let p = v.as_ptr();
        if ffi::PyTuple_CheckExact(p) != 0 && ffi::PyTuple_GET_SIZE(p) >= 1 {
            let major = ffi::PyTuple_GET_ITEM(p, 0);
            if ffi::PyLong_CheckExact(major) != 0 {
                let mut overflow = 0;
                let m = ffi::PyLong_AsLongLongAndOverflow(major, &mut overflow);
                return Ok(overflow > 0 || (overflow == 0 && m >= 1));
            }
        }
    }
    let major = v.get_item(0).map_err(|_| {
        PyTypeError::new_err(format!("max_version must be a (major, minor) tuple, got {}", v.get_type().name().map(|n| n.to_string()).unwrap_or_default()))
    })?;
    Ok(major.extract::<i64>()? >= 1)
}

unsafe extern "C" fn dlpack(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: per the module's invariants (GIL held, vectorcall layout).
    unsafe {
        let py = Python::assume_attached();
        let t = Bound::from_borrowed_ptr(py, slf);
        let nargs = ffi::PyVectorcall_NARGS(nargs as usize);
        if nargs != 0 {
            return result_into_ptr(py, Err(PyTypeError::new_err("__dlpack__() takes no positional arguments")));
        }
        let mut versioned = false;
        let mut simple = true;
        if !kwnames.is_null() {
            let names = Bound::from_borrowed_ptr(py, kwnames);
            let n = ffi::PyTuple_GET_SIZE(kwnames);
            let known = KEYWORDS.get_or_init(py, || KEYWORD_NAMES.map(|k| PyString::intern(py, k).unbind()));
            for i in 0..n {
                let name = ffi::PyTuple_GET_ITEM(kwnames, i);
                let value = Bound::from_borrowed_ptr(py, *args.offset(i));
                // Keyword names are interned by the compiler and by most C
                // callers: compare pointers first, text only otherwise.
                let which = known.iter().position(|k| k.as_ptr() == name).or_else(|| {
                    let text = Bound::from_borrowed_ptr(py, name).extract::<String>().ok()?;
                    KEYWORD_NAMES.iter().position(|k| *k == text)
                });
                match which {
                    Some(0) => match wants_versioned(&value) {
                        Ok(v) => versioned = v,
                        Err(e) => return result_into_ptr(py, Err(e)),
                    },
                    Some(_) if value.is_none() => {}
                    _ => simple = false,
                }
            }
            if !simple {
                // Devices, streams, copies and unknown names: the checked
                // Python method decides (and names what was wrong).
                let Some(checked) = CHECKED.get() else {
                    return result_into_ptr(py, Err(PyTypeError::new_err("tether.Tensor's DLPack methods are not installed")));
                };
                let mut all = Vec::with_capacity(n as usize + 1);
                all.push(slf);
                all.extend((0..n).map(|i| *args.offset(i)));
                return ffi::PyObject_Vectorcall(checked.as_ptr(), all.as_ptr(), 1, names.as_ptr());
            }
        }
        result_into_ptr(py, tensor_to_dlpack(py, &t, versioned))
    }
}

unsafe extern "C" fn dlpack_device(slf: *mut ffi::PyObject, _unused: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: per the module's invariants.
    unsafe {
        let py = Python::assume_attached();
        let t = Bound::from_borrowed_ptr(py, slf);
        result_into_ptr(py, tensor_device(&t).and_then(|d| Ok(d.into_pyobject(py)?.into_any().unbind())))
    }
}

fn leak_def(name: &'static CStr, meth: ffi::PyMethodDefPointer, flags: i32, doc: &'static CStr) -> *mut ffi::PyMethodDef {
    Box::into_raw(Box::new(ffi::PyMethodDef { ml_name: name.as_ptr(), ml_meth: meth, ml_flags: flags, ml_doc: doc.as_ptr() as *const c_char }))
}

/// Install `__dlpack__` and `__dlpack_device__` on `cls` (the Python
/// `Tensor` class, once at import); `checked` handles the requests the
/// native path leaves to Python.
#[pyfunction]
pub fn install_dlpack_methods(py: Python<'_>, cls: &Bound<'_, PyType>, checked: &Bound<'_, PyAny>) -> PyResult<()> {
    if !checked.is_callable() {
        return Err(PyTypeError::new_err("install_dlpack_methods needs a callable fallback"));
    }
    let _ = CHECKED.set(checked.clone().unbind());
    let defs = [
        (
            c"__dlpack__",
            ffi::PyMethodDefPointer { PyCFunctionFastWithKeywords: dlpack },
            ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
            DLPACK_DOC,
        ),
        (c"__dlpack_device__", ffi::PyMethodDefPointer { PyCFunction: dlpack_device }, ffi::METH_NOARGS, DEVICE_DOC),
    ];
    for (name, meth, flags, doc) in defs {
        let def = leak_def(name, meth, flags, doc);
        // SAFETY: a live type object and a definition that lives forever.
        let descr = unsafe { ffi::PyDescr_NewMethod(cls.as_ptr() as *mut ffi::PyTypeObject, def) };
        if descr.is_null() {
            return Err(PyErr::fetch(py));
        }
        // SAFETY: a new reference, handed to the binding.
        let descr = unsafe { Bound::from_owned_ptr(py, descr) };
        cls.setattr(name.to_str().expect("ASCII names"), descr)?;
    }
    Ok(())
}
