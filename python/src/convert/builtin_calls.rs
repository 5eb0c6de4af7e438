//! The builtin global functions the extension calls itself (`ffi.Array`,
//! `ffi.Map`): their handles, looked up once and cached, and a call with
//! owned arguments.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Mutex;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use tether_sys::abi::{TVMFFIAny, TVMFFIByteArray, TVMFFIObject};
use tether_sys::*;

use crate::convert::error_bridge::{check, take_ffi_error};
use crate::convert::owned_any::OwnedAny;

#[derive(Clone, Copy)]
struct FnPtr(*mut TVMFFIObject);
// SAFETY: Function handles are thread-safe objects; we hold a reference.
unsafe impl Send for FnPtr {}
static BUILTINS: Mutex<Option<HashMap<String, FnPtr>>> = Mutex::new(None);

/// Look up the builtins the extension calls itself, once, when the module
/// loads: later overrides or removals of these global names must not change
/// what tether's own conversions do.
pub fn load_builtins(py: Python<'_>) -> PyResult<()> {
    for name in ["ffi.Array", "ffi.Map"] {
        builtin_function(py, name)?;
    }
    Ok(())
}

/// A global function handle (borrowed; the cache keeps a reference).
pub fn builtin_function(py: Python<'_>, name: &str) -> PyResult<*mut TVMFFIObject> {
    let mut guard = BUILTINS.lock().unwrap();
    let map = guard.get_or_insert_with(HashMap::new);
    if let Some(f) = map.get(name) {
        return Ok(f.0);
    }
    let n = TVMFFIByteArray { data: name.as_ptr() as *const _, size: name.len() };
    let mut out: *mut c_void = std::ptr::null_mut();
    // SAFETY: valid name and output slot.
    if unsafe { TVMFFIFunctionGetGlobal(&n, &mut out) } != 0 {
        drop(guard);
        return Err(take_ffi_error(py));
    }
    if out.is_null() {
        return Err(PyValueError::new_err(format!("global function {name:?} is not registered")));
    }
    map.insert(name.to_string(), FnPtr(out as *mut TVMFFIObject));
    Ok(out as *mut TVMFFIObject)
}

/// Call a builtin global function with owned arguments (consumed).
pub fn call_builtin(py: Python<'_>, name: &str, mut args: Vec<OwnedAny>) -> PyResult<OwnedAny> {
    let f = builtin_function(py, name)?;
    let mut raw: Vec<TVMFFIAny> = args.iter().map(|a| a.0).collect();
    let mut result = TVMFFIAny::NONE;
    // SAFETY: `args` keeps the values alive during the call.
    let rc = unsafe { TVMFFIFunctionCall(f as *mut c_void, raw.as_mut_ptr(), raw.len() as i32, &mut result) };
    args.clear();
    check(py, rc)?;
    Ok(OwnedAny(result))
}
