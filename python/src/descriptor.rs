//! Reflected fields as Python data descriptors: `a.x` calls the field's
//! getter and returns through the one return path, so `a.x is a.x`.

use std::ffi::c_void;

use pyo3::exceptions::{PyAttributeError, PyTypeError};
use pyo3::prelude::*;
use tether_sys::abi::{field_flag, type_index as ti, TVMFFIAny, TVMFFIAnyValue, TVMFFIFieldInfo, TVMFFIFieldSetter};
use tether_sys::*;

use crate::convert::{self, handle_of, OwnedAny};
use crate::registry;

/// One reflected field of one FFI type.
#[pyclass(module = "tether._ffi", frozen)]
pub struct FieldDescriptor {
    info: *const TVMFFIFieldInfo,
    /// The type that declares the field; objects must be of it or derive from it.
    owner_index: i32,
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    owner: String,
}

// SAFETY: field infos live in the type registry for the whole process.
unsafe impl Send for FieldDescriptor {}
// SAFETY: as above; the descriptor itself is immutable.
unsafe impl Sync for FieldDescriptor {}

impl FieldDescriptor {
    /// # Safety
    /// `info` must be a field record of the registry.
    pub unsafe fn new(info: *const TVMFFIFieldInfo, owner_index: i32, owner: String) -> Self {
        // SAFETY: per the caller.
        let name = unsafe { registry::bytes_to_string(&(*info).name) };
        FieldDescriptor { info, owner_index, name, owner }
    }

    fn info(&self) -> &TVMFFIFieldInfo {
        // SAFETY: registry records live forever.
        unsafe { &*self.info }
    }

    fn address(&self, obj: &Bound<'_, PyAny>) -> PyResult<*mut c_void> {
        if !registry::is_wrapper(obj) {
            return Err(PyTypeError::new_err(format!(
                "field {:?} of {} read on a {} object",
                self.name,
                self.owner,
                convert::type_name(obj)
            )));
        }
        let h = handle_of(obj)?;
        // SAFETY: live handle (the wrapper owns +1).
        let index = unsafe { (*h).type_index };
        if !registry::derives_from(index, self.owner_index) {
            return Err(PyTypeError::new_err(format!(
                "field {:?} belongs to {}, not to {}",
                self.name,
                self.owner,
                registry::type_key_of(index)
            )));
        }
        // SAFETY: the field belongs to the object's type (the descriptor sits
        // on the class made for that type), so the offset is inside it.
        Ok(unsafe { (h as *mut u8).add(self.info().offset as usize) as *mut c_void })
    }
}

#[pymethods]
impl FieldDescriptor {
    fn __get__(slf: &Bound<'_, Self>, obj: Option<&Bound<'_, PyAny>>, _owner: Option<&Bound<'_, PyAny>>) -> PyResult<PyObject> {
        let py = slf.py();
        let Some(obj) = obj.filter(|o| !o.is_none()) else { return Ok(slf.clone().into_any().unbind()) };
        let this = slf.get();
        let addr = this.address(obj)?;
        let getter = this.info().getter.ok_or_else(|| PyAttributeError::new_err(format!("field {} has no getter", this.name)))?;
        let mut out = TVMFFIAny::NONE;
        // SAFETY: the field's own getter on its own address.
        if unsafe { getter(addr, &mut out) } != 0 {
            return Err(convert::take_ffi_error(py));
        }
        convert::any_to_py(py, OwnedAny(out))
    }

    fn __set__(&self, obj: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = obj.py();
        let info = self.info();
        if info.flags & field_flag::kWritable == 0 {
            return Err(PyAttributeError::new_err(format!("field {:?} of {} is read-only", self.name, self.owner)));
        }
        self.set_unchecked(py, obj, value)
    }

    fn __delete__(&self, _obj: &Bound<'_, PyAny>) -> PyResult<()> {
        Err(PyAttributeError::new_err(format!("field {:?} of {} cannot be deleted", self.name, self.owner)))
    }

    /// Write the field even when it is read-only (used by constructors).
    fn set_unchecked(&self, py: Python<'_>, obj: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let info = self.info();
        let addr = self.address(obj)?;
        let v = convert::py_to_any(py, value)?;
        if info.setter.is_null() {
            return Err(PyAttributeError::new_err(format!("field {:?} of {} has no setter", self.name, self.owner)));
        }
        let rc = if info.flags & field_flag::kSetterIsFunctionObj != 0 {
            let mut args = [
                TVMFFIAny { type_index: ti::kTVMFFIOpaquePtr, small_str_len: 0, value: TVMFFIAnyValue { v_ptr: addr } },
                v.0,
            ];
            let mut result = TVMFFIAny::NONE;
            // SAFETY: the registry keeps the setter Function alive; `v` keeps the value alive.
            let rc = unsafe { TVMFFIFunctionCall(info.setter, args.as_mut_ptr(), 2, &mut result) };
            drop(OwnedAny(result));
            rc
        } else {
            // SAFETY: a plain setter function pointer registered for this field.
            let setter: TVMFFIFieldSetter = unsafe { std::mem::transmute(info.setter) };
            // SAFETY: the field's own setter on its own address.
            unsafe { setter(addr, &v.0) }
        };
        drop(v);
        if rc != 0 {
            return Err(convert::take_ffi_error(py));
        }
        Ok(())
    }

    fn __repr__(&self) -> String {
        format!("<field {} of {}>", self.name, self.owner)
    }

    /// The field's static type index.
    #[getter]
    fn static_type_index(&self) -> i32 {
        self.info().field_static_type_index
    }

    #[getter]
    fn flags(&self) -> i64 {
        self.info().flags
    }
}

