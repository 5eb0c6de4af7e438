//! Reflected fields as Python data descriptors: `a.x` calls the field's
//! getter and returns through the one return path, so `a.x is a.x`.
//!
//! Reads are the hot path of every field access, so the descriptor's
//! `tp_descr_get` is a plain C slot ([`field_descr_get`]) rather than pyo3's
//! method trampoline: a wrapper check, the type check against the owner,
//! then the field read in place when its storage is one of TVM-FFI's
//! plain layouts (an `Any`, an `int64_t`, an object pointer; see
//! [`DirectRead`]) or else its getter, then the return path. Anything unusual (a non-wrapper, a moved
//! object, a foreign type) falls to the pyo3 `__get__`, which raises the
//! error. Python subclasses (`tether.dataclasses.FieldProperty`, which adds
//! the frozen check and value conversion on writes) get the same slot
//! through [`install_field_get`], since CPython would otherwise give them
//! the `__get__` wrapper's pyo3 function.

use std::ffi::c_void;

use pyo3::exceptions::{PyAttributeError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyType};
use tether_sys::abi::{field_flag, type_index as ti, TVMFFIAny, TVMFFIAnyValue, TVMFFIFieldInfo, TVMFFIFieldSetter, TVMFFIObject};
use tether_sys::*;

use crate::convert::ffi_to_py;
use crate::convert::owned_any::OwnedAny;
use crate::convert::py_to_ffi;
use crate::convert::registry;
use crate::convert::wrapper_access::{self, handle_of};
#[cfg(not(Py_GIL_DISABLED))] // the Active shortcut of field reads is for GIL builds
use crate::tie::binding::{Binding, TAGS};
use crate::tie::tie_state::CObject;
use crate::convert::error_bridge::result_into_ptr;

/// One reflected field of one FFI type.
#[pyclass(module = "tether._ffi", frozen, subclass)]
pub struct FieldDescriptor {
    info: *const TVMFFIFieldInfo,
    /// The type that declares the field; objects must be of it or derive from it.
    owner_index: i32,
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    owner: String,
    /// How reads may skip the getter (see [`DirectRead`]).
    direct: DirectRead,
}

/// Field storage a read can use in place, without calling the getter:
/// TVM-FFI's reflection stores an `Any` field as a 16-byte `TVMFFIAny`,
/// an `int64_t` as 8 bytes and an object reference as the object pointer
/// (NULL for None). Strings and bytes, other layouts and fields without a
/// getter go through the getter path.
#[derive(Clone, Copy, PartialEq, Eq)]
enum DirectRead {
    Getter,
    Any,
    Int,
    Object,
}

impl DirectRead {
    fn of(info: &TVMFFIFieldInfo) -> Self {
        if info.getter.is_none() {
            return DirectRead::Getter; // unreadable: the slow path raises
        }
        match (info.field_static_type_index, info.size) {
            (ti::kTVMFFIAny, 16) => DirectRead::Any,
            (ti::kTVMFFIInt, 8) => DirectRead::Int,
            (ti::kTVMFFIStr | ti::kTVMFFIBytes | ti::kTVMFFIShape, _) => DirectRead::Getter,
            (t, 8) if t >= ti::kTVMFFIStaticObjectBegin => DirectRead::Object,
            _ => DirectRead::Getter,
        }
    }
}

