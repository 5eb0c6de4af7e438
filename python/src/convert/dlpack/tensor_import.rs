//! Tensors from Python through DLPack, and the Tensor handle of a wrapper.
//!
//! In: a DLPack capsule, or any object with `__dlpack__`, becomes an
//! `ffi.Tensor` that owns the producer's managed tensor (its deleter runs
//! once, when the Tensor dies). Producers that publish DLPack's C exchange
//! table (`type(x).__dlpack_c_exchange_api__`) hand over their managed
//! tensor directly, without a capsule per call; the table is looked up once
//! per type. Out: `Tensor.__dlpack__` wraps the core's managed tensor in a
//! capsule whose destructor deletes it unless a consumer took it.
//!
//! SAFETY invariants of this module: functions run with the GIL held;
//! capsule pointers are read only after checking the capsule's name; a
//! managed tensor is handed to the core at most once (the capsule is
//! renamed to its `used_` name right after the core took it).
//!
//! The per-type cache of exchange tables is in `exchange_api`; the
//! functions `tether._ffi` offers for this in `entry_points` and `export`.

use std::ffi::{c_int, c_void, CStr};
use std::ptr;

use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyTuple;
use tether_sys::abi::{type_index as ti, TVMFFIObject};
use tether_sys::dlpack::{DLManagedTensor, DLManagedTensorVersioned};
use tether_sys::*;

use crate::convert::error_bridge::take_ffi_error;
use crate::convert::owned_any::OwnedAny;
use crate::convert::type_attrs;
use crate::convert::wrapper_access::{handle_of, type_name};

use super::exchange_api::{exchange_api, ExchangeApi};

// Statics, not consts: a capsule made with one of these names is told
// apart by the name's address (see `export::unconsumed`), which a const
// does not promise to keep across uses.
pub(crate) static LEGACY: &CStr = c"dltensor";
const LEGACY_USED: &CStr = c"used_dltensor";
pub(crate) static VERSIONED: &CStr = c"dltensor_versioned";
const VERSIONED_USED: &CStr = c"used_dltensor_versioned";

/// The last type that converted as a tensor (`py_to_ffi::py_to_any_other`),
/// with the version tag CPython gave it then and its exchange table.
///
/// Which branch of the conversion a value takes depends, up to the tensor
/// check, on its type alone: its bases (`isinstance` against int, float,
/// str, list, …) and its attributes (`__dlpack__`). CPython changes a
/// type's version tag whenever either changes (assigning an attribute or
/// `__bases__`, on the type or a base) and never reuses a tag, the
/// guarantee its own attribute cache relies on; so a value whose type and
/// valid tag match the memo takes the tensor branch without the checks
/// before it, and without looking up its exchange table (cached per type
/// for good by [`exchange_api`] anyway) or `__dlpack__` again. One entry
/// suffices for the common loop over one kind of array. GIL builds only
/// (the GIL guards the entry); free-threaded builds always run the checks.
pub struct TensorTypeMemo;

/// The memo's entry: the type (address and version tag), its exchange
/// table and its `__dlpack__` method when that can be called unbound; 0 or
/// NULL for none.
#[cfg(not(Py_GIL_DISABLED))]
#[derive(Clone, Copy)]
struct TensorType {
    tp: usize,
    tag: u32,
    api: *const ExchangeApi,
    /// A strong reference to the `__dlpack__` method descriptor found on
    /// the type, when calling it with the value as first argument is what
    /// `obj.__dlpack__(...)` does: the type has the generic attribute
    /// lookup, no instance dictionary to shadow the method, and the
    /// attribute is a method descriptor. That saves the method lookup per
    /// call (`PyObject_VectorcallMethod`).
    method: *mut ffi::PyObject,
    /// The type is exactly NumPy's `ndarray` (see [`export_form`]).
    ndarray: bool,
}

#[cfg(not(Py_GIL_DISABLED))]
static TENSOR_TYPE: GilCell = GilCell(std::cell::Cell::new(TensorType {
    tp: 0,
    tag: 0,
    api: ptr::null(),
    method: ptr::null_mut(),
    ndarray: false,
}));

