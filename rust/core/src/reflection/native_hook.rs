//! Native hooks in type-attribute columns: the function-pointer form of a
//! hook next to the `ffi.Function` form.
//!
//! TVM-FFI lets a type attribute such as `__any_hash__`, `__s_visit__` or
//! `__s_mutate__` hold an opaque pointer to a `noexcept` function with the
//! C ABI `TVMFFIAny (*)(Args...)` (its `NativeFunctionView`): the result is
//! the raw storage of an `Expected<R>`, the value on success or an owned
//! `ffi.Error` object on failure. Compiled code calls such pointers
//! directly and takes another path when a column holds an `ffi.Function`.
//! This module turns Rust results into that raw form (catching panics, which
//! must not cross the C ABI) and calls either form of a hook from Rust.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::abi::{type_index as ti, TVMFFIAny};
use crate::values::any::Any;
use crate::values::error::Error;
use crate::values::function::{panic_message, Function};
use crate::object::ObjectRef;

/// An `ffi.Error` value in raw form (an owned reference).
pub(crate) fn raw_error(e: Error) -> TVMFFIAny {
    match e.to_object() {
        Ok(obj) => Any::from_object(obj).into_raw(),
        // Allocation failed: there is no way to report it but the abort
        // the C++ side would also end in.
        Err(_) => std::process::abort(),
    }
}

/// The raw `Expected` storage of `body`'s result, with panics reported as
/// errors: what a native hook returns.
pub(crate) fn expected_raw(hook: &str, body: impl FnOnce() -> Result<Any, Error>) -> TVMFFIAny {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => v.into_raw(),
        Ok(Err(e)) => raw_error(e),
        Err(p) => raw_error(Error::runtime_error(format!("{hook}: internal panic: {}", panic_message(&*p)))),
    }
}

/// Take a raw `Expected` result: the value, or the error it stores.
///
/// # Safety
/// `raw` must be an owned value (its reference, if any, moves here).
pub(crate) unsafe fn from_expected_raw(raw: TVMFFIAny) -> Result<Any, Error> {
    // SAFETY: per the caller.
    let v = unsafe { Any::from_raw_owned(raw) };
    if v.type_index() == ti::kTVMFFIError {
        return Err(Error::from_object(v.as_object().expect("an error is an object")));
    }
    Ok(v)
}

/// Call `f` as TVM-FFI's `CallExpected` does: an `ffi.Error` it returns
/// (rather than raises) is its failure too.
pub(crate) fn call_expected(f: &Function, args: &[Any]) -> Result<Any, Error> {
    let v = f.call(args)?;
    if v.type_index() == ti::kTVMFFIError {
        return Err(Error::from_object(v.as_object().expect("an error is an object")));
    }
    Ok(v)
}

/// A function pointer as the opaque-pointer value a column stores.
pub(crate) fn pointer_value(f: *const c_void) -> Any {
    Any::opaque_ptr(f as *mut c_void)
}

/// A hook read from a column: a native pointer or an `ffi.Function`.
pub(crate) enum Hook {
    Native(*mut c_void),
    Packed(Function),
}

impl Hook {
    /// The hook a column value holds (`None` for None; an error naming
    /// `attr` for any other kind of value).
    pub(crate) fn from_value(attr: &str, v: &Any) -> Result<Option<Hook>, Error> {
        match v.type_index() {
            ti::kTVMFFINone => Ok(None),
            // SAFETY: an opaque pointer's payload is its pointer.
            ti::kTVMFFIOpaquePtr => Ok(Some(Hook::Native(unsafe { v.as_raw().value.v_ptr }))),
            ti::kTVMFFIFunction => Ok(Some(Hook::Packed(Function::from_object(v.get::<ObjectRef>()?)?))),
            _ => Err(Error::type_error(format!("{attr} must be an opaque function pointer or ffi.Function"))),
        }
    }
}

/// Call an `__any_hash__` hook on `value`: its int64 result.
pub(crate) fn call_any_hash(hook: &Hook, value: &Any) -> Result<i64, Error> {
    let out = match hook {
        Hook::Native(f) => {
            // SAFETY: a native `__any_hash__` pointer has this ABI
            // (`const Any&` is passed as a pointer to the value).
            let f: unsafe extern "C" fn(*const TVMFFIAny) -> TVMFFIAny = unsafe { std::mem::transmute(*f) };
            // SAFETY: the hook returns an owned Expected<int64>.
            unsafe { from_expected_raw(f(value.as_raw())) }?
        }
        Hook::Packed(f) => f.call(std::slice::from_ref(value))?,
    };
    out.get::<i64>()
}

/// Call an `__any_equal__` hook on two values.
pub(crate) fn call_any_equal(hook: &Hook, lhs: &Any, rhs: &Any) -> Result<bool, Error> {
    let out = match hook {
        Hook::Native(f) => {
            // SAFETY: a native `__any_equal__` pointer has this ABI.
            let f: unsafe extern "C" fn(*const TVMFFIAny, *const TVMFFIAny) -> TVMFFIAny =
                unsafe { std::mem::transmute(*f) };
            // SAFETY: the hook returns an owned Expected<bool>.
            unsafe { from_expected_raw(f(lhs.as_raw(), rhs.as_raw())) }?
        }
        Hook::Packed(f) => f.call(&[lhs.clone(), rhs.clone()])?,
    };
    out.get::<bool>()
}
