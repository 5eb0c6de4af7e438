//! Which Python class wraps each FFI type index.
//!
//! Classes are registered by `tether.register_object` / `py_class`, or made
//! on demand by the Python factory (`tether.core._fallback_class`) the first
//! time an unregistered type comes back from the FFI. Registered classes
//! live as long as the process.

use std::collections::HashMap;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use pyo3::ffi;
use tether_sys::abi::TVMFFIByteArray;
use tether_sys::*;

/// The class table: type index -> wrapper class, read on every object
/// returned to Python, so reads take no lock. It is two-level: a fixed
/// directory of chunk pointers, each chunk a leaked array of class
/// pointers, created on first registration in its range and never freed.
/// Registration (rare) is serialised by `CLASSES_WRITE`; a reader sees a
/// chunk and an entry either before or after a registration, both valid
/// classes kept alive forever. Indices past the directory's range use the
/// locked overflow map.
const CHUNK: usize = 1024;
const CHUNKS: usize = 64;
type Chunk = [AtomicPtr<ffi::PyTypeObject>; CHUNK];
static CLASS_CHUNKS: [AtomicPtr<Chunk>; CHUNKS] = [const { AtomicPtr::new(std::ptr::null_mut()) }; CHUNKS];
static CLASSES_WRITE: Mutex<()> = Mutex::new(());

/// A type pointer stored across threads; the registry holds a reference.
#[derive(Clone, Copy)]
struct TypePtr(*mut ffi::PyTypeObject);
// SAFETY: the pointee is kept alive forever and only used with the GIL held.
unsafe impl Send for TypePtr {}
static CLASS_OVERFLOW: Mutex<Option<HashMap<i32, TypePtr>>> = Mutex::new(None);

static FACTORY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static BASE: PyOnceLock<Py<PyType>> = PyOnceLock::new();

pub fn set_base(py: Python<'_>, base: Py<PyType>) {
    let _ = BASE.set(py, base);
}