/// The memo's storage, reached only through [`GilCell::get`], which takes
/// the token of a thread attached to the interpreter: on a GIL build that
/// thread holds the GIL, so one thread at a time reads or writes the entry.
#[cfg(not(Py_GIL_DISABLED))]
struct GilCell(std::cell::Cell<TensorType>);

// SAFETY: the cell is only reached through `get`, with the GIL held (see
// the type), which serialises every access; the entry's pointers are the
// memo's own (a strong reference, an exchange table that lives for good).
#[cfg(not(Py_GIL_DISABLED))]
unsafe impl Sync for GilCell {}

#[cfg(not(Py_GIL_DISABLED))]
impl GilCell {
    #[inline]
    fn get(&self, _py: Python<'_>) -> &std::cell::Cell<TensorType> {
        &self.0
    }
}

impl TensorTypeMemo {
    /// `obj`'s type and its version tag, if the tag is valid.
    #[cfg(not(Py_GIL_DISABLED))]
    fn key(obj: &Bound<'_, PyAny>) -> Option<(usize, u32)> {
        // SAFETY: reading the type slots of a live object's type, GIL held.
        unsafe {
            let tp = ffi::Py_TYPE(obj.as_ptr());
            let tag = (*tp).tp_version_tag;
            (ffi::PyType_GetFlags(tp) & ffi::Py_TPFLAGS_VALID_VERSION_TAG != 0 && tag != 0).then_some((tp as usize, tag))
        }
    }

    /// The tensor for `obj` if its type is the remembered one, unchanged;
    /// None otherwise (nothing was done).
    #[inline]
    pub fn convert(py: Python<'_>, obj: &Bound<'_, PyAny>) -> Option<PyResult<OwnedAny>> {
        #[cfg(not(Py_GIL_DISABLED))]
        {
            let m = TENSOR_TYPE.get(py).get();
            if m.tp != 0 && Self::key(obj) == Some((m.tp, m.tag)) {
                if m.ndarray && !ndarray_is_writeable(obj) {
                    return Some(Err(read_only_ndarray_error()));
                }
                let form = if m.ndarray { ndarray_export_form(obj) } else { ExportForm::Versioned };
                return Some(tensor_from_exporter(py, obj, m.api, m.method, form, 0, false));
            }
        }
        #[cfg(Py_GIL_DISABLED)]
        let _ = (py, obj);
        None
    }

    /// [`Self::convert`] for a call argument, without a `PyResult`: the
    /// common case of a loop passing NumPy arrays (the remembered type is
    /// exactly `ndarray`, with its method remembered, and the array is
    /// writable) as a new Tensor handle, or NULL with the Python exception
    /// set; None when that is not the case (nothing was done), leaving the
    /// value to the general conversion.
    ///
    /// # Safety
    /// GIL held; `obj` live for the call.
    #[inline]
    pub unsafe fn convert_ndarray_arg(py: Python<'_>, obj: *mut ffi::PyObject) -> Option<*mut TVMFFIObject> {
        #[cfg(not(Py_GIL_DISABLED))]
        {
            let m = TENSOR_TYPE.get(py).get();
            // SAFETY: reading the type and, for an ndarray, its flags (see
            // `ndarray_export_form`), of a live object.
            unsafe {
                let tp = ffi::Py_TYPE(obj);
                if m.tp != tp as usize
                    || !m.ndarray
                    || m.method.is_null()
                    || (*tp).tp_version_tag != m.tag
                    || ffi::PyType_GetFlags(tp) & ffi::Py_TPFLAGS_VALID_VERSION_TAG == 0
                    || (*(obj as *const NdArrayHead)).flags & NPY_ARRAY_WRITEABLE == 0
                {
                    return None;
                }
                Some(legacy_ndarray_export(py, obj, m.method))
            }
        }
        #[cfg(Py_GIL_DISABLED)]
        {
            let _ = (py, obj);
            None
        }
    }