/// The wrapper for the object `h` stored in a field (borrowed from it): a
/// new reference, or NULL with the Python exception set. Raw pointers from
/// end to end, as the read slot returns them: a `PyResult` on this path
/// costs as much in moves as the rest of an Active read.
///
/// # Safety
/// GIL held; `h` a live object kept alive by the field for the call.
unsafe fn object_to_py(py: Python<'_>, h: *mut TVMFFIObject) -> *mut ffi::PyObject {
    // SAFETY: per the caller.
    unsafe {
        if (*h).type_index == ti::kTVMFFIShape {
            // A value class (`tether.Shape`), never a tied wrapper.
            TVMFFIObjectIncRef(h as *mut c_void);
            return result_into_ptr(py, ffi_to_py::any_to_py(py, OwnedAny::from_handle(h)));
        }
        // With the GIL, an Active binding names a live wrapper that owns
        // +1 on `h`: hand it out without touching the FFI reference count
        // (try_incref refuses a wrapper whose count already reached zero,
        // its teardown under way; the return path then decides, as it
        // would). Free-threaded builds take the one return path, which
        // does the locking.
        #[cfg(not(Py_GIL_DISABLED))]
        {
            let cur = Binding::of(h).load();
            if cur != 0 && cur & TAGS == 0 && crate::tie::tying_lock::try_incref(cur as *mut ffi::PyObject) {
                return cur as *mut ffi::PyObject;
            }
        }
        // Otherwise (a kept wrapper to revive, none at all) the return path
        // itself, with the class from the lock-free table: for every object
        // but strings, bytes, big ints and opaque Python objects (which come
        // back as Python values) `any_to_py` would only dispatch on the type index
        // to get there. An unregistered type asks the class factory there.
        TVMFFIObjectIncRef(h as *mut c_void);
        let index = (*h).type_index;
        let cls = match index {
            ti::kTVMFFIStr | ti::kTVMFFIBytes | ti::kTVMFFIOpaquePyObject | ti::kTVMFFIBigInt | ti::kTVMFFIShape => None,
            _ => registry::lookup(index),
        };
        match cls {
            // NULL with the exception set on failure, as returned.
            Some(cls) => crate::tie::tie_state::make_ret_object(h, cls),
            None => result_into_ptr(py, ffi_to_py::any_to_py(py, OwnedAny::from_handle(h))),
        }
    }
}

