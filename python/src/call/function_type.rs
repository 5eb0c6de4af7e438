//! `tether.Function`'s native base type: the wrapper layout plus a
//! vectorcall entry, the entry itself and `tp_call`, so calling an FFI
//! function from Python goes straight to [`crate::call::native_call`] without a
//! Python-level `__call__` frame or an argument tuple.
//!
//! SAFETY invariants of this module: an object whose type has this
//! module's `tp_vectorcall_offset` and descends from the base made here has
//! the [`FunctionObject`] layout; CPython calls the entries with the GIL
//! held (an attached thread state) and valid objects.

use std::ffi::c_void;
use std::ptr;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyType;
use pyo3::ffi;
use tether_sys::abi::type_index as ti;

use crate::call::native_call;
use crate::convert::registry;
use crate::convert::wrapper_access::handle_of;
use crate::convert::wrapper_access::wrapper;
use crate::convert::wrapper_access;
use crate::tie::tie_state::{self, CObject};

/// The layout of `tether.Function` wrappers: a wrapper plus the
/// vectorcall entry CPython calls them through (`tp_vectorcall_offset`)
/// and whether calls give the GIL away while the native code runs
/// (`release_gil`, TVM-FFI's per-function switch). The wrappers'
/// `tp_alloc` sets both ([`init_function_object`]) in fresh and revived wrappers
/// alike, so calls take the vectorcall path with no argument tuple from the
/// first one on.
#[repr(C)]
pub struct FunctionObject {
    base: CObject,
    vectorcall: Option<ffi::vectorcallfunc>,
    /// 0 or 1; read per call, written by the `release_gil` property.
    release_gil: std::sync::atomic::AtomicU8,
}

/// Whether Function wrappers release the GIL around native calls when
/// created: on, unless `TVM_FFI_RELEASE_GIL_BY_DEFAULT` is `0` (TVM-FFI's
/// variable, read once, so code tuned for tvm_ffi behaves the same).
pub fn release_gil_by_default() -> bool {
    static DEFAULT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *DEFAULT.get_or_init(|| std::env::var("TVM_FFI_RELEASE_GIL_BY_DEFAULT").map_or(true, |v| v.trim() != "0"))
}

/// The `release_gil` setting of `obj` if it has the [`FunctionObject`]
/// layout, else the default.
///
/// # Safety
/// GIL held; `obj` is a live object.
pub unsafe fn release_gil_of(obj: *mut ffi::PyObject) -> bool {
    // SAFETY: per the caller; the layout is checked before the read.
    unsafe {
        if has_function_layout(ffi::Py_TYPE(obj)) {
            (*(obj as *mut FunctionObject)).release_gil.load(std::sync::atomic::Ordering::Relaxed) != 0
        } else {
            release_gil_by_default()
        }
    }
}

/// Whether instances of `tp` have the [`FunctionObject`] layout.
///
/// # Safety
/// GIL held; `tp` is a live type.
unsafe fn has_function_layout(tp: *mut ffi::PyTypeObject) -> bool {
    // SAFETY: reading type slots; the base is set at module initialisation.
    unsafe {
        let Some(base) = FUNCTION_BASE.get(Python::assume_attached()) else { return false };
        tp == base.as_ptr() as *mut ffi::PyTypeObject || ffi::PyType_IsSubtype(tp, base.as_ptr() as *mut ffi::PyTypeObject) != 0
    }
}

/// The `release_gil` property's table (CPython keeps a pointer to it).
struct GetSetTable([ffi::PyGetSetDef; 2]);
// SAFETY: immutable, and only C string literals and function pointers.
unsafe impl Sync for GetSetTable {}

static RELEASE_GIL_GETSET: GetSetTable = GetSetTable([
    ffi::PyGetSetDef {
        name: c"release_gil".as_ptr(),
        get: Some(get_release_gil),
        set: Some(set_release_gil),
        doc: c"Whether calls give the GIL away while the native function runs (on by default; TVM_FFI_RELEASE_GIL_BY_DEFAULT=0 turns the default off).".as_ptr(),
        closure: ptr::null_mut(),
    },
    ffi::PyGetSetDef { name: ptr::null(), get: None, set: None, doc: ptr::null(), closure: ptr::null_mut() },
]);

unsafe extern "C" fn get_release_gil(obj: *mut ffi::PyObject, _closure: *mut c_void) -> *mut ffi::PyObject {
    // SAFETY: CPython calls the getter of this type's instances (the
    // FunctionObject layout) with the GIL held.
    unsafe {
        let on = (*(obj as *mut FunctionObject)).release_gil.load(std::sync::atomic::Ordering::Relaxed) != 0;
        ffi::PyBool_FromLong(on as std::ffi::c_long)
    }
}