    /// The tensor for `obj`, whose type has just been found to convert as
    /// a tensor (a capsule, or `__dlpack__` on the type), remembering the
    /// type. Its key is read before the conversion runs any Python code;
    /// the lookup of `__dlpack__` gave the type a valid tag if it can have
    /// one (without one nothing is remembered).
    pub fn convert_and_remember(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<OwnedAny> {
        // SAFETY: a type check on a live object.
        let capsule = unsafe { ffi::PyCapsule_CheckExact(obj.as_ptr()) } == 1;
        let api = if capsule { ptr::null() } else { exchange_api(obj) };
        let ndarray = !capsule && is_exact_ndarray(obj);
        Self::remember(py, obj, capsule, api, ndarray);
        if ndarray && !ndarray_is_writeable(obj) {
            return Err(read_only_ndarray_error());
        }
        let form = if ndarray { ndarray_export_form(obj) } else { ExportForm::Versioned };
        tensor_from_exporter(py, obj, api, ptr::null_mut(), form, 0, false)
    }
}

impl TensorTypeMemo {
    /// Remember `obj`'s type (found to convert as a tensor) with its
    /// exchange table and, when it can be called unbound, its `__dlpack__`.
    fn remember(py: Python<'_>, obj: &Bound<'_, PyAny>, capsule: bool, api: *const ExchangeApi, ndarray: bool) {
        #[cfg(not(Py_GIL_DISABLED))]
        if let Some((tp, tag)) = Self::key(obj) {
            let method = if capsule { ptr::null_mut() } else { unbound_dlpack(obj) };
            let old = TENSOR_TYPE.get(py).replace(TensorType { tp, tag, api, method, ndarray });
            if !old.method.is_null() {
                // SAFETY: the memo's own reference, GIL held; a raw decref
                // (not a dropped `Py`), the GIL being held without pyo3's
                // count raised on this path.
                unsafe { ffi::Py_DECREF(old.method) };
            }
        }
        #[cfg(Py_GIL_DISABLED)]
        let _ = (py, obj, capsule, api, ndarray);
    }

    /// `from_dlpack(obj)` for a value of the remembered type, unchanged:
    /// its table, method and export form as remembered, read-only arrays
    /// refused. None otherwise (nothing was done).
    fn import_remembered(py: Python<'_>, obj: &Bound<'_, PyAny>, align: i32, contiguous: bool) -> Option<PyResult<OwnedAny>> {
        #[cfg(not(Py_GIL_DISABLED))]
        {
            let m = TENSOR_TYPE.get(py).get();
            if m.tp != 0 && Self::key(obj) == Some((m.tp, m.tag)) {
                if m.ndarray && !ndarray_is_writeable(obj) {
                    return Some(Err(read_only_ndarray_error()));
                }
                let form = if m.ndarray { ndarray_export_form(obj) } else { ExportForm::Versioned };
                return Some(tensor_from_exporter(py, obj, m.api, m.method, form, align, contiguous));
            }
        }
        #[cfg(Py_GIL_DISABLED)]
        let _ = (py, obj, align, contiguous);
        None
    }
}

/// `obj.__dlpack__()` through the remembered method descriptor of its type
/// (exactly `ndarray`), the legacy capsule adopted by the core in place: a
/// new Tensor handle, or NULL with the Python exception set. A capsule
/// other than an unused legacy one goes to [`from_capsule`] (which raises),
/// and a `BufferError` (the array turned read-only between the check and
/// the call) to the versioned export, as [`tensor_from_exporter`] does.
///
/// # Safety
/// GIL held; `obj` a live ndarray; `method` its type's `__dlpack__`
/// method descriptor.
#[cfg(not(Py_GIL_DISABLED))]
unsafe fn legacy_ndarray_export(py: Python<'_>, obj: *mut ffi::PyObject, method: *mut ffi::PyObject) -> *mut TVMFFIObject {
    let general = |r: PyResult<OwnedAny>| match r {
        Ok(v) => v.into_raw().value.v_obj,
        Err(e) => {
            e.restore(py);
            ptr::null_mut()
        }
    };
    // SAFETY: per the caller; capsule names are compared before their
    // pointers are read, and the capsule is renamed right after the core
    // took its tensor (the module invariants).
    unsafe {
        let argv = [obj];
        let cap = ffi::PyObject_Vectorcall(method, argv.as_ptr(), 1, ptr::null_mut());
        if cap.is_null() {
            if ffi::PyErr_ExceptionMatches(ffi::PyExc_BufferError) == 0 {
                return ptr::null_mut();
            }
            ffi::PyErr_Clear();
            let o = pyo3::Borrowed::from_ptr(py, obj);
            return general(tensor_from_exporter(py, &o, ptr::null(), method, ExportForm::Versioned, 0, false));
        }
        let name = if ffi::PyCapsule_CheckExact(cap) == 1 { ffi::PyCapsule_GetName(cap) } else { ptr::null() };
        if name.is_null() || !c_str_is(name, LEGACY) {
            return general(from_capsule(py, &Bound::from_owned_ptr(py, cap), 0, false));
        }
        let managed = ffi::PyCapsule_GetPointer(cap, name) as *mut DLManagedTensor;
        let mut out: *mut c_void = ptr::null_mut();
        if managed.is_null() {
            out = ptr::null_mut(); // GetPointer raised
        } else if TVMFFITensorFromDLPack(managed, 0, 0, &mut out) != 0 {
            take_ffi_error(py).restore(py);
            out = ptr::null_mut();
        } else {
            ffi::PyCapsule_SetName(cap, LEGACY_USED.as_ptr());
        }
        // An unconsumed capsule's destructor deletes its tensor.
        ffi::Py_DECREF(cap);
        out as *mut TVMFFIObject
    }
}

/// Which `__dlpack__` call asks for the capsule.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ExportForm {
    /// `__dlpack__(max_version=(1, 3))`, falling back to `__dlpack__()`
    /// for producers older than DLPack 1.0.
    Versioned,
    /// `__dlpack__()`, when the legacy capsule says all the versioned one
    /// would (see [`ndarray_export_form`]); the versioned call follows if
    /// the producer refuses with `BufferError`.
    Legacy,
}