/// The wrapper base type (`tether._ffi.CObject`).
pub fn base(py: Python<'_>) -> &Bound<'_, PyType> {
    BASE.get(py).expect("module initialised").bind(py)
}

/// Whether `obj` is a wrapper (an instance of the base type).
pub fn is_wrapper(obj: &Bound<'_, PyAny>) -> bool {
    // SAFETY: a live object; the token proves the GIL.
    unsafe { is_wrapper_ptr(obj.py(), obj.as_ptr()) }
}

/// [`is_wrapper`] on a raw object pointer.
///
/// Every wrapper class is given the tying `tp_alloc` when it is created
/// (`tie_state::install_slots`, from `__init_subclass__`) and no other
/// class has it, so comparing that slot answers for nearly every wrapper
/// with two loads; the subclass check (a walk of the MRO) remains for a
/// class whose `__init_subclass__` chain skipped the installation, and for
/// the (harmless) case of the slot holding another address of the same
/// function, which the lint below warns about.
///
/// # Safety
/// `obj` is a live object; GIL held.
#[inline]
#[allow(unpredictable_function_pointer_comparisons)]
pub unsafe fn is_wrapper_ptr(py: Python<'_>, obj: *mut ffi::PyObject) -> bool {
    // SAFETY: per the caller; type slots are read-only once the type is in use.
    unsafe {
        (*ffi::Py_TYPE(obj)).tp_alloc == Some(crate::tie::tie_state::tp_alloc as _)
            || ffi::PyObject_TypeCheck(obj, base(py).as_ptr() as *mut ffi::PyTypeObject) != 0
    }
}

pub fn set_factory(py: Python<'_>, f: Py<PyAny>) -> PyResult<()> {
    FACTORY.set(py, f).map_err(|_| PyValueError::new_err("class factory already set"))
}

/// Register `cls` for `type_index` (replacing any earlier class).
pub fn register(py: Python<'_>, type_index: i32, cls: &Bound<'_, PyType>) -> PyResult<()> {
    if type_index < 0 {
        return Err(PyValueError::new_err(format!("bad type index {type_index}")));
    }
    if !cls.is_subclass(base(py))? {
        return Err(PyTypeError::new_err(format!("{} is not a subclass of tether.Object", cls.name()?)));
    }
    let p = cls.clone().unbind().into_ptr() as *mut ffi::PyTypeObject; // kept forever
    let _guard = CLASSES_WRITE.lock().unwrap();
    let i = type_index as usize;
    let Some(dir) = CLASS_CHUNKS.get(i / CHUNK) else {
        CLASS_OVERFLOW.lock().unwrap().get_or_insert_with(HashMap::new).insert(type_index, TypePtr(p));
        return Ok(());
    };
    let mut chunk = dir.load(Ordering::Acquire);
    if chunk.is_null() {
        let fresh: Box<Chunk> = Box::new([const { AtomicPtr::new(std::ptr::null_mut()) }; CHUNK]);
        chunk = Box::into_raw(fresh); // leaked: readers may hold it at any time
        dir.store(chunk, Ordering::Release);
    }
    // SAFETY: chunks are never freed.
    unsafe { (*chunk)[i % CHUNK].store(p, Ordering::Release) };
    Ok(())
}

/// The registered class for a type index, without asking the factory
/// (lock-free for indices in the directory's range).
pub fn lookup(type_index: i32) -> Option<*mut ffi::PyTypeObject> {
    let i = usize::try_from(type_index).ok()?;
    let Some(dir) = CLASS_CHUNKS.get(i / CHUNK) else {
        return CLASS_OVERFLOW.lock().unwrap().as_ref()?.get(&type_index).map(|t| t.0);
    };
    let chunk = dir.load(Ordering::Acquire);
    if chunk.is_null() {
        return None;
    }
    // SAFETY: chunks are never freed.
    let p = unsafe { (*chunk)[i % CHUNK].load(Ordering::Acquire) };
    (!p.is_null()).then_some(p)
}

/// The class for a type index, asking the factory when none is registered.
pub fn class_for(py: Python<'_>, type_index: i32) -> PyResult<*mut ffi::PyTypeObject> {
    if let Some(c) = lookup(type_index) {
        return Ok(c);
    }
    let factory = FACTORY.get(py).ok_or_else(|| PyValueError::new_err("tether is not initialised"))?;
    crate::tie::exit_park::call_py(factory.bind(py), (type_index,), None)?;
    lookup(type_index)
        .ok_or_else(|| PyTypeError::new_err(format!("no Python class for FFI type {}", type_key_of(type_index))))
}

/// The registered class for a type index, if any.
pub fn registered_class(py: Python<'_>, type_index: i32) -> Option<Bound<'_, PyType>> {
    // SAFETY: registered classes are kept alive forever.
    lookup(type_index).map(|p| unsafe { Bound::from_borrowed_ptr(py, p as *mut ffi::PyObject).cast_into_unchecked() })
}

/// Whether type `child` is `parent` or derives from it (by the core's
/// recorded ancestry).
pub fn derives_from(child: i32, parent: i32) -> bool {
    if child == parent {
        return true;
    }
    // SAFETY: NULL or type infos living for the process; ancestors has
    // type_depth entries.
    unsafe {
        let (c, p) = (TVMFFIGetTypeInfo(child), TVMFFIGetTypeInfo(parent));
        if c.is_null() || p.is_null() {
            return false;
        }
        let depth = (*p).type_depth;
        depth < (*c).type_depth && (**(*c).type_ancestors.add(depth as usize)).type_index == parent
    }
}

/// A type's key, or a placeholder naming the index.
pub fn type_key_of(type_index: i32) -> String {
    // SAFETY: NULL or a type info living for the process.
    let info = unsafe { TVMFFIGetTypeInfo(type_index) };
    if info.is_null() {
        return format!("<type index {type_index}>");
    }
    // SAFETY: the key points into the registry.
    unsafe { bytes_to_string(&(*info).type_key) }
}

/// # Safety
/// `b` must be empty or point to `b.size` readable bytes.
pub unsafe fn bytes_to_string(b: &TVMFFIByteArray) -> String {
    if b.size == 0 {
        return String::new();
    }
    // SAFETY: per the caller.
    String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(b.data as *const u8, b.size) }).into_owned()
}
