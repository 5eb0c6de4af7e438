//! Strings and bytes coming back from the FFI, as TVM-FFI's Python layer
//! returns them.
//!
//! A heap `ffi.String`/`ffi.Bytes` object (type index 65/66) comes back as
//! an instance of `tether.core.String`/`Bytes` — a `str`/`bytes` subclass
//! whose `_tvm_ffi_cached_object` holds a wrapper of that object, so
//! passing it back passes the object without a copy. The wrapper is not
//! tied (TVM-FFI's "value-typed, no identity" rule for these classes): it
//! is a fresh, unbound wrapper that owns +1 on the object and whose death
//! leaves the handle's binding alone. Small inline strings (SmallStr,
//! SmallBytes) and borrowed C strings/byte arrays handed to callbacks
//! (RawStr, ByteArrayPtr) come back as plain `str`/`bytes`.
//!
//! The two classes are registered once by `tether.core` at import
//! ([`register_string_classes`]); until then heap strings come back as
//! plain values too. The module also offers the String/Bytes object
//! helpers `to_object` and `string_object_bytes`.
//!
//! SAFETY invariants of this module: functions run with the GIL held; the
//! registered classes are kept alive forever (the slots hold a reference
//! that is never released).

use std::ffi::{c_char, c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString, PyType};
use pyo3::ffi;
use tether_sys::abi::{type_index as ti, TVMFFIByteArray, TVMFFIObject};
use tether_sys::*;

use crate::convert::registry;
use crate::convert::type_attrs;
use crate::convert::wrapper_access;
use crate::tie::tie_state;

/// `tether.core.String` and `tether.core.Bytes` (NULL until registered).
static STRING_CLASS: AtomicPtr<ffi::PyTypeObject> = AtomicPtr::new(ptr::null_mut());
static BYTES_CLASS: AtomicPtr<ffi::PyTypeObject> = AtomicPtr::new(ptr::null_mut());
/// Where a `String` keeps `_tvm_ffi_cached_object` when it is a plain
/// object slot (`__slots__`): its offset in the instance, else 0 (set by
/// attribute assignment). Written with the class, under the GIL.
static STRING_SLOT: AtomicUsize = AtomicUsize::new(0);

/// `_ffi.register_string_classes(String, Bytes)`: the `str` and `bytes`
/// subclasses heap strings and bytes come back as. A later call replaces
/// the earlier classes (which stay alive: values of them may exist).
#[pyfunction]
pub fn register_string_classes(string_cls: &Bound<'_, PyType>, bytes_cls: &Bound<'_, PyType>) -> PyResult<()> {
    let py = string_cls.py();
    if !string_cls.is_subclass(&py.get_type::<PyString>())? {
        return Err(PyTypeError::new_err(format!("{} is not a subclass of str", string_cls.name()?)));
    }
    if !bytes_cls.is_subclass(&py.get_type::<PyBytes>())? {
        return Err(PyTypeError::new_err(format!("{} is not a subclass of bytes", bytes_cls.name()?)));
    }
    // SAFETY: a live type; GIL held.
    let slot = unsafe { object_slot_offset(string_cls.as_ptr() as *mut ffi::PyTypeObject) };
    // Kept forever: released nowhere (module invariant). The slot offset
    // goes first: a reader that sees the new class sees its offset too
    // (both are written and read with the GIL held).
    STRING_SLOT.store(slot, Ordering::Relaxed);
    STRING_CLASS.store(string_cls.clone().into_ptr() as *mut ffi::PyTypeObject, Ordering::Release);
    BYTES_CLASS.store(bytes_cls.clone().into_ptr() as *mut ffi::PyTypeObject, Ordering::Release);
    Ok(())
}

/// The offset of `_tvm_ffi_cached_object` in instances of `cls` if it is
/// a writable object slot (a `__slots__` member of `cls` or a base), else 0.
///
/// # Safety
/// GIL held; `cls` a live type.
unsafe fn object_slot_offset(cls: *mut ffi::PyTypeObject) -> usize {
    // SAFETY: per the caller; a member descriptor holds a PyMemberDef
    // (pyo3 declares the field with another pointer type) and its owner.
    unsafe {
        let name = Bound::from_borrowed_ptr(Python::assume_attached(), cached_object_name()).cast_into_unchecked::<PyString>();
        let d = type_attrs::type_lookup(cls, &name);
        if d.is_null() || ffi::Py_TYPE(d) != ptr::addr_of_mut!(ffi::PyMemberDescr_Type) {
            return 0;
        }
        let descr = d as *mut ffi::PyMemberDescrObject;
        let member = (*descr).d_member as *const ffi::PyMemberDef;
        let owner = (*descr).d_common.d_type;
        if member.is_null() || ffi::PyType_IsSubtype(cls, owner) == 0 {
            return 0;
        }
        let m = &*member;
        if m.type_code != ffi::Py_T_OBJECT_EX || m.flags & ffi::Py_READONLY != 0 || m.offset <= 0 {
            return 0;
        }
        m.offset as usize
    }
}

