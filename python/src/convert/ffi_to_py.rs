//! FFI values back to Python: owned values and borrowed argument views.
//! Objects come back through the one return path,
//! `tie_state::make_ret_object`; heap strings, shapes, big ints and the
//! dtype/device values through their own modules.
//!
//! SAFETY invariants of this module: every function taking raw FFI values
//! runs with the GIL held; an [`OwnedAny`] owns one strong reference when
//! its type index is an object index.

use std::ffi::c_void;
use std::ptr;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyString};
use tether_sys::abi::{type_index as ti, TVMFFIAny, TVMFFIByteArray, TVMFFIObject, TVMFFIOpaqueObjectCell};
use tether_sys::*;

use crate::convert::owned_any::OwnedAny;
use crate::convert::registry;
use crate::tie::tie_state;

fn decode(py: Python<'_>, b: &[u8]) -> PyResult<Py<PyAny>> {
    Ok(PyString::new(py, std::str::from_utf8(b).map_err(|_| PyValueError::new_err("FFI string is not valid UTF-8"))?).into_any().unbind())
}

/// `ctypes.c_void_p`, looked up once: opaque pointers come back as one (as
/// with TVM-FFI), so passing them back crosses as a pointer again.
static C_VOID_P: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();

fn opaque_ptr_to_py(py: Python<'_>, addr: usize) -> PyResult<Py<PyAny>> {
    let cls = C_VOID_P.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py.import("ctypes")?.getattr("c_void_p")?.unbind())
    })?;
    Ok(cls.bind(py).call1((addr,))?.unbind())
}

/// Convert an owned FFI value to Python, consuming it.
pub fn any_to_py(py: Python<'_>, v: OwnedAny) -> PyResult<Py<PyAny>> {
    let raw = v.into_raw();
    // SAFETY: reading the union per the type index; we own `raw`.
    unsafe {
        match raw.type_index {
            ti::kTVMFFINone => Ok(py.None()),
            ti::kTVMFFIInt => Ok(raw.value.v_int64.into_pyobject(py)?.into_any().unbind()),
            ti::kTVMFFIBool => Ok(PyBool::new(py, raw.value.v_int64 != 0).to_owned().into_any().unbind()),
            ti::kTVMFFIFloat => Ok(raw.value.v_float64.into_pyobject(py)?.into_any().unbind()),
            ti::kTVMFFIOpaquePtr => opaque_ptr_to_py(py, raw.value.v_ptr as usize),
            ti::kTVMFFIDataType | ti::kTVMFFIDevice => crate::convert::value_classes::value_to_py(py, &raw),
            ti::kTVMFFIBigInt => {
                let _owner = OwnedAny(raw);
                crate::convert::big_int::to_py(py, &raw)
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
                let obj = crate::convert::string_values::string_object_to_py(raw.value.v_obj);
                if obj.is_null() {
                    Err(PyErr::fetch(py))
                } else {
                    Ok(Bound::from_owned_ptr(py, obj).unbind())
                }
            }
            // Shapes come back as `tether.Shape` tuples holding the object.
            ti::kTVMFFIShape => crate::convert::shape_values::shape_object_to_py(py, raw.value.v_obj),
            ti::kTVMFFIOpaquePyObject => {
                let h = raw.value.v_obj;
                let _owner = OwnedAny(raw);
                let cell = &*((h as *const u8).add(std::mem::size_of::<TVMFFIObject>()) as *const TVMFFIOpaqueObjectCell);
                Ok(Bound::from_borrowed_ptr(py, cell.handle as *mut ffi::PyObject).unbind())
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
                    Ok(Bound::from_owned_ptr(py, obj).unbind())
                }
            }
            // A tensor passed by pointer: a Tensor viewing it (as TVM-FFI).
            ti::kTVMFFIDLTensorPtr => any_to_py(
                py,
                crate::convert::dltensor_view::tensor_from_dltensor_ptr(
                    py,
                    raw.value.v_ptr as *const tether_sys::dlpack::DLTensor,
                )?,
            ),
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
pub unsafe fn view_to_py(py: Python<'_>, v: &TVMFFIAny) -> PyResult<Py<PyAny>> {
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
            ti::kTVMFFIBigInt => crate::convert::big_int::to_py(py, v),
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
                    crate::convert::string_values::raw_str_to_py(v.value.v_c_str)
                } else {
                    crate::convert::string_values::byte_array_to_py(v.value.v_ptr as *const TVMFFIByteArray)
                };
                if obj.is_null() {
                    Err(PyErr::fetch(py))
                } else {
                    Ok(Bound::from_owned_ptr(py, obj).unbind())
                }
            }
            _ => any_to_py(py, OwnedAny(*v)),
        }
    }
}
