//! `tether._ffi`: the native half of the tether Python package.
//!
//! It links the core shared library (one registry per process), installs
//! the Python allocator, defines the wrapper base type `CObject` with its
//! own `tp_alloc`/`tp_dealloc`/`tp_free` (raw CPython API, in
//! [`tie_state`]), and offers the functions the pure-Python layer builds
//! on: calling FFI functions, globals, type information, field descriptors.
//! Conversions live in [`convert`] (ints beyond int64 in [`big_int`], the
//! DataType/Device classes in [`value_classes`]), the class table in
//! [`registry`], the native base of `tether.Function` in [`function_type`].
//!
//! SAFETY invariants of this module: functions that read a wrapper's handle
//! first check that the object is a wrapper (`wrapper`), so it has the
//! `CObject` layout; handles they pass to the C ABI are live because the
//! wrapper owns +1 on them while the call runs.

mod arg_buffer;
mod big_int;
mod binding;
mod native_call;
mod callback;
mod convert;
mod error_bridge;
mod error_cell;
mod descriptor;
mod dlpack;
mod dtype_stream;
mod exit_park;
mod function_type;
mod handle_pin;
mod kept_memory;
mod mlir_packed_call;
mod nested;
mod object_ops;
mod opaque_values;
mod py_allocator;
mod registry;
mod seq_index;
mod side_table;
mod shape_values;
mod string_values;
mod tie_state;
mod tying_lock;
mod value_classes;

use std::ffi::c_void;
use std::ptr;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple, PyType};
use pyo3::ffi;
use tether_sys::abi::{type_index as ti, TVMFFIAny, TVMFFIByteArray, TVMFFIObject, TVMFFISafeCallType};
use tether_sys::*;

use convert::{handle_of, OwnedAny};
use tie_state::CObject;

/// `x._move()`: passes `x`'s handle to a call as an rvalue reference.
/// Final (no Python subclasses), so its instances are recognised by their
/// exact type.
#[pyclass(module = "tether._ffi", frozen)]
pub struct RValueRef {
    pub target: PyObject,
}

/// The `RValueRef` type object, recorded at module initialisation: calls
/// and conversions ask "is this a move?" of every argument that is not a
/// plain value or a wrapper, and a pointer comparison answers without
/// pyo3's lazy type lookup and subtype walk.
static RVALUE_REF_TYPE: std::sync::atomic::AtomicPtr<ffi::PyTypeObject> = std::sync::atomic::AtomicPtr::new(ptr::null_mut());

/// `obj` as an `RValueRef`, if it is one.
pub fn as_rvalue_ref<'a, 'py>(obj: &'a Bound<'py, PyAny>) -> Option<&'a Bound<'py, RValueRef>> {
    // SAFETY: `obj` is live; an exact match of the final type is an instance.
    unsafe { is_rvalue_ref_ptr(obj.as_ptr()).then(|| obj.downcast_unchecked::<RValueRef>()) }
}

/// Whether `obj` is an `RValueRef`.
///
/// # Safety
/// `obj` is a live object.
#[inline]
pub unsafe fn is_rvalue_ref_ptr(obj: *mut ffi::PyObject) -> bool {
    let tp = RVALUE_REF_TYPE.load(std::sync::atomic::Ordering::Relaxed);
    // SAFETY: reading the type of a live object (per the caller).
    !tp.is_null() && unsafe { ffi::Py_TYPE(obj) } == tp
}

pub(crate) fn wrapper<'a, 'py>(obj: &'a Bound<'py, PyAny>) -> PyResult<&'a Bound<'py, PyAny>> {
    if registry::is_wrapper(obj) {
        Ok(obj)
    } else {
        Err(PyTypeError::new_err(format!("expected a tether.Object, got {}", convert::type_name(obj))))
    }
}

pub(crate) fn byte_array(s: &str) -> TVMFFIByteArray {
    TVMFFIByteArray { data: s.as_ptr() as *const _, size: s.len() }
}