/// The byte array of a live String or Bytes object.
///
/// # Safety
/// `h` is a live String/Bytes object.
unsafe fn content_of<'a>(h: *mut TVMFFIObject) -> &'a [u8] {
    // SAFETY: the byte array follows the header and points into the object.
    unsafe {
        let b = &*((h as *const u8).add(std::mem::size_of::<TVMFFIObject>()) as *const TVMFFIByteArray);
        if b.size == 0 {
            &[]
        } else {
            std::slice::from_raw_parts(b.data as *const u8, b.size)
        }
    }
}

/// A new `str` (UTF-8, strict: UnicodeDecodeError otherwise) or `bytes`
/// with `b`'s content, or NULL with the exception set.
///
/// # Safety
/// GIL held.
unsafe fn plain_value(b: &[u8], is_str: bool) -> *mut ffi::PyObject {
    // SAFETY: a valid buffer of `len` bytes.
    unsafe {
        let (data, len) = (b.as_ptr() as *const c_char, b.len() as ffi::Py_ssize_t);
        if is_str {
            ffi::PyUnicode_DecodeUTF8(data, len, ptr::null())
        } else {
            ffi::PyBytes_FromStringAndSize(data, len)
        }
    }
}

/// Convert the heap String/Bytes `h` (the caller's +1 is consumed) to a
/// `tether.core.String`/`Bytes` holding it, or to a plain value before
/// the classes are registered. A new reference, or NULL with the Python
/// exception set.
///
/// # Safety
/// GIL held; `h` a live String or Bytes object on which the caller owns +1.
pub unsafe fn string_object_to_py(h: *mut TVMFFIObject) -> *mut ffi::PyObject {
    // SAFETY: per the caller; every reference made here is released on
    // each failure path, and the +1 on `h` moves into the wrapper (or is
    // dropped) exactly once.
    unsafe {
        let is_str = (*h).type_index == ti::kTVMFFIStr;
        let cls = if is_str { &STRING_CLASS } else { &BYTES_CLASS }.load(Ordering::Acquire);
        // A string lent by a Python object is rebuilt from that object.
        let lender = crate::convert::lent_strings::lender_of(h);
        let value = if cls.is_null() {
            match lender {
                Some(owner) => {
                    ffi::Py_INCREF(owner);
                    owner
                }
                None => plain_value(content_of(h), is_str),
            }
        } else if is_str {
            match lender {
                Some(owner) => str_subclass_of(cls, owner),
                None => new_str_subclass(cls, content_of(h)),
            }
        } else {
            new_bytes_subclass(cls, content_of(h))
        };
        if value.is_null() || cls.is_null() {
            TVMFFIObjectDecRef(h as *mut c_void);
            return value;
        }
        let wrapper_cls = registry::lookup((*h).type_index).unwrap_or_else(|| {
            registry::base(Python::assume_attached()).as_ptr() as *mut ffi::PyTypeObject
        });
        let wrapper = tie_state::untied_wrapper(h, wrapper_cls);
        if wrapper.is_null() {
            ffi::Py_DECREF(value);
            return ptr::null_mut();
        }
        let slot = STRING_SLOT.load(Ordering::Relaxed);
        if is_str && slot != 0 {
            // The instance is new, so its slot is still NULL: it takes the
            // wrapper's reference.
            *((value as *mut u8).add(slot) as *mut *mut ffi::PyObject) = wrapper;
            return value;
        }
        let rc = ffi::PyObject_SetAttr(value, cached_object_name(), wrapper);
        ffi::Py_DECREF(wrapper);
        if rc != 0 {
            ffi::Py_DECREF(value);
            return ptr::null_mut();
        }
        value
    }
}

/// `str.__new__(cls, text)` for UTF-8 `b` (the class's own `__new__`,
/// Python code, is not run): a new reference or NULL with the exception set.
///
/// # Safety
/// GIL held; `cls` a live subclass of `str`.
unsafe fn new_str_subclass(cls: *mut ffi::PyTypeObject, b: &[u8]) -> *mut ffi::PyObject {
    // SAFETY: per the caller; every temporary is released once.
    unsafe {
        let text = plain_value(b, true);
        if text.is_null() {
            return text;
        }
        let value = str_subclass_of(cls, text);
        ffi::Py_DECREF(text);
        value
    }
}