/// Whether `obj`'s type is exactly NumPy's `ndarray` (not a subclass,
/// which may export differently).
fn is_exact_ndarray(obj: &Bound<'_, PyAny>) -> bool {
    // SAFETY: a live type's name, a NUL-terminated string.
    unsafe { CStr::from_ptr((*ffi::Py_TYPE(obj.as_ptr())).tp_name) == c"numpy.ndarray" }
}

/// The leading fields of NumPy's array object (`PyArrayObject_fields` of
/// its C API, whose layout every compiled NumPy extension reads through
/// inline accessors such as `PyArray_FLAGS`, so NumPy keeps it fixed).
#[repr(C)]
struct NdArrayHead {
    ob_base: ffi::PyObject,
    data: *mut c_void,
    nd: c_int,
    dimensions: *mut isize,
    strides: *mut isize,
    base: *mut ffi::PyObject,
    descr: *mut ffi::PyObject,
    flags: c_int,
}

/// `NPY_ARRAY_WRITEABLE`.
const NPY_ARRAY_WRITEABLE: c_int = 0x0400;

/// Whether the exact `ndarray` `obj` is writeable (`NPY_ARRAY_WRITEABLE`).
fn ndarray_is_writeable(obj: &Bound<'_, PyAny>) -> bool {
    // SAFETY: `obj` is a live ndarray (the caller checked its exact
    // type), whose object starts with the fields above.
    unsafe { (*(obj.as_ptr() as *const NdArrayHead)).flags & NPY_ARRAY_WRITEABLE != 0 }
}

/// What a call argument refuses for a read-only `ndarray`: the
/// `BufferError` NumPy's own DLPack export raises for one, which is what
/// TVM-FFI's bindings (exporting through it) report for the same argument.
fn read_only_ndarray_error() -> PyErr {
    PyBufferError::new_err(
        "Cannot export readonly array since signalling readonly is unsupported by DLPack (supported by newer DLPack version).",
    )
}

/// The export form for an exact `ndarray`. The versioned capsule costs
/// NumPy a keyword parse that `__dlpack__()` does not, and for a writable
/// array the two say the same: NumPy's legacy export refuses read-only
/// arrays (the one flag the versioned form adds for it) and never copies.
/// Read-only arrays ask for the versioned form, which carries the flag.
fn ndarray_export_form(obj: &Bound<'_, PyAny>) -> ExportForm {
    // SAFETY: `obj` is a live ndarray (the caller checked its exact
    // type), whose object starts with the fields above.
    let flags = unsafe { (*(obj.as_ptr() as *const NdArrayHead)).flags };
    if flags & NPY_ARRAY_WRITEABLE != 0 {
        ExportForm::Legacy
    } else {
        ExportForm::Versioned
    }
}