/// Read a field in place (a `direct` other than `Getter`): a new
/// reference, or NULL with the Python exception set.
///
/// # Safety
/// GIL held; `addr` is the field's address in a live object of its type.
unsafe fn read_direct(py: Python<'_>, direct: DirectRead, addr: *mut u8) -> *mut ffi::PyObject {
    // SAFETY: per the caller; the storage is as `DirectRead::of` found it.
    unsafe {
        match direct {
            DirectRead::Int => ffi::PyLong_FromLongLong(*(addr as *const i64)),
            DirectRead::Object => {
                let h = *(addr as *const *mut TVMFFIObject);
                if h.is_null() {
                    let none = ffi::Py_None();
                    ffi::Py_INCREF(none);
                    none
                } else {
                    object_to_py(py, h)
                }
            }
            _ => {
                let v = &*(addr as *const TVMFFIAny);
                if v.type_index >= ti::kTVMFFIStaticObjectBegin
                    && v.type_index != ti::kTVMFFIStr
                    && v.type_index != ti::kTVMFFIBytes
                    && v.type_index != ti::kTVMFFIBigInt
                    && !v.value.v_obj.is_null()
                {
                    object_to_py(py, v.value.v_obj)
                } else {
                    result_into_ptr(py, ffi_to_py::view_to_py(py, v))
                }
            }
        }
    }
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
        // SAFETY: per the caller.
        let direct = DirectRead::of(unsafe { &*info });
        FieldDescriptor { info, owner_index, name, owner, direct }
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
                wrapper_access::type_name(obj)
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

/// `tp_descr_get` of field descriptors: the read path without a Python
/// or pyo3 frame.
///
/// # Safety
/// Called by CPython with the GIL held; `desc` is a `FieldDescriptor` (or a
/// subclass instance), `obj` NULL or a live object.
unsafe extern "C" fn field_descr_get(
    desc: *mut ffi::PyObject,
    obj: *mut ffi::PyObject,
    owner: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: per the caller.
    unsafe {
        if obj.is_null() || obj == ffi::Py_None() {
            ffi::Py_INCREF(desc);
            return desc;
        }
        let py = Python::assume_attached();
        // Borrowed: CPython holds the descriptor for the call.
        let desc = pyo3::Borrowed::from_ptr(py, desc);
        let this = desc.cast_unchecked::<FieldDescriptor>();
        let d = this.get();
        let fast = registry::is_wrapper_ptr(py, obj).then(|| (*(obj as *mut CObject)).chandle).filter(|h| {
            !h.is_null() && ((**h).type_index == d.owner_index || registry::derives_from((**h).type_index, d.owner_index))
        });
        // Free-threaded: in-place reads race other threads' writes, so
        // reads take the value through its getter under the field lock.
        let direct = if cfg!(Py_GIL_DISABLED) && d.info().getter.is_some() { DirectRead::Getter } else { d.direct };
        match (fast, d.info().getter) {
            (Some(h), _) if direct != DirectRead::Getter => {
                // SAFETY: as below: the field is inside the checked object.
                read_direct(py, d.direct, (h as *mut u8).add(d.info().offset as usize))
            }
            (Some(h), Some(getter)) => {
                let mut out = TVMFFIAny::NONE;
                let guard = crate::tie::tying_lock::field_access();
                // SAFETY: the field belongs to the object's type (checked), so
                // its offset is inside the object; the wrapper owns +1 on `h`.
                let rc = getter((h as *mut u8).add(d.info().offset as usize) as *mut c_void, &mut out);
                drop(guard);
                if rc != 0 {
                    result_into_ptr(py, Err(crate::convert::error_bridge::take_ffi_error(py)))
                } else {
                    result_into_ptr(py, ffi_to_py::any_to_py(py, OwnedAny(out)))
                }
            }
            _ => {
                // The slow path raises the precise error.
                let obj = Bound::from_borrowed_ptr(py, obj);
                let owner = (!owner.is_null()).then(|| Bound::from_borrowed_ptr(py, owner));
                result_into_ptr(py, FieldDescriptor::__get__(&this, Some(&obj), owner.as_ref()))
            }
        }
    }
}

/// Give `cls` (FieldDescriptor or a Python subclass not defining
/// `__get__`) the native read slot.
pub fn install_field_get(cls: &Bound<'_, PyType>) -> PyResult<()> {
    let py = cls.py();
    if !cls.is_subclass_of::<FieldDescriptor>()? {
        return Err(PyTypeError::new_err(format!("{} is not a field descriptor class", cls.name()?)));
    }
    let own_get = cls.getattr(pyo3::intern!(py, "__dict__"))?.contains("__get__")?;
    if own_get && !cls.is(&py.get_type::<FieldDescriptor>()) {
        return Err(PyTypeError::new_err(format!("{} defines its own __get__", cls.name()?)));
    }
    // SAFETY: replacing one slot of a heap type with a function of the
    // same signature and behaviour (the pyo3 `__get__` stays reachable by
    // name); PyType_Modified drops cached lookups.
    unsafe {
        let tp = cls.as_ptr() as *mut ffi::PyTypeObject;
        (*tp).tp_descr_get = Some(field_descr_get);
        ffi::PyType_Modified(tp);
    }
    Ok(())
}

#[pymethods]
impl FieldDescriptor {
    /// Python subclasses are built from a core descriptor (their first
    /// arguments: a name, then the descriptor); further arguments are the
    /// subclass's own (its `__init__` takes them).
    #[new]
    #[pyo3(signature = (*args, **_kwargs))]
    fn py_new(args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let core = args.get_item(1).map_err(|_| PyTypeError::new_err("a field descriptor needs (name, core descriptor, ...)"))?;
        let core = core.cast::<FieldDescriptor>()?.get();
        Ok(FieldDescriptor {
            info: core.info,
            owner_index: core.owner_index,
            name: core.name.clone(),
            owner: core.owner.clone(),
            direct: core.direct,
        })
    }

    fn __get__(slf: &Bound<'_, Self>, obj: Option<&Bound<'_, PyAny>>, _owner: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let Some(obj) = obj.filter(|o| !o.is_none()) else { return Ok(slf.clone().into_any().unbind()) };
        let this = slf.get();
        let addr = this.address(obj)?;
        let getter = this.info().getter.ok_or_else(|| PyAttributeError::new_err(format!("field {} has no getter", this.name)))?;
        let mut out = TVMFFIAny::NONE;
        let guard = crate::tie::tying_lock::field_access();
        // SAFETY: the field's own getter on its own address.
        let rc = unsafe { getter(addr, &mut out) };
        drop(guard);
        if rc != 0 {
            return Err(crate::convert::error_bridge::take_ffi_error(py));
        }
        ffi_to_py::any_to_py(py, OwnedAny(out))
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
        let v = py_to_ffi::py_to_any(py, value)?;
        if info.setter.is_null() {
            return Err(PyAttributeError::new_err(format!("field {:?} of {} has no setter", self.name, self.owner)));
        }
        let guard = crate::tie::tying_lock::field_access();
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
        drop(guard);
        drop(v);
        if rc != 0 {
            return Err(crate::convert::error_bridge::take_ffi_error(py));
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

    /// The field's documentation as registered; None when it has none
    /// (`__doc__` of the Python field classes reads it).
    #[getter]
    fn doc(&self) -> Option<String> {
        let doc = self.info().doc;
        if doc.data.is_null() || doc.size == 0 {
            return None;
        }
        // SAFETY: the registry keeps field records (and their strings) for the process.
        let bytes = unsafe { std::slice::from_raw_parts(doc.data as *const u8, doc.size) };
        Some(String::from_utf8_lossy(bytes).into_owned())
    }
}