/// Create the wrapper base type with our slots.
fn make_base_type(py: Python<'_>) -> PyResult<Py<PyType>> {
    // Weak references for every wrapper class, lean ones included.
    let mut members = [
        ffi::PyMemberDef {
            name: c"__weaklistoffset__".as_ptr(),
            type_code: ffi::Py_T_PYSSIZET,
            offset: std::mem::offset_of!(CObject, weaklist) as ffi::Py_ssize_t,
            flags: ffi::Py_READONLY,
            doc: ptr::null(),
        },
        ffi::PyMemberDef::default(),
    ];
    let mut slots = [
        ffi::PyType_Slot { slot: ffi::Py_tp_dealloc, pfunc: tie_state::tp_dealloc as *mut c_void },
        ffi::PyType_Slot { slot: ffi::Py_tp_alloc, pfunc: tie_state::tp_alloc as *mut c_void },
        ffi::PyType_Slot { slot: ffi::Py_tp_free, pfunc: tie_state::tp_free as *mut c_void },
        ffi::PyType_Slot { slot: ffi::Py_tp_new, pfunc: ffi::PyType_GenericNew as *mut c_void },
        ffi::PyType_Slot { slot: ffi::Py_tp_members, pfunc: members.as_mut_ptr() as *mut c_void },
        ffi::PyType_Slot { slot: 0, pfunc: ptr::null_mut() },
    ];
    let mut spec = ffi::PyType_Spec {
        name: c"tether._ffi.CObject".as_ptr(),
        basicsize: std::mem::size_of::<CObject>() as i32,
        itemsize: 0,
        // Not a GC type: a wrapper holds no Python reference but its type
        // (subclasses that add storage become GC types; see
        // `tie_state::install_slots`).
        flags: (ffi::Py_TPFLAGS_DEFAULT | ffi::Py_TPFLAGS_BASETYPE) as u32,
        slots: slots.as_mut_ptr(),
    };
    // SAFETY: a valid spec; the result is a new reference or NULL.
    let t = unsafe { ffi::PyType_FromSpec(&mut spec) };
    if t.is_null() {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: a new reference to a type object.
    Ok(unsafe { Bound::from_owned_ptr(py, t).downcast_into_unchecked::<PyType>() }.unbind())
}

/// Give a subclass of CObject the tying slots (called by `__init_subclass__`).
#[pyfunction]
fn install_slots(py: Python<'_>, cls: &Bound<'_, PyType>) -> PyResult<()> {
    if !cls.is_subclass(registry::base(py))? {
        return Err(PyTypeError::new_err(format!("{} is not a subclass of tether.Object", cls.name()?)));
    }
    // SAFETY: a subclass of CObject has the CObject layout.
    unsafe { tie_state::install_slots(cls.as_ptr() as *mut ffi::PyTypeObject) };
    Ok(())
}

/// Give a field descriptor class the native read slot.
#[pyfunction]
fn install_field_get(cls: &Bound<'_, PyType>) -> PyResult<()> {
    descriptor::install_field_get(cls)
}

/// Give an Array or List wrapper class the native `a[i]`.
#[pyfunction]
fn install_seq_getitem(py: Python<'_>, cls: &Bound<'_, PyType>) -> PyResult<()> {
    seq_index::install(py, cls)
}

#[pyfunction]
fn register_class(py: Python<'_>, type_index: i32, cls: &Bound<'_, PyType>) -> PyResult<()> {
    registry::register(py, type_index, cls)
}

#[pyfunction]
fn registered_class(py: Python<'_>, type_index: i32) -> Option<Py<PyType>> {
    registry::registered_class(py, type_index).map(|c| c.unbind())
}

#[pyfunction]
fn set_class_factory(py: Python<'_>, f: PyObject) -> PyResult<()> {
    registry::set_factory(py, f)
}

#[pyfunction]
fn mark_python_finalizing() {
    exit_park::mark_python_finalizing();
}

/// Drop side-table entries of objects that died (run after each garbage
/// collection by `tether.core`); returns how many entries remain.
#[pyfunction]
fn sweep_side_table(_py: Python<'_>) -> usize {
    // SAFETY: the GIL is held (the token proves it).
    unsafe { side_table::sweep() };
    side_table::len()
}

/// The handle address of a wrapper (0 once moved from).
#[pyfunction]
fn chandle(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    let o = wrapper(obj)?;
    // SAFETY: a wrapper has the CObject layout.
    Ok(unsafe { (*(o.as_ptr() as *mut CObject)).chandle } as usize)
}

/// The tying state of a wrapper's handle and whether it names this wrapper.
#[pyfunction]
#[pyo3(name = "tie_state")]
fn tie_state_of(obj: &Bound<'_, PyAny>) -> PyResult<(String, bool)> {
    let h = handle_of(wrapper(obj)?)?;
    // SAFETY: GIL held, live handle.
    let (state, w, _) = unsafe { tie_state::state_of(h) };
    Ok((state.to_string(), w == obj.as_ptr() as usize))
}

/// Whether the handle's binding lives in the side table (an object
/// allocated without the allocation header).
#[pyfunction]
fn tied_by_side_table(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let h = handle_of(wrapper(obj)?)?;
    // SAFETY: GIL held, live handle.
    Ok(unsafe { tie_state::state_of(h) }.2)
}

#[pyfunction]
fn type_index_of(obj: &Bound<'_, PyAny>) -> PyResult<i32> {
    let h = handle_of(wrapper(obj)?)?;
    // SAFETY: live handle.
    Ok(unsafe { (*h).type_index })
}

#[pyfunction]
fn use_count(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    let h = handle_of(wrapper(obj)?)?;
    // SAFETY: live handle, whose count is only ever accessed atomically; a
    // relaxed snapshot of the strong count.
    let combined = unsafe { std::sync::atomic::AtomicU64::from_ptr(ptr::addr_of_mut!((*h).combined_ref_count)) };
    Ok(combined.load(std::sync::atomic::Ordering::Relaxed) & 0xFFFF_FFFF)
}

/// Call a Function wrapper.
#[pyfunction]
#[pyo3(signature = (f, *args))]
fn call(py: Python<'_>, f: &Bound<'_, PyAny>, args: &Bound<'_, PyTuple>) -> PyResult<PyObject> {
    let h = handle_of(wrapper(f)?)?;
    // SAFETY: live handle.
    if unsafe { (*h).type_index } != ti::kTVMFFIFunction {
        return Err(PyTypeError::new_err(format!("{} object is not an ffi.Function", convert::type_name(f))));
    }
    // SAFETY: `f` is a live wrapper.
    native_call::call_function(py, h, args, unsafe { function_type::release_gil_of(f.as_ptr()) })
}

/// A global function wrapper, or None.
#[pyfunction]
fn get_global(py: Python<'_>, name: &str) -> PyResult<PyObject> {
    let n = byte_array(name);
    let mut out: *mut c_void = ptr::null_mut();
    // SAFETY: valid name and output slot.
    if unsafe { TVMFFIFunctionGetGlobal(&n, &mut out) } != 0 {
        return Err(error_bridge::take_ffi_error(py));
    }
    if out.is_null() {
        return Ok(py.None());
    }
    convert::any_to_py(py, OwnedAny::from_handle(out as *mut TVMFFIObject))
}

#[pyfunction]
#[pyo3(signature = (name, f, allow_override=false))]
fn set_global(py: Python<'_>, name: &str, f: &Bound<'_, PyAny>, allow_override: bool) -> PyResult<()> {
    let v = convert::py_to_any(py, f)?;
    if v.0.type_index != ti::kTVMFFIFunction {
        return Err(PyTypeError::new_err(format!("register_global_func needs a callable, got {}", convert::type_name(f))));
    }
    let n = byte_array(name);
    // SAFETY: valid name; the registry takes its own reference.
    let rc = unsafe { TVMFFIFunctionSetGlobal(&n, v.0.value.v_obj as *mut c_void, allow_override as i32) };
    if rc != 0 {
        return Err(error_bridge::take_ffi_error(py));
    }
    Ok(())
}

/// Convert a Python value to an FFI value and back (lists become Arrays…).
#[pyfunction]
#[pyo3(name = "convert")]
fn convert_value(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    let v = convert::py_to_any(py, value)?;
    convert::any_to_py(py, v)
}

#[pyfunction]
fn type_key_to_index(key: &str) -> Option<i32> {
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
fn type_info(py: Python<'_>, type_index: i32) -> PyResult<PyObject> {
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
            let func = convert::any_to_py(py, OwnedAny(owned))?;
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
fn type_attr(py: Python<'_>, type_index: i32, name: &str) -> PyResult<PyObject> {
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
        convert::any_to_py(py, OwnedAny(owned))
    }
}

/// Bind a freshly constructed handle to `obj`: call `init(*values)` and
/// move the resulting object's handle into the wrapper. A wrapper that has
/// a handle already is re-initialised, as TVM-FFI does: it becomes the
/// canonical wrapper of the new object and releases the old one (whose
/// binding to it is cleared first, so a later return of the old object
/// gets a wrapper of its own). Refused while a running call holds the old
/// handle by reference or is taking it by move.
#[pyfunction]
#[pyo3(signature = (obj, init, *values))]
fn construct(py: Python<'_>, obj: &Bound<'_, PyAny>, init: &Bound<'_, PyAny>, values: &Bound<'_, PyTuple>) -> PyResult<()> {
    let o = wrapper(obj)?.as_ptr() as *mut CObject;
    let held_by_a_call = || {
        // SAFETY: a wrapper has the CObject layout; GIL held.
        let (old, borrows) = unsafe { ((*o).chandle, (*o).borrows.load(std::sync::atomic::Ordering::Acquire)) };
        if !old.is_null() && borrows > 0 {
            return Err(PyValueError::new_err(format!(
                "cannot re-initialise a {} object that a running call holds by reference",
                convert::type_name(obj)
            )));
        }
        Ok(())
    };
    held_by_a_call()?;
    let f = handle_of(wrapper(init)?)?;
    let mut args = convert::OwnedArgs::new();
    for v in values.iter() {
        args.push(convert::py_to_any(py, &v)?);
    }
    let raw = args.as_mut_slice();
    let mut result = TVMFFIAny::NONE;
    // SAFETY: `args` keeps the arguments alive.
    let rc = unsafe { TVMFFIFunctionCall(f as *mut c_void, raw.as_mut_ptr(), raw.len() as i32, &mut result) };
    drop(args);
    if rc != 0 {
        return Err(error_bridge::take_ffi_error(py));
    }
    if result.type_index < ti::kTVMFFIStaticObjectBegin {
        drop(OwnedAny(result));
        return Err(PyTypeError::new_err("constructor did not return an object"));
    }
    let fresh = OwnedAny(result);
    // The constructor ran Python code (callbacks, field converters): check
    // again before the old handle is let go.
    held_by_a_call()?;
    // SAFETY: GIL held; `obj` owns +1 on `old` (when not NULL) until it is
    // released at the end; the fresh result's +1 moves into the wrapper,
    // which is then bound as canonical (the handle is new, so it has no
    // other wrapper).
    unsafe {
        let old = (*o).chandle;
        if !old.is_null() && !tie_state::release_binding(old, obj.as_ptr()) {
            drop(fresh);
            return Err(PyValueError::new_err(format!(
                "cannot re-initialise a {} object whose handle a running call is taking by move",
                convert::type_name(obj)
            )));
        }
        let h = fresh.0.value.v_obj;
        std::mem::forget(fresh);
        (*o).chandle = h;
        tie_state::bind_if_detached(h, obj.as_ptr());
        if !old.is_null() {
            // Outside any binding lock: the old object may be destroyed here.
            TVMFFIObjectDecRef(old as *mut c_void);
        }
    }
    Ok(())
}

/// A Function over a `TVMFFISafeCallType` symbol of a loaded library.
#[pyfunction]
fn function_from_symbol(py: Python<'_>, address: usize) -> PyResult<PyObject> {
    if address == 0 {
        return Err(PyValueError::new_err("symbol address is NULL"));
    }
    // SAFETY: the caller passes the address of a safe-call function.
    let call: TVMFFISafeCallType = unsafe { std::mem::transmute(address) };
    let mut out: *mut c_void = ptr::null_mut();
    // SAFETY: a valid safe-call; no self, no deleter.
    if unsafe { TVMFFIFunctionCreate(ptr::null_mut(), Some(call), None, &mut out) } != 0 {
        return Err(error_bridge::take_ffi_error(py));
    }
    convert::any_to_py(py, OwnedAny::from_handle(out as *mut TVMFFIObject))
}

/// The items of an Array, read from its sequence cell. Arrays are immutable
/// once built, so no lock is needed; Lists (mutable, locked) are read
/// through their accessor functions instead.
#[pyfunction]
fn seq_items(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Vec<PyObject>> {
    let h = handle_of(wrapper(obj)?)?;
    // SAFETY: live handle; an Array's cell never changes after creation.
    unsafe {
        let t = (*h).type_index;
        if t != ti::kTVMFFIArray {
            return Err(PyTypeError::new_err(format!("expected ffi.Array, got {}", registry::type_key_of(t))));
        }
        let cell = &*((h as *const u8).add(std::mem::size_of::<TVMFFIObject>()) as *const tether_sys::abi::TVMFFISeqCell);
        let data = cell.data as *const TVMFFIAny;
        (0..cell.size as usize).map(|i| convert::view_to_py(py, &*data.add(i))).collect()
    }
}

#[pyfunction]
fn set_hooks(py: Python<'_>, error_from_ffi: PyObject, error_kind: PyObject, value_from_protocol: PyObject) -> PyResult<()> {
    registry::set_hooks(py, registry::Hooks { error_from_ffi, error_kind, value_from_protocol })
}

/// A new `ffi.Error` object.
#[pyfunction]
fn error_new(py: Python<'_>, kind: &str, message: &str, backtrace: &str) -> PyResult<PyObject> {
    let (k, m, b) = (byte_array(kind), byte_array(message), byte_array(backtrace));
    let mut out: *mut c_void = ptr::null_mut();
    // SAFETY: valid byte arrays and output slot.
    if unsafe { TVMFFIErrorCreate(&k, &m, &b, &mut out) } != 0 {
        return Err(error_bridge::take_ffi_error(py));
    }
    convert::any_to_py(py, OwnedAny::from_handle(out as *mut TVMFFIObject))
}

#[pymodule(gil_used = false)]
fn _ffi(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    py_allocator::install_allocator().map_err(pyo3::exceptions::PyRuntimeError::new_err)?;
    let base = make_base_type(py)?;
    m.add("CObject", base.bind(py))?;
    let function_base = function_type::make_function_base(py, base.bind(py))?;
    m.add("FunctionBase", function_base.bind(py))?;
    function_type::set_function_base(py, function_base);
    registry::set_base(py, base);
    registry::load_builtins(py)?;
    m.add_class::<RValueRef>()?;
    RVALUE_REF_TYPE.store(py.get_type::<RValueRef>().as_ptr() as *mut ffi::PyTypeObject, std::sync::atomic::Ordering::Relaxed);
    m.add_class::<descriptor::FieldDescriptor>()?;
    descriptor::install_field_get(&py.get_type::<descriptor::FieldDescriptor>())?;
    m.add_function(wrap_pyfunction!(install_field_get, m)?)?;
    m.add_function(wrap_pyfunction!(install_seq_getitem, m)?)?;
    m.add_class::<convert::OpaquePtrValue>()?;
    m.add_function(wrap_pyfunction!(set_hooks, m)?)?;
    m.add_function(wrap_pyfunction!(error_new, m)?)?;
    m.add_function(wrap_pyfunction!(error_cell::error_backtrace, m)?)?;
    m.add_function(wrap_pyfunction!(error_cell::error_update_backtrace, m)?)?;
    m.add_function(wrap_pyfunction!(error_cell::error_extra_context, m)?)?;
    m.add_function(wrap_pyfunction!(string_values::to_object, m)?)?;
    m.add_function(wrap_pyfunction!(string_values::string_object_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(string_values::register_string_classes, m)?)?;
    m.add_function(wrap_pyfunction!(shape_values::register_shape_class, m)?)?;
    m.add_function(wrap_pyfunction!(object_ops::move_handle, m)?)?;
    m.add_function(wrap_pyfunction!(opaque_values::opaque_object, m)?)?;
    m.add_function(wrap_pyfunction!(mlir_packed_call::function_from_mlir_packed, m)?)?;
    m.add_function(wrap_pyfunction!(opaque_values::opaque_payload, m)?)?;
    m.add_function(wrap_pyfunction!(object_ops::register_type_attr, m)?)?;
    m.add_function(wrap_pyfunction!(object_ops::register_type_method, m)?)?;
    m.add_function(wrap_pyfunction!(install_slots, m)?)?;
    m.add_function(wrap_pyfunction!(register_class, m)?)?;
    m.add_function(wrap_pyfunction!(function_type::install_function_call, m)?)?;
    m.add_function(wrap_pyfunction!(registered_class, m)?)?;
    m.add_function(wrap_pyfunction!(set_class_factory, m)?)?;
    m.add_function(wrap_pyfunction!(mark_python_finalizing, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_side_table, m)?)?;
    m.add_function(wrap_pyfunction!(tied_by_side_table, m)?)?;
    m.add_function(wrap_pyfunction!(chandle, m)?)?;
    m.add_function(wrap_pyfunction!(tie_state_of, m)?)?;
    m.add_function(wrap_pyfunction!(type_index_of, m)?)?;
    m.add_function(wrap_pyfunction!(use_count, m)?)?;
    m.add_function(wrap_pyfunction!(call, m)?)?;
    m.add_function(wrap_pyfunction!(get_global, m)?)?;
    m.add_function(wrap_pyfunction!(set_global, m)?)?;
    m.add_function(wrap_pyfunction!(convert_value, m)?)?;
    m.add_function(wrap_pyfunction!(type_key_to_index, m)?)?;
    m.add_function(wrap_pyfunction!(type_info, m)?)?;
    m.add_function(wrap_pyfunction!(type_attr, m)?)?;
    m.add_function(wrap_pyfunction!(construct, m)?)?;
    m.add_function(wrap_pyfunction!(function_from_symbol, m)?)?;
    m.add_function(wrap_pyfunction!(seq_items, m)?)?;
    m.add_function(wrap_pyfunction!(error_cell::error_parts, m)?)?;
    value_classes::add_functions(m)?;
    m.add_function(wrap_pyfunction!(dlpack::tensor_from_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(dlpack::tensor_to_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(dlpack::tensor_info, m)?)?;
    m.add_function(wrap_pyfunction!(dlpack::from_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(dlpack::tensor_device, m)?)?;
    m.add_function(wrap_pyfunction!(dtype_stream::dtype_parse, m)?)?;
    m.add_function(wrap_pyfunction!(dtype_stream::dtype_format, m)?)?;
    m.add_function(wrap_pyfunction!(dtype_stream::env_set_stream, m)?)?;
    m.add_function(wrap_pyfunction!(dtype_stream::env_get_stream, m)?)?;
    py.import("atexit")?.call_method1("register", (m.getattr("mark_python_finalizing")?,))?;
    Ok(())
}

#[pymethods]
impl RValueRef {
    #[new]
    fn new(target: &Bound<'_, PyAny>) -> PyResult<Self> {
        wrapper(target)?;
        handle_of(target)?;
        Ok(RValueRef { target: target.clone().unbind() })
    }
}
