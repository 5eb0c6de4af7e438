//! Python callables as FFI Functions: the safe-call entry native code calls.
//!
//! A callback runs whole inside one C frame of `exit_park.c`
//! (`tether_park_callback`): it takes the GIL, calls [`callback_args`],
//! calls the callable by vectorcall, releases the arguments, calls
//! [`callback_result`] and gives the GIL back. That frame parks a daemon
//! thread meeting interpreter exit anywhere in the GIL take, the call or
//! the decrefs; with the file built with -fexceptions the frame costs
//! nothing on the normal path.
//!
//! The two conversions handle the common values with raw CPython calls:
//! None, ints, floats, bools, and objects whose canonical wrapper is alive
//! (handed out with one incref, as the field descriptors do); a result that
//! is a plain value or a wrapper. Everything else, and every error, goes
//! through the general conversions inside `Python::attach`. That is not
//! only for brevity: the GIL is held here without pyo3 knowing it (its
//! thread-local count is not raised), and a `Py<T>` dropped then would have
//! its decref deferred to pyo3's pool; the raw paths drop none, and
//! `attach` (which only nests, the GIL being held) raises the count for
//! the rest.
//!
//! SAFETY invariants of this module: `callback_args` and `callback_result`
//! run only inside `tether_park_callback`, with the GIL held; a Function's
//! `self` is the callable it holds one reference on.

use std::ffi::{c_int, c_void, CString};
use std::ptr;

use pyo3::ffi;
use pyo3::prelude::*;
use tether_sys::abi::{type_index as ti, TVMFFIAny, TVMFFIObject};
use tether_sys::*;

use crate::convert::error_bridge::take_ffi_error;
use crate::convert::exception_to_ffi::raise_into_ffi;
use crate::convert::ffi_to_py::view_to_py;
use crate::convert::opaque_cell;
use crate::convert::owned_any::OwnedAny;
use crate::convert::py_to_ffi::py_to_any;
use crate::convert::py_to_ffi;
use crate::convert::registry;
use crate::convert::rvalue_ref;
use crate::tie::exit_park;
use crate::tie::tie_state::{self, CObject};

type ArgsToPy = unsafe extern "C" fn(*const c_void, c_int, *mut *mut ffi::PyObject, *mut c_int) -> c_int;
type ResultToFfi = unsafe extern "C" fn(*mut ffi::PyObject, *mut c_void) -> c_int;

extern "C" {
    fn tether_park_callback(
        callable: *mut ffi::PyObject,
        args: *const c_void,
        nargs: c_int,
        buf: *mut *mut ffi::PyObject,
        result: *mut c_void,
        convert_args: ArgsToPy,
        convert_result: ResultToFfi,
    ) -> c_int;
}

