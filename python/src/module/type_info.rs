//! The type table read from Python: type keys to indices, a type's
//! fields (with their native descriptors) and methods, and type
//! attributes.

use std::ffi::c_void;
use std::ptr;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use tether_sys::abi::TVMFFIAny;
use tether_sys::*;

use crate::convert::error_bridge;
use crate::convert::ffi_to_py;
use crate::convert::owned_any::OwnedAny;
use crate::convert::registry;
use crate::core_link::byte_array;
use crate::module::descriptor;

#[pyfunction]
pub(crate) fn type_key_to_index(key: &str) -> Option<i32> {
    let k = byte_array(key);
    let mut out = -1;
    // SAFETY: valid key and output slot; a miss raises, which we clear.
    if unsafe { TVMFFITypeKeyToIndex(&k, &mut out) } != 0 {
        let mut err: *mut c_void = ptr::null_mut();
        // SAFETY: take and drop the raised KeyError.
        unsafe {
            TVMFFIErrorMoveFromRaised(&mut err);
            if !err.is_null() {
                TVMFFIObjectDecRef(err);
            }
        }
        return None;
    }
    Some(out)
}

/// `{key, index, depth, parent, fields: [(name, descriptor)], methods: [(name, Function)]}`
/// for the type's own fields and methods.
#[pyfunction]
pub(crate) fn type_info(py: Python<'_>, type_index: i32) -> PyResult<Py<PyAny>> {
    // SAFETY: NULL or a record living for the process.
    let info = unsafe { TVMFFIGetTypeInfo(type_index) };
    if info.is_null() {
        return Err(PyValueError::new_err(format!("unknown type index {type_index}")));
    }
    // SAFETY: as above; arrays sized by their counts.
    unsafe {
        let info = &*info;
        let key = registry::bytes_to_string(&info.type_key);
        let d = PyDict::new(py);
        d.set_item("key", &key)?;
        d.set_item("index", info.type_index)?;
        d.set_item("depth", info.type_depth)?;
        let parent = if info.type_depth > 0 { (**info.type_ancestors.add(info.type_depth as usize - 1)).type_index } else { -1 };
        d.set_item("parent", parent)?;
        let ancestors = PyList::empty(py);
        for i in 0..info.type_depth as usize {
            ancestors.append((**info.type_ancestors.add(i)).type_index)?;
        }
        d.set_item("ancestors", ancestors)?;
        let fields = PyList::empty(py);
        let field_details = PyList::empty(py);
        for i in 0..info.num_fields as usize {
            let f = info.fields.add(i);
            let desc = Py::new(py, descriptor::FieldDescriptor::new(f, type_index, key.clone()))?;
            let name = registry::bytes_to_string(&(*f).name);
            let fd = PyDict::new(py);
            fd.set_item("name", &name)?;
            fd.set_item("doc", registry::bytes_to_string(&(*f).doc))?;
            fd.set_item("metadata", registry::bytes_to_string(&(*f).metadata))?;
            fd.set_item("flags", (*f).flags)?;
            fd.set_item("size", (*f).size)?;
            fd.set_item("alignment", (*f).alignment)?;
            fd.set_item("offset", (*f).offset)?;
            fd.set_item("field_static_type_index", (*f).field_static_type_index)?;
            fd.set_item("descriptor", desc.clone_ref(py))?;
            field_details.append(fd)?;
            fields.append((name, desc))?;
        }
        d.set_item("fields", fields)?;
        d.set_item("field_details", field_details)?;
        let method_details = PyList::empty(py);
        let methods = PyList::empty(py);
        for i in 0..info.num_methods as usize {
            let m = &*info.methods.add(i);
            let mut owned = TVMFFIAny::NONE;
            if TVMFFIAnyViewToOwnedAny(&m.method, &mut owned) != 0 {
                return Err(error_bridge::take_ffi_error(py));
            }
            let func = ffi_to_py::any_to_py(py, OwnedAny(owned))?;
            let md = PyDict::new(py);
            md.set_item("name", registry::bytes_to_string(&m.name))?;
            md.set_item("doc", registry::bytes_to_string(&m.doc))?;
            md.set_item("metadata", registry::bytes_to_string(&m.metadata))?;
            md.set_item("flags", m.flags)?;
            md.set_item("func", func.clone_ref(py))?;
            method_details.append(md)?;
            methods.append((registry::bytes_to_string(&m.name), func))?;
        }
        d.set_item("methods", methods)?;
        d.set_item("method_details", method_details)?;
        Ok(d.into_any().unbind())
    }
}

/// A type attribute's value, or None.
#[pyfunction]
pub(crate) fn type_attr(py: Python<'_>, type_index: i32, name: &str) -> PyResult<Py<PyAny>> {
    let n = byte_array(name);
    // SAFETY: valid name; NULL or a column living for the process.
    let col = unsafe { TVMFFIGetTypeAttrColumn(&n) };
    if col.is_null() {
        return Ok(py.None());
    }
    // SAFETY: index checked against the column bounds.
    unsafe {
        let c = &*col;
        let i = type_index - c.begin_index;
        if i < 0 || i >= c.size {
            return Ok(py.None());
        }
        let mut owned = TVMFFIAny::NONE;
        if TVMFFIAnyViewToOwnedAny(c.data.add(i as usize), &mut owned) != 0 {
            return Err(error_bridge::take_ffi_error(py));
        }
        ffi_to_py::any_to_py(py, OwnedAny(owned))
    }
}