/// A new reference to the `__dlpack__` method descriptor of `obj`'s type,
/// if calling it unbound is exactly `obj.__dlpack__(...)` (see
/// `TensorType::method`); NULL otherwise.
///
/// The slot comparison with `PyObject_GenericGetAttr` (CPython's exported
/// function) can only err towards "not generic", which keeps the lookup.
#[cfg(not(Py_GIL_DISABLED))]
#[allow(unpredictable_function_pointer_comparisons)]
fn unbound_dlpack(obj: &Bound<'_, PyAny>) -> *mut ffi::PyObject {
    // SAFETY: reading type slots and a borrowed attribute of a live type,
    // GIL held; the result is a new reference when non-NULL.
    unsafe {
        let tp = ffi::Py_TYPE(obj.as_ptr());
        if (*tp).tp_getattro != Some(ffi::PyObject_GenericGetAttr) || (*tp).tp_dictoffset != 0 {
            return ptr::null_mut();
        }
        let m = type_attrs::type_lookup(tp, pyo3::intern!(obj.py(), "__dlpack__"));
        if m.is_null() || ffi::PyType_GetFlags(ffi::Py_TYPE(m)) & ffi::Py_TPFLAGS_METHOD_DESCRIPTOR == 0 {
            return ptr::null_mut();
        }
        ffi::Py_INCREF(m);
        m
    }
}

/// A Tensor for `obj`: a tether Tensor as is, a DLPack capsule, an object
/// publishing the exchange table, or any object with `__dlpack__`.
/// Read-only memory is refused with `BufferError` (a Tensor hands native
/// code a `DLTensor` it may write, and no kernel checks a flag).
pub fn tensor_from_py(py: Python<'_>, obj: &Bound<'_, PyAny>, align: i32, contiguous: bool) -> PyResult<OwnedAny> {
    // SAFETY: a type check on a live object.
    if unsafe { ffi::PyCapsule_CheckExact(obj.as_ptr()) } == 1 {
        return from_capsule(py, obj, align, contiguous);
    }
    // A type met before, unchanged: what was found for it then.
    if let Some(t) = TensorTypeMemo::import_remembered(py, obj, align, contiguous) {
        return t;
    }
    let api = exchange_api(obj);
    let name = pyo3::intern!(py, "__dlpack__");
    let exports = !api.is_null() && {
        // SAFETY: the producer's own table.
        unsafe { (*api).managed_tensor_from_py_object_no_sync.is_some() }
    };
    if !exports && !type_attrs::type_has_attr(obj, name) && !obj.hasattr(name)? {
        return Err(PyTypeError::new_err(format!(
            "expected a tensor (an object with __dlpack__, or a DLPack capsule), got {}",
            type_name(obj)
        )));
    }
    let ndarray = is_exact_ndarray(obj);
    TensorTypeMemo::remember(py, obj, false, api, ndarray);
    if ndarray && !ndarray_is_writeable(obj) {
        return Err(read_only_ndarray_error());
    }
    let form = if ndarray { ndarray_export_form(obj) } else { ExportForm::Versioned };
    tensor_from_exporter(py, obj, api, ptr::null_mut(), form, align, contiguous)
}

/// A Tensor for `obj`, a DLPack capsule or an exporter: through `api`
/// (its type's exchange table, or NULL) when that can export, else by
/// `__dlpack__` in the given form, which the caller found it has.
/// A tensor that converted through a table (or PyTorch's fallback) is
/// noted for the running call, whose results go back the same way
/// (`exchange_out`).
#[allow(clippy::too_many_arguments)]
fn tensor_from_exporter(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    api: *const ExchangeApi,
    method: *mut ffi::PyObject,
    form: ExportForm,
    align: i32,
    contiguous: bool,
) -> PyResult<OwnedAny> {
    let t = export_through(py, obj, api, method, form, align, contiguous)?;
    super::exchange_out::note_tensor_argument(api);
    Ok(t)
}

