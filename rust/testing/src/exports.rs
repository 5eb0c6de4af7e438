//! Functions exported under TVM-FFI's DLL-export naming, as upstream's
//! testing library exports them for the metadata tests: for an export name
//! `N`, `__tvm_ffi_N` is the function (the packed calling convention),
//! `__tvm_ffi__metadata_N` returns its metadata (JSON with its type schema)
//! and `__tvm_ffi__doc_N` its docstring, both as strings made by the core.
//! Loaders (`ffi.ModuleLoadFromFile`, `Function::InvokeExternC`) find them
//! by these names.

use std::ffi::{c_int, c_void};

use tether_sys::abi::TVMFFIAny;

use crate::ffi::{Any, AnyView, Error};
use crate::sig::{function_schema, metadata, Ty};

/// Run `body` as a packed call: 0 with its value in `result`, or -1 with
/// its error raised.
///
/// # Safety
/// The packed calling convention: `num_args` valid views at `args` and a
/// writable `result`.
unsafe fn packed(args: *const TVMFFIAny, num_args: i32, result: *mut TVMFFIAny, body: impl FnOnce(&[AnyView<'_>]) -> Result<Any, Error>) -> c_int {
    // SAFETY: per the caller.
    let views: Vec<AnyView<'_>> = if num_args <= 0 || args.is_null() {
        Vec::new()
    } else {
        // SAFETY: per the caller.
        unsafe { std::slice::from_raw_parts(args, num_args as usize) }.iter().map(|a| unsafe { AnyView::from_raw(a) }).collect()
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&views))).unwrap_or_else(|_| Err(Error::new("InternalError", "panic"))) {
        Ok(v) => {
            // SAFETY: per the caller.
            unsafe { result.write(v.into_raw()) };
            0
        }
        Err(e) => {
            e.raise();
            -1
        }
    }
}

/// The int arguments of a typed export, with upstream's messages.
fn ints(name: &str, args: &[AnyView<'_>], n: usize) -> Result<Vec<i64>, Error> {
    let sig = crate::sig::signature_text(Some(name), &vec![Ty::Int; n], &Ty::Int);
    if args.len() != n {
        return Err(Error::type_error(format!(
            "Mismatched number of arguments when calling: `{sig}`. Expected {n} but got {} arguments",
            args.len()
        )));
    }
    args.iter()
        .enumerate()
        .map(|(i, a)| {
            a.int().ok_or_else(|| {
                Error::type_error(format!(
                    "Mismatched type on argument #{i} when calling: `{sig}`. Expected `int` but got `{}`",
                    a.type_key()
                ))
            })
        })
        .collect()
}

const ADD_DOC: &str = "Add two integers and return the sum.

Parameters
----------
a : int
    First integer
b : int
    Second integer

Returns
-------
result : int
    Sum of a and b";

/// `testing_dll_schema_id_int(x: int) -> int`.
///
/// # Safety
/// The packed calling convention.
#[no_mangle]
pub unsafe extern "C" fn __tvm_ffi_testing_dll_schema_id_int(_self: *mut c_void, args: *const TVMFFIAny, num_args: i32, result: *mut TVMFFIAny) -> c_int {
    // SAFETY: per the caller.
    unsafe { packed(args, num_args, result, |a| Ok(Any::int(ints("testing_dll_schema_id_int", a, 1)?[0]))) }
}

/// # Safety
/// The packed calling convention.
#[no_mangle]
pub unsafe extern "C" fn __tvm_ffi__metadata_testing_dll_schema_id_int(_self: *mut c_void, args: *const TVMFFIAny, num_args: i32, result: *mut TVMFFIAny) -> c_int {
    // SAFETY: per the caller.
    unsafe { packed(args, num_args, result, |_| Any::string(&metadata(&function_schema(&[Ty::Int], &Ty::Int), ""))) }
}

/// `testing_dll_test_add_with_docstring(a: int, b: int) -> int`.
///
/// # Safety
/// The packed calling convention.
#[no_mangle]
pub unsafe extern "C" fn __tvm_ffi_testing_dll_test_add_with_docstring(_self: *mut c_void, args: *const TVMFFIAny, num_args: i32, result: *mut TVMFFIAny) -> c_int {
    // SAFETY: per the caller.
    unsafe {
        packed(args, num_args, result, |a| {
            let v = ints("testing_dll_test_add_with_docstring", a, 2)?;
            Ok(Any::int(v[0].wrapping_add(v[1])))
        })
    }
}

/// # Safety
/// The packed calling convention.
#[no_mangle]
pub unsafe extern "C" fn __tvm_ffi__metadata_testing_dll_test_add_with_docstring(_self: *mut c_void, args: *const TVMFFIAny, num_args: i32, result: *mut TVMFFIAny) -> c_int {
    // SAFETY: per the caller.
    unsafe { packed(args, num_args, result, |_| Any::string(&metadata(&function_schema(&[Ty::Int, Ty::Int], &Ty::Int), ""))) }
}

/// # Safety
/// The packed calling convention.
#[no_mangle]
pub unsafe extern "C" fn __tvm_ffi__doc_testing_dll_test_add_with_docstring(_self: *mut c_void, args: *const TVMFFIAny, num_args: i32, result: *mut TVMFFIAny) -> c_int {
    // SAFETY: per the caller.
    unsafe { packed(args, num_args, result, |_| Any::string(ADD_DOC)) }
}
