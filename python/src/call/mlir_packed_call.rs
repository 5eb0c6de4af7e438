//! Functions over MLIR's packed "safe call" convention, as JIT engines
//! (MLIR's ExecutionEngine) export them: `void f(void** packed)`, where
//! `packed` points at the addresses of the five safe-call operands — the
//! function's self handle, the argument array, the argument count, the
//! result slot and the return code, which `f` writes. `Function.
//! __from_mlir_packed_safe_call__` makes an FFI Function whose safe call
//! lays those out and calls `f`.

use std::ffi::{c_int, c_void};
use std::ptr;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use tether_sys::abi::{TVMFFIAny, TVMFFIObject};
use tether_sys::*;

use crate::convert::error_bridge;
use crate::convert::ffi_to_py;
use crate::convert::owned_any::OwnedAny;

type MlirPackedCall = unsafe extern "C" fn(*mut *mut c_void);

/// The function's self: the packed entry point it forwards to.
struct MlirTarget(MlirPackedCall);

unsafe extern "C" fn mlir_safe_call(self_: *mut c_void, args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    // SAFETY: `self_` is the MlirTarget this Function was made with.
    let target = unsafe { &*(self_ as *const MlirTarget) };
    let mut handle: *mut c_void = ptr::null_mut();
    let mut args = args;
    let mut n = n;
    let mut result = result;
    let mut ret_code: c_int = 0;
    let mut packed: [*mut c_void; 5] = [
        &mut handle as *mut _ as *mut c_void,
        &mut args as *mut _ as *mut c_void,
        &mut n as *mut _ as *mut c_void,
        &mut result as *mut _ as *mut c_void,
        &mut ret_code as *mut _ as *mut c_void,
    ];
    // SAFETY: the operands live for the call; the entry point follows the
    // packed convention (the caller of __from_mlir_packed_safe_call__ vouches).
    unsafe { (target.0)(packed.as_mut_ptr()) };
    ret_code
}

unsafe extern "C" fn drop_target(self_: *mut c_void) {
    // SAFETY: made by Box::into_raw below, dropped once by the Function.
    drop(unsafe { Box::from_raw(self_ as *mut MlirTarget) });
}

/// `_ffi.function_from_mlir_packed(address)`: a Function over the MLIR
/// packed safe-call entry point at `address`.
#[pyfunction]
pub fn function_from_mlir_packed(py: Python<'_>, address: usize) -> PyResult<Py<PyAny>> {
    if address == 0 {
        return Err(PyValueError::new_err("symbol address is NULL"));
    }
    // SAFETY: the caller passes the address of a packed safe-call entry.
    let entry: MlirPackedCall = unsafe { std::mem::transmute(address) };
    let target = Box::into_raw(Box::new(MlirTarget(entry))) as *mut c_void;
    let mut out: *mut c_void = ptr::null_mut();
    // SAFETY: the Function owns `target` and frees it with its deleter.
    if unsafe { TVMFFIFunctionCreate(target, Some(mlir_safe_call), Some(drop_target), &mut out) } != 0 {
        // SAFETY: not taken over on failure.
        unsafe { drop_target(target) };
        return Err(error_bridge::take_ffi_error(py));
    }
    ffi_to_py::any_to_py(py, OwnedAny::from_handle(out as *mut TVMFFIObject))
}