#[allow(clippy::too_many_arguments)]
fn export_through(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    api: *const ExchangeApi,
    method: *mut ffi::PyObject,
    form: ExportForm,
    align: i32,
    contiguous: bool,
) -> PyResult<OwnedAny> {
    // SAFETY: a type check on a live object.
    if unsafe { ffi::PyCapsule_CheckExact(obj.as_ptr()) } == 1 {
        return from_capsule(py, obj, align, contiguous);
    }
    if !api.is_null() {
        // SAFETY: the producer's own table, for an object of its type.
        if let Some(export) = unsafe { (*api).managed_tensor_from_py_object_no_sync } {
            let mut managed: *mut DLManagedTensorVersioned = ptr::null_mut();
            // SAFETY: per DLPack's exchange protocol; on failure a Python exception is set.
            if unsafe { export(obj.as_ptr() as *mut c_void, &mut managed) } != 0 || managed.is_null() {
                return Err(PyErr::take(py).unwrap_or_else(|| PyBufferError::new_err("DLPack export failed")));
            }
            let t = adopt_versioned(py, managed, align, contiguous);
            if t.is_err() {
                // Not adopted: the managed tensor is still ours to delete.
                // SAFETY: the producer's live managed tensor, deleted once.
                unsafe {
                    if let Some(d) = (*managed).deleter {
                        d(managed);
                    }
                }
            }
            return t;
        }
    }
    let name = pyo3::intern!(py, "__dlpack__");
    if form == ExportForm::Legacy {
        let argv = [obj.as_ptr()];
        // SAFETY: as for the versioned call below, without keywords.
        let raw = unsafe {
            if method.is_null() {
                ffi::PyObject_VectorcallMethod(name.as_ptr(), argv.as_ptr(), 1 | ffi::PY_VECTORCALL_ARGUMENTS_OFFSET, ptr::null_mut())
            } else {
                ffi::PyObject_Vectorcall(method, argv.as_ptr(), 1, ptr::null_mut())
            }
        };
        if !raw.is_null() {
            // SAFETY: a new reference.
            return from_capsule(py, &unsafe { Bound::from_owned_ptr(py, raw) }, align, contiguous);
        }
        let e = PyErr::fetch(py);
        if !e.is_instance_of::<PyBufferError>(py) {
            return Err(e);
        }
        // Refused (the array became read-only meanwhile, say): the
        // versioned form decides.
    }
    // `obj.__dlpack__(max_version=(1, 3))` by vectorcall, with the keyword
    // names and the version made once: no kwargs dict per call.
    static KW: PyOnceLock<(Py<PyTuple>, Py<PyTuple>)> = PyOnceLock::new();
    // The keyword name is interned: NumPy's argument parser (and
    // CPython's) matches interned names by identity and compares strings
    // only when that fails.
    let (kwnames, version) = KW.get_or_try_init(py, || -> PyResult<_> {
        Ok((PyTuple::new(py, [pyo3::intern!(py, "max_version")])?.unbind(), PyTuple::new(py, [1, 3])?.unbind()))
    })?;
    let argv = [obj.as_ptr(), version.as_ptr()];
    // SAFETY: a live receiver and argument, the keyword-name tuple matching
    // the one keyword argument; `method`, when given, is the memo's method
    // descriptor of the receiver's type (see `TensorType::method`). A new
    // reference or NULL with an exception.
    let raw = unsafe {
        if method.is_null() {
            ffi::PyObject_VectorcallMethod(name.as_ptr(), argv.as_ptr(), 1 | ffi::PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames.as_ptr())
        } else {
            ffi::PyObject_Vectorcall(method, argv.as_ptr(), 1, kwnames.as_ptr())
        }
    };
    let capsule = if raw.is_null() {
        let e = PyErr::fetch(py);
        // Producers older than DLPack 1.0 do not take max_version.
        if !e.is_instance_of::<PyTypeError>(py) {
            return Err(e);
        }
        obj.call_method0(name)?
    } else {
        // SAFETY: a new reference.
        unsafe { Bound::from_owned_ptr(py, raw) }
    };
    from_capsule(py, &capsule, align, contiguous)
}

