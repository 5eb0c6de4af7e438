//! The exported C functions a library uses to reach the module system from
//! the callee side (`extra/c_env_api.h`'s module section), with TVM-FFI's
//! names, signatures and semantics.
//!
//! The module contract of [`super`] applies; names are NUL-terminated.
//! TVM-FFI's `TVMFFIEnvModRegisterSystemLibSymbol` dereferences a NULL name;
//! tether reports it.

use std::ffi::{c_char, c_int, c_void, CStr};

use super::guard::guard;
use crate::values::error::Error;
use crate::module::symbols;
use crate::module::Module;

fn name_arg(name: *const c_char, func: &str) -> Result<String, Error> {
    if name.is_null() {
        return Err(Error::value_error(format!("{func}: name is NULL")));
    }
    // SAFETY: a NUL-terminated string per the module contract.
    Ok(unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned())
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIEnvModRegisterSystemLibSymbol(name: *const c_char, symbol: *mut c_void) -> c_int {
    const F: &str = "TVMFFIEnvModRegisterSystemLibSymbol";
    guard(F, || {
        symbols::register_system_lib_symbol(&name_arg(name, F)?, symbol);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIEnvModRegisterContextSymbol(name: *const c_char, symbol: *mut c_void) -> c_int {
    const F: &str = "TVMFFIEnvModRegisterContextSymbol";
    guard(F, || {
        symbols::register_context_symbol(&name_arg(name, F)?, symbol);
        Ok(())
    })
}

/// `library_ctx` is the module's C++ address as the loader stored it in
/// the library's `__tvm_ffi__library_ctx`; `*out` receives a borrowed
/// function, kept alive by the module's lookup cache.
#[no_mangle]
pub unsafe extern "C" fn TVMFFIEnvModLookupFromImports(
    library_ctx: *mut c_void,
    func_name: *const c_char,
    out: *mut *mut c_void,
) -> c_int {
    const F: &str = "TVMFFIEnvModLookupFromImports";
    guard(F, || {
        if out.is_null() {
            return Err(Error::value_error(format!("{F}: out is NULL")));
        }
        if library_ctx.is_null() {
            return Err(Error::value_error(format!("{F}: library_ctx is NULL")));
        }
        let name = name_arg(func_name, F)?;
        // SAFETY: a library context holds a live module's address (module
        // contract: the loader stored it there).
        let module = unsafe { Module::from_cxx_address(library_ctx) }?;
        let f = module.lookup_from_imports(&name)?;
        // SAFETY: checked non-NULL above.
        unsafe { *out = f as *mut c_void };
        Ok(())
    })
}