/// `str.__new__(cls, text)` for an exact `str` `text` (borrowed).
///
/// # Safety
/// GIL held; `cls` a live subclass of `str`, `text` a live `str`.
unsafe fn str_subclass_of(cls: *mut ffi::PyTypeObject, text: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: per the caller; the argument tuple is released once.
    unsafe {
        let args = ffi::PyTuple_Pack(1, text);
        if args.is_null() {
            return args;
        }
        let value = match (*ptr::addr_of_mut!(ffi::PyUnicode_Type)).tp_new {
            Some(new) => new(cls, args, ptr::null_mut()),
            None => ptr::null_mut(),
        };
        ffi::Py_DECREF(args);
        value
    }
}

/// `bytes.__new__(cls, b)`, built in place as CPython builds a bytes
/// subclass instance (allocation of the class's size, content copied,
/// hash not yet computed) without the intermediate `bytes` object.
///
/// # Safety
/// GIL held; `cls` a live subclass of `bytes`.
#[allow(deprecated)] // `ob_shash`: still the hash cache of the CPython versions built for
unsafe fn new_bytes_subclass(cls: *mut ffi::PyTypeObject, b: &[u8]) -> *mut ffi::PyObject {
    // SAFETY: per the caller; the allocation holds `b.len()` items plus the
    // zeroed terminator (CPython's generic allocation adds one item).
    unsafe {
        let alloc = (*cls).tp_alloc.unwrap_or(ffi::PyType_GenericAlloc);
        let value = alloc(cls, b.len() as ffi::Py_ssize_t);
        if value.is_null() {
            return value;
        }
        let o = value as *mut ffi::PyBytesObject;
        ptr::copy_nonoverlapping(b.as_ptr(), ptr::addr_of_mut!((*o).ob_sval) as *mut u8, b.len());
        *(ptr::addr_of_mut!((*o).ob_sval) as *mut u8).add(b.len()) = 0;
        (*o).ob_shash = -1;
        value
    }
}

/// The interned attribute name `_tvm_ffi_cached_object` (borrowed).
///
/// # Safety
/// GIL held.
unsafe fn cached_object_name() -> *mut ffi::PyObject {
    // SAFETY: per the caller.
    let py = unsafe { Python::assume_attached() };
    pyo3::intern!(py, "_tvm_ffi_cached_object").as_ptr()
}

/// A borrowed C string (`kTVMFFIRawStr`) as a plain `str`, or NULL with
/// the exception set.
///
/// # Safety
/// GIL held; `s` a NUL-terminated string alive for the call (or NULL).
pub unsafe fn raw_str_to_py(s: *const c_char) -> *mut ffi::PyObject {
    // SAFETY: per the caller.
    unsafe {
        if s.is_null() {
            PyTypeError::new_err("argument C string is NULL").restore(Python::assume_attached());
            return ptr::null_mut();
        }
        plain_value(CStr::from_ptr(s).to_bytes(), true)
    }
}

/// A borrowed byte array (`kTVMFFIByteArrayPtr`) as plain `bytes`, or
/// NULL with the exception set.
///
/// # Safety
/// GIL held; `b` a valid byte array alive for the call (or NULL).
pub unsafe fn byte_array_to_py(b: *const TVMFFIByteArray) -> *mut ffi::PyObject {
    // SAFETY: per the caller.
    unsafe {
        if b.is_null() {
            PyTypeError::new_err("argument byte array is NULL").restore(Python::assume_attached());
            return ptr::null_mut();
        }
        let b = &*b;
        let s = if b.size == 0 { &[][..] } else { std::slice::from_raw_parts(b.data as *const u8, b.size) };
        plain_value(s, false)
    }
}

/// `_ffi.string_object_bytes(obj)`: the content of a String or Bytes
/// object wrapper.
#[pyfunction]
pub fn string_object_bytes<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let h = wrapper_access::handle_of(crate::convert::wrapper_access::wrapper(obj)?)?;
    // SAFETY: live handle (the wrapper owns +1), checked to be a String or Bytes.
    unsafe {
        let t = (*h).type_index;
        if t != ti::kTVMFFIStr && t != ti::kTVMFFIBytes {
            return Err(PyTypeError::new_err(format!("expected ffi.String or ffi.Bytes, got {}", registry::type_key_of(t))));
        }
        Ok(PyBytes::new(py, content_of(h)))
    }
}
