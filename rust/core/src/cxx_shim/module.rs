//! The bridge functions behind the module object's C++ side
//! (`cxx/module_object.cc`): the member functions TVM-FFI's library
//! implements, and the library module's symbol lookups. Same contract as
//! the other `tether_cxx_*` functions ([`super`]): packed safe-call shape,
//! borrowed arguments, owned result, nonzero with the error raised.

use std::ffi::{c_int, c_void};

use crate::abi::{type_index as ti, TVMFFIAny};
use crate::values::any::{Any, AnyView};
use crate::containers::Array;
use crate::values::error::Error;
use crate::values::function::{arg, expect_args, Function};
use crate::module::library::{drop_state, library_of_state};
use crate::module::symbols;
use crate::module::{self, Module};
use crate::object::ObjectRef;

use super::bridge;

fn module_arg(a: &[AnyView<'_>], i: usize) -> Result<Module, Error> {
    Module::from_object(arg::<ObjectRef>(a, i, "module")?)
}

fn name_arg(a: &[AnyView<'_>], i: usize) -> Result<String, Error> {
    arg::<String>(a, i, "name")
}

fn optional_function(f: Option<Function>) -> Any {
    f.map_or_else(Any::none, |f| Any::from_object(f.into_object()))
}

/// The library module's state: argument 0, an opaque pointer.
fn state_arg(a: &[AnyView<'_>]) -> Result<*mut c_void, Error> {
    if a[0].type_index() != ti::kTVMFFIOpaquePtr {
        return Err(Error::type_error("library module state must be an opaque pointer"));
    }
    // SAFETY: an opaque-pointer value stores the pointer in its payload.
    Ok(unsafe { a[0].as_raw().value.v_ptr })
}

/// (module, name, query_imports) -> Function or None
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_module_get_function(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("ModuleObj::GetFunction", args, n, result, |a| {
        expect_args(a, 3, "ModuleObj::GetFunction")?;
        Ok(optional_function(module_arg(a, 0)?.get_function(&name_arg(a, 1)?, arg(a, 2, "query_imports")?)?))
    })
}

/// (module, name, query_imports) -> bool
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_module_implements_function(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("ModuleObj::ImplementsFunction", args, n, result, |a| {
        expect_args(a, 3, "ModuleObj::ImplementsFunction")?;
        Ok(Any::from(module_arg(a, 0)?.implements_function(&name_arg(a, 1)?, arg(a, 2, "query_imports")?)?))
    })
}

/// (module, name, query_imports) -> str or None
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_module_get_function_doc(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("ModuleObj::GetFunctionDoc", args, n, result, |a| {
        expect_args(a, 3, "ModuleObj::GetFunctionDoc")?;
        module_arg(a, 0)?.function_doc(&name_arg(a, 1)?, arg(a, 2, "query_imports")?)
    })
}

/// (module, name, query_imports) -> str or None
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_module_get_function_metadata(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("ModuleObj::GetFunctionMetadata", args, n, result, |a| {
        expect_args(a, 3, "ModuleObj::GetFunctionMetadata")?;
        module_arg(a, 0)?.function_metadata(&name_arg(a, 1)?, arg(a, 2, "query_imports")?)
    })
}

/// (module, other) -> None: ModuleObj::ImportModule's base implementation
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_module_import_module(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("ModuleObj::ImportModule", args, n, result, |a| {
        expect_args(a, 2, "ModuleObj::ImportModule")?;
        module_arg(a, 0)?.default_import_module(&module_arg(a, 1)?)?;
        Ok(Any::none())
    })
}

/// (module) -> None: ModuleObj::ClearImports's base implementation
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_module_clear_imports(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("ModuleObj::ClearImports", args, n, result, |a| {
        expect_args(a, 1, "ModuleObj::ClearImports")?;
        module_arg(a, 0)?.default_clear_imports()?;
        Ok(Any::none())
    })
}

/// (file_name: str) -> Module
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_module_load_from_file(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("Module::LoadFromFile", args, n, result, |a| {
        expect_args(a, 1, "Module::LoadFromFile")?;
        Ok(module::load_from_file(&arg::<String>(a, 0, "file_name")?)?.to_any())
    })
}

/// (callback: Function) -> None; callback(name: str, address: opaque
/// pointer) per context symbol, in registration order
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_module_visit_context_symbols(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("Module::VisitContextSymbols", args, n, result, |a| {
        expect_args(a, 1, "Module::VisitContextSymbols")?;
        let callback = Function::from_object(arg(a, 0, "callback")?)?;
        for (name, address) in symbols::context_symbols() {
            callback.call(&[Any::string(&name)?, Any::opaque_ptr(address)])?;
        }
        Ok(Any::none())
    })
}

/// () -> an empty Array (ModuleObj::GetWriteFormats's default)
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_module_empty_array(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("ModuleObj::GetWriteFormats", args, n, result, |_| Ok(Any::from_object(Array::new(Vec::new())?.into_object())))
}

/// (state, module, name) -> Function or None
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_library_get_function(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("LibraryModule::GetFunction", args, n, result, |a| {
        expect_args(a, 3, "LibraryModule::GetFunction")?;
        // SAFETY: the state the C++ library module owns (it passes its own).
        let library = unsafe { library_of_state(state_arg(a)?) };
        Ok(optional_function(library.function(&module_arg(a, 1)?, &name_arg(a, 2)?)?))
    })
}

/// (state, name) -> str or None
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_library_get_function_doc(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("LibraryModule::GetFunctionDoc", args, n, result, |a| {
        expect_args(a, 2, "LibraryModule::GetFunctionDoc")?;
        // SAFETY: as above.
        unsafe { library_of_state(state_arg(a)?) }.function_doc(&name_arg(a, 1)?)
    })
}

/// (state, name) -> str or None
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_library_get_function_metadata(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("LibraryModule::GetFunctionMetadata", args, n, result, |a| {
        expect_args(a, 2, "LibraryModule::GetFunctionMetadata")?;
        // SAFETY: as above.
        unsafe { library_of_state(state_arg(a)?) }.function_metadata(&name_arg(a, 1)?)
    })
}

/// Releases a library module's state (its destructor).
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_library_state_drop(state: *mut c_void) {
    // SAFETY: called once, by the module that owned it.
    unsafe { drop_state(state) }
}