/// A Tensor adopting the managed tensor of an unused DLPack capsule
/// (renamed used on success; on failure its destructor still owns it).
fn from_capsule(py: Python<'_>, cap: &Bound<'_, PyAny>, align: i32, contiguous: bool) -> PyResult<OwnedAny> {
    // SAFETY: capsule names and pointers are read per the module invariants.
    unsafe {
        let c = cap.as_ptr();
        // The name read once and compared here, then handed back to
        // GetPointer: one string comparison fewer per tensor than asking
        // PyCapsule_IsValid for each candidate name.
        let name = if ffi::PyCapsule_CheckExact(c) == 1 { ffi::PyCapsule_GetName(c) } else { ptr::null() };
        if !name.is_null() && c_str_is(name, VERSIONED) {
            let managed = ffi::PyCapsule_GetPointer(c, name) as *mut DLManagedTensorVersioned;
            if managed.is_null() {
                return Err(PyErr::fetch(py));
            }
            let t = adopt_versioned(py, managed, align, contiguous)?;
            ffi::PyCapsule_SetName(c, VERSIONED_USED.as_ptr());
            return Ok(t);
        }
        if !name.is_null() && c_str_is(name, LEGACY) {
            let managed = ffi::PyCapsule_GetPointer(c, name) as *mut DLManagedTensor;
            if managed.is_null() {
                return Err(PyErr::fetch(py));
            }
            let mut out: *mut c_void = ptr::null_mut();
            if TVMFFITensorFromDLPack(managed, align, contiguous as i32, &mut out) != 0 {
                return Err(take_ffi_error(py));
            }
            ffi::PyCapsule_SetName(c, LEGACY_USED.as_ptr());
            return Ok(OwnedAny::from_handle(out as *mut TVMFFIObject));
        }
        if ffi::PyCapsule_IsValid(c, LEGACY_USED.as_ptr()) == 1 || ffi::PyCapsule_IsValid(c, VERSIONED_USED.as_ptr()) == 1 {
            return Err(PyValueError::new_err("this DLPack capsule was already consumed"));
        }
        ffi::PyErr_Clear();
    }
    Err(PyTypeError::new_err("expected a DLPack capsule named 'dltensor' or 'dltensor_versioned'"))
}

/// Whether the NUL-terminated `s` is `expected`, compared byte by byte up
/// to the first difference (no length of `s` taken first).
///
/// # Safety
/// `s` points to a NUL-terminated string.
unsafe fn c_str_is(s: *const std::ffi::c_char, expected: &CStr) -> bool {
    for (i, &b) in expected.to_bytes_with_nul().iter().enumerate() {
        // SAFETY: bytes before `s`'s NUL, or the NUL itself: a mismatch
        // (or the final NUL) ends the loop before reading past it.
        if unsafe { *s.add(i) } as u8 != b {
            return false;
        }
    }
    true
}

/// Hand a versioned managed tensor to the core (which owns it on success;
/// on failure the caller still does). One flagged read-only is refused
/// before the core sees it: a Tensor hands native code a bare `DLTensor`,
/// which carries no flag and may be written.
fn adopt_versioned(
    py: Python<'_>,
    managed: *mut DLManagedTensorVersioned,
    align: i32,
    contiguous: bool,
) -> PyResult<OwnedAny> {
    // SAFETY: a live managed tensor (the producer's contract).
    if unsafe { (*managed).flags } & tether_sys::dlpack::DLPACK_FLAG_BITMASK_READ_ONLY != 0 {
        return Err(PyBufferError::new_err(
            "cannot pass a read-only DLPack tensor (its producer set DLPACK_FLAG_BITMASK_READ_ONLY) as an argument: \
             the callee receives a DLTensor it may write to; pass a writable copy",
        ));
    }
    let mut out: *mut c_void = ptr::null_mut();
    // SAFETY: a managed tensor the caller owns; the core takes it only on success.
    if unsafe { TVMFFITensorFromDLPackVersioned(managed, align, contiguous as i32, &mut out) } != 0 {
        return Err(take_ffi_error(py));
    }
    Ok(OwnedAny::from_handle(out as *mut TVMFFIObject))
}

pub(crate) fn tensor_handle(t: &Bound<'_, PyAny>) -> PyResult<*mut TVMFFIObject> {
    if !crate::convert::registry::is_wrapper(t) {
        return Err(PyTypeError::new_err(format!("expected a tether.Tensor, got {}", type_name(t))));
    }
    let h = handle_of(t)?;
    // SAFETY: a live handle (the wrapper owns +1).
    if unsafe { (*h).type_index } != ti::kTVMFFITensor {
        return Err(PyTypeError::new_err(format!("expected a tether.Tensor, got {}", type_name(t))));
    }
    Ok(h)
}