/// Takes what TVM-FFI's property takes: anything with an integer value
/// (`bool`, `int`, NumPy integers, and numbers CPython can truncate).
unsafe extern "C" fn set_release_gil(obj: *mut ffi::PyObject, value: *mut ffi::PyObject, _closure: *mut c_void) -> std::ffi::c_int {
    // SAFETY: as for the getter; `value` is NULL (deletion) or a live object.
    unsafe {
        let py = Python::assume_attached();
        if value.is_null() {
            PyTypeError::new_err("release_gil cannot be deleted").restore(py);
            return -1;
        }
        let number = (*ffi::Py_TYPE(value)).tp_as_number;
        let integral = !number.is_null() && ((*number).nb_index.is_some() || (*number).nb_int.is_some());
        let as_int = if integral { ffi::PyNumber_Long(value) } else { ptr::null_mut() };
        if as_int.is_null() {
            if !integral {
                let name = wrapper_access::type_name(&Bound::from_borrowed_ptr(py, value));
                PyTypeError::new_err(format!("release_gil takes a bool or an int, not {name}")).restore(py);
            }
            return -1;
        }
        let truth = ffi::PyObject_IsTrue(as_int);
        ffi::Py_DECREF(as_int);
        if truth < 0 {
            return -1;
        }
        (*(obj as *mut FunctionObject)).release_gil.store(truth as u8, std::sync::atomic::Ordering::Relaxed);
        0
    }
}