/// Wrap a Python callable as an FFI Function. The conversions reach it
/// through the hook of `convert::py_to_ffi`, filled at module start-up.
pub fn function_from_callable(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<*mut TVMFFIObject> {
    let p = obj.clone().into_ptr();
    let mut out: *mut c_void = ptr::null_mut();
    // SAFETY: the function takes our reference, released by its deleter.
    let rc = unsafe { TVMFFIFunctionCreate(p as *mut c_void, Some(py_safe_call), Some(opaque_cell::release_pyobject), &mut out) };
    if rc != 0 {
        // SAFETY: the reference we took above.
        unsafe { ffi::Py_DECREF(p) };
        return Err(take_ffi_error(py));
    }
    Ok(out as *mut TVMFFIObject)
}

/// The safe-call entry of Functions made from Python callables. The
/// common case (the interpreter alive, up to 8 arguments) keeps a small
/// frame; the rest is out of line.
unsafe extern "C" fn py_safe_call(self_: *mut c_void, args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    if !exit_park::python_alive() {
        return interpreter_gone();
    }
    if n > INLINE_ARGS as i32 {
        // SAFETY: the caller's arguments, as below.
        return unsafe { call_with_heap_args(self_, args, n, result) };
    }
    // The arguments as new references in a stack array (no tuple, no
    // allocation), left uninitialised: the frame reads only the `filled`
    // entries written by `callback_args`.
    let mut buf = [std::mem::MaybeUninit::<*mut ffi::PyObject>::uninit(); INLINE_ARGS];
    // SAFETY: `args` holds `n` views and `buf` room for `n` pointers.
    unsafe { run_callback(self_, args, n.max(0), buf.as_mut_ptr() as *mut *mut ffi::PyObject, result) }
}

/// Arguments a callback takes in its stack buffer.
const INLINE_ARGS: usize = 8;

/// [`py_safe_call`] once Python is finalizing: an FFI error, no Python.
#[cold]
#[inline(never)]
fn interpreter_gone() -> c_int {
    let k = CString::new("RuntimeError").unwrap();
    let m = CString::new("cannot call a Python function: the interpreter is shutting down").unwrap();
    // SAFETY: NUL-terminated strings.
    unsafe { TVMFFIErrorSetRaisedFromCStr(k.as_ptr(), m.as_ptr()) };
    -1
}

/// [`py_safe_call`] with more arguments than its stack buffer holds.
///
/// # Safety
/// As [`run_callback`], with `n` > [`INLINE_ARGS`].
#[cold]
#[inline(never)]
unsafe fn call_with_heap_args(self_: *mut c_void, args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    let mut buf = vec![ptr::null_mut::<ffi::PyObject>(); n as usize];
    // SAFETY: per the caller; `buf` has room for `n` pointers.
    unsafe { run_callback(self_, args, n, buf.as_mut_ptr(), result) }
}

/// The whole callback in the parking frame.
///
/// # Safety
/// `self_` is our callable; `args` holds `n` (>= 0) views and `buf` room
/// for `n` pointers, both alive for the call.
#[inline(always)]
unsafe fn run_callback(self_: *mut c_void, args: *const TVMFFIAny, n: i32, buf: *mut *mut ffi::PyObject, result: *mut TVMFFIAny) -> c_int {
    // SAFETY: per the caller; the converters meet the frame's contract
    // (see exit_park.c).
    unsafe {
        tether_park_callback(
            self_ as *mut ffi::PyObject,
            args as *const c_void,
            n,
            buf,
            result as *mut c_void,
            callback_args,
            callback_result,
        )
    }
}

/// The callback's arguments as new references in `buf`, counted in
/// `filled` as they are made; -1 with a Python exception set on failure.
unsafe extern "C" fn callback_args(args: *const c_void, n: c_int, buf: *mut *mut ffi::PyObject, filled: *mut c_int) -> c_int {
    let args = args as *const TVMFFIAny;
    for i in 0..n.max(0) as usize {
        // SAFETY: `n` valid views and room for `n` pointers (the frame's contract).
        unsafe {
            let p = arg_to_py(&*args.add(i));
            if p.is_null() {
                return -1;
            }
            *buf.add(i) = p;
            *filled = i as c_int + 1;
        }
    }
    0
}

/// One argument view as a new reference, or NULL with a Python exception set.
///
/// # Safety
/// GIL held; `v` a valid view alive for the call.
unsafe fn arg_to_py(v: &TVMFFIAny) -> *mut ffi::PyObject {
    // SAFETY: per the caller; the union is read per the type index.
    unsafe {
        match v.type_index {
            ti::kTVMFFINone => {
                let none = ffi::Py_None();
                ffi::Py_INCREF(none);
                none
            }
            ti::kTVMFFIInt => ffi::PyLong_FromLongLong(v.value.v_int64),
            ti::kTVMFFIFloat => ffi::PyFloat_FromDouble(v.value.v_float64),
            ti::kTVMFFIBool => ffi::PyBool_FromLong((v.value.v_int64 != 0) as _),
            // Read from the borrowed object, whose reference stays untouched.
            ti::kTVMFFIBigInt => crate::convert::big_int::to_py_raw(v),
            i if i >= ti::kTVMFFIStaticObjectBegin
                && i != ti::kTVMFFIStr
                && i != ti::kTVMFFIBytes
                && i != ti::kTVMFFIOpaquePyObject
                && i != ti::kTVMFFIShape
                && !v.value.v_obj.is_null() =>
            {
                match registry::lookup(i) {
                    Some(cls) => object_arg_to_py(v.value.v_obj, cls),
                    None => general_arg_to_py(v), // the class factory runs Python code
                }
            }
            _ => general_arg_to_py(v),
        }
    }
}

/// The wrapper for a borrowed object argument (a new reference), through
/// the one return path; NULL with a Python exception set on failure.
///
/// # Safety
/// GIL held; `h` live for the call; `cls` the registered class of its type.
unsafe fn object_arg_to_py(h: *mut TVMFFIObject, cls: *mut ffi::PyTypeObject) -> *mut ffi::PyObject {
    // SAFETY: per the caller.
    unsafe {
        // With the GIL, an Active binding names a live wrapper owning +1 on
        // `h`: hand it out with one incref, skipping the FFI count's
        // increment and decrement that the return path would make (it
        // returns this very wrapper). try_incref refuses a wrapper whose
        // count already reached zero (its teardown is under way); the
        // return path then decides. Free-threaded builds always take the
        // return path, which holds the binding's lock.
        #[cfg(not(Py_GIL_DISABLED))]
        {
            let cur = crate::tie::binding::Binding::of(h).load();
            if cur != 0 && cur & crate::tie::binding::TAGS == 0 && crate::tie::tying_lock::try_incref(cur as *mut ffi::PyObject) {
                return cur as *mut ffi::PyObject;
            }
        }
        TVMFFIObjectIncRef(h as *mut c_void);
        tie_state::make_ret_object(h, cls)
    }
}

/// Any argument, by the general conversion (out of line: its frame is
/// large, the raw paths' is not).
///
/// # Safety
/// GIL held; `v` a valid view alive for the call.
#[inline(never)]
unsafe fn general_arg_to_py(v: &TVMFFIAny) -> *mut ffi::PyObject {
    Python::attach(|py| {
        // SAFETY: per the caller.
        match unsafe { view_to_py(py, v) } {
            Ok(o) => o.into_ptr(),
            Err(e) => {
                e.restore(py);
                ptr::null_mut()
            }
        }
    })
}

/// The callable's result (borrowed, or NULL with a Python exception set)
/// into the FFI result slot: 0, or -1 with the FFI error raised.
unsafe extern "C" fn callback_result(ret: *mut ffi::PyObject, result: *mut c_void) -> c_int {
    let result = result as *mut TVMFFIAny;
    if !ret.is_null() {
        // SAFETY: GIL held (the frame's contract); `ret` is live.
        if let Some(v) = unsafe { plain_or_wrapper(ret, !result.is_null()) } {
            if !result.is_null() {
                // SAFETY: the caller's result slot.
                unsafe { *result = v };
            }
            return 0;
        }
    }
    // SAFETY: per this function's contract.
    unsafe { general_result(ret, result) }
}

/// [`callback_result`] for the values its raw path leaves, and errors: out
/// of line, so the common return keeps a small frame.
///
/// # Safety
/// As [`callback_result`].
#[cold]
#[inline(never)]
unsafe fn general_result(ret: *mut ffi::PyObject, result: *mut TVMFFIAny) -> c_int {
    Python::attach(|py| {
        let converted = if ret.is_null() {
            Err(PyErr::fetch(py))
        } else {
            // SAFETY: a live object, borrowed for the call.
            let ret = unsafe { pyo3::Borrowed::from_ptr(py, ret) };
            match crate::convert::rvalue_ref::as_rvalue_ref(&ret) {
                Some(r) => rvalue_ref::move_out(r),
                None => py_to_any(py, &ret),
            }
        };
        match converted {
            Ok(v) => {
                if !result.is_null() {
                    // SAFETY: the caller's result slot.
                    unsafe { *result = v.into_raw() };
                }
                0
            }
            Err(e) => {
                raise_into_ffi(py, e);
                -1
            }
        }
    })
}

/// A result that is a plain value (None, exact int that fits, float, bool)
/// or a wrapper with a handle, as an owned FFI value (the wrapper's handle
/// gains a reference when `owned`); None for anything else.
///
/// # Safety
/// GIL held; `p` live.
unsafe fn plain_or_wrapper(p: *mut ffi::PyObject, owned: bool) -> Option<TVMFFIAny> {
    // SAFETY: per the caller.
    unsafe {
        if let Some(v) = py_to_ffi::plain_value_ptr(p) {
            return Some(v);
        }
        if !registry::is_wrapper_ptr(Python::assume_attached(), p) {
            return None;
        }
        let h = (*(p as *mut CObject)).chandle;
        if h.is_null() {
            return None; // moved from: the general path raises
        }
        if owned {
            TVMFFIObjectIncRef(h as *mut c_void);
        }
        Some(OwnedAny::from_handle(h).into_raw())
    }
}