/// The native base of `tether.Function`, with the [`FunctionObject`] layout.
pub fn make_function_base(py: Python<'_>, base: &Bound<'_, PyType>) -> PyResult<Py<PyType>> {
    let mut members = [
        ffi::PyMemberDef {
            name: c"__vectorcalloffset__".as_ptr(),
            type_code: ffi::Py_T_PYSSIZET,
            offset: std::mem::offset_of!(FunctionObject, vectorcall) as ffi::Py_ssize_t,
            flags: ffi::Py_READONLY,
            doc: ptr::null(),
        },
        ffi::PyMemberDef::default(),
    ];
    let mut slots = [
        ffi::PyType_Slot { slot: ffi::Py_tp_call, pfunc: function_tp_call as *mut c_void },
        ffi::PyType_Slot { slot: ffi::Py_tp_members, pfunc: members.as_mut_ptr() as *mut c_void },
        // CPython keeps this pointer (it copies member tables, not getsets).
        ffi::PyType_Slot { slot: ffi::Py_tp_getset, pfunc: RELEASE_GIL_GETSET.0.as_ptr() as *mut c_void },
        ffi::PyType_Slot { slot: 0, pfunc: ptr::null_mut() },
    ];
    let mut spec = ffi::PyType_Spec {
        name: c"tether._ffi.FunctionBase".as_ptr(),
        basicsize: std::mem::size_of::<FunctionObject>() as i32,
        itemsize: 0,
        // Not a GC type, as the wrapper base: the vectorcall entry is a C
        // function pointer.
        flags: (ffi::Py_TPFLAGS_DEFAULT | ffi::Py_TPFLAGS_BASETYPE | ffi::Py_TPFLAGS_HAVE_VECTORCALL) as u32,
        slots: slots.as_mut_ptr(),
    };
    // CPython 3.9 accepts only a tuple of bases here (3.10+ also a type).
    let bases = pyo3::types::PyTuple::new(py, [base])?;
    // SAFETY: a valid spec and a tuple of bases; the result is a new
    // reference or NULL.
    let t = unsafe { ffi::PyType_FromSpecWithBases(&mut spec, bases.as_ptr()) };
    if t.is_null() {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: a new reference to a type object, whose instances have the
    // CObject layout: give it the tying slots.
    unsafe {
        tie_state::install_slots(t as *mut ffi::PyTypeObject);
        Ok(Bound::from_owned_ptr(py, t).cast_into_unchecked::<PyType>().unbind())
    }
}

/// Call a Function wrapper's native function with borrowed arguments.
///
/// # Safety
/// GIL held; `callable` is a live Function wrapper (the type checks below
/// confirm it is a wrapper of an ffi.Function), `args` live objects.
unsafe fn call_native(py: Python<'_>, callable: *mut ffi::PyObject, args: &[*mut ffi::PyObject]) -> *mut ffi::PyObject {
    // SAFETY: per the caller.
    let f = unsafe { Bound::from_borrowed_ptr(py, callable) };
    let result = (|| -> PyResult<Py<PyAny>> {
        let h = handle_of(wrapper(&f)?)?;
        // SAFETY: live handle.
        if unsafe { (*h).type_index } != ti::kTVMFFIFunction {
            return Err(PyTypeError::new_err(format!("{} object is not an ffi.Function", wrapper_access::type_name(&f))));
        }
        // SAFETY: `callable` is live (per the caller).
        native_call::call_function_args(py, h, args, unsafe { release_gil_of(callable) })
    })();
    match result {
        Ok(v) => v.into_ptr(),
        Err(e) => {
            e.restore(py);
            ptr::null_mut()
        }
    }
}

/// The vectorcall entry of `tether.Function` wrappers.
unsafe extern "C" fn function_vectorcall(
    callable: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargsf: usize,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls vectorcall with the GIL held and valid objects.
    unsafe {
        let py = Python::assume_attached();
        if !kwnames.is_null() && ffi::PyTuple_GET_SIZE(kwnames) > 0 {
            PyTypeError::new_err("FFI functions take positional arguments only").restore(py);
            return ptr::null_mut();
        }
        let n = ffi::PyVectorcall_NARGS(nargsf) as usize;
        let args = if n == 0 { &[][..] } else { std::slice::from_raw_parts(args, n) };
        // Only `function_tp_call` arms this entry, and only on instances
        // with the FunctionObject layout (wrappers of FunctionBase
        // subclasses), so the wrapper check of `call_native` is settled:
        // read the handle directly. A moved-from or non-Function handle
        // takes `call_native`, which raises.
        let h = (*(callable as *mut CObject)).chandle;
        if h.is_null() || (*h).type_index != ti::kTVMFFIFunction {
            return call_native(py, callable, args);
        }
        let release = (*(callable as *mut FunctionObject)).release_gil.load(std::sync::atomic::Ordering::Relaxed) != 0;
        native_call::call_function_raw(py, h, args, release)
    }
}

/// Initialise a new wrapper of `tp` if it has the [`FunctionObject`]
/// layout: its `release_gil` setting (the default) and, if its class has
/// the vectorcall flag, its vectorcall entry. Called by the wrappers'
/// `tp_alloc` and by revival (through the hook `tie::function_init`, which
/// the module initialisation fills with this function), before the
/// wrapper is visible to any other
/// thread: on free-threaded builds CPython reads the entry of a shared
/// Function on every call without synchronisation, so it must never be
/// written once the wrapper is published (arming it at the first call, as
/// tether once did, raced with other threads' calls).
///
/// # Safety
/// GIL held (an attached thread state); `obj` is a new, unpublished
/// instance of `tp`, a wrapper type.
pub unsafe fn init_function_object(obj: *mut ffi::PyObject, tp: *mut ffi::PyTypeObject) {
    // SAFETY: per the caller; the layout is checked before the writes.
    unsafe {
        // Every other wrapper type leaves at the first comparison.
        if (*tp).tp_vectorcall_offset != std::mem::offset_of!(FunctionObject, vectorcall) as ffi::Py_ssize_t
            || !has_function_layout(tp)
        {
            return;
        }
        let f = obj as *mut FunctionObject;
        (*f).release_gil = std::sync::atomic::AtomicU8::new(release_gil_by_default() as u8);
        if ffi::PyType_GetFlags(tp) & ffi::Py_TPFLAGS_HAVE_VECTORCALL != 0 {
            (*f).vectorcall = Some(function_vectorcall);
        }
    }
}

/// `tp_call` of `tether.Function`: call the native function directly,
/// without a Python-level `__call__` frame (calls CPython does not make by
/// vectorcall: classes without the flag, `PyObject_Call` with a tuple).
unsafe extern "C" fn function_tp_call(
    callable: *mut ffi::PyObject,
    args: *mut ffi::PyObject,
    kwargs: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls tp_call with the GIL held and valid objects.
    unsafe {
        let py = Python::assume_attached();
        // kwargs is NULL or a dict, per the tp_call protocol.
        if !kwargs.is_null() && ffi::PyDict_Size(kwargs) > 0 {
            PyTypeError::new_err("FFI functions take positional arguments only").restore(py);
            return ptr::null_mut();
        }
        let items = std::slice::from_raw_parts(
            (*(args as *mut ffi::PyTupleObject)).ob_item.as_ptr(),
            ffi::PyTuple_GET_SIZE(args) as usize,
        );
        call_native(py, callable, items)
    }
}

static FUNCTION_BASE: pyo3::sync::PyOnceLock<Py<PyType>> = pyo3::sync::PyOnceLock::new();

/// Remember the native Function base (module initialisation).
pub fn set_function_base(py: Python<'_>, base: Py<PyType>) {
    let _ = FUNCTION_BASE.set(py, base);
}

/// Make instances of `cls` (tether.Function and its subclasses) callable
/// natively; subclasses of `FunctionBase` also by vectorcall.
#[pyfunction]
pub fn install_function_call(py: Python<'_>, cls: &Bound<'_, PyType>) -> PyResult<()> {
    if !cls.is_subclass(registry::base(py))? {
        return Err(PyTypeError::new_err(format!("{} is not a subclass of tether.Object", cls.name()?)));
    }
    let vectorcall = cls.is_subclass(FUNCTION_BASE.get(py).expect("module initialised").bind(py))?;
    // SAFETY: setting tp_call (and, for the FunctionObject layout, the
    // vectorcall flag CPython 3.11 does not inherit on heap types) on a
    // heap type right after its creation.
    unsafe {
        let tp = cls.as_ptr() as *mut ffi::PyTypeObject;
        (*tp).tp_call = Some(function_tp_call);
        if vectorcall {
            (*tp).tp_vectorcall_offset = std::mem::offset_of!(FunctionObject, vectorcall) as ffi::Py_ssize_t;
            crate::tie::tying_lock::set_type_flags(tp, ffi::Py_TPFLAGS_HAVE_VECTORCALL);
        }
        ffi::PyType_Modified(tp);
    }
    Ok(())
}

