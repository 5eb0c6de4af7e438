//! Modules from Rust: the system library, imports and their cycle check,
//! TVMFFIEnvModLookupFromImports and its cache, context symbols, and the
//! ffi.Module* globals' results and TVM-FFI's error messages.

use std::ffi::{c_int, c_void, CString};

use tether_core::abi::{TVMFFIAny, TVMFFIObject};
use tether_core::values::any::{Any, AnyView};
use tether_core::c_api;
use tether_core::module::{self, Module};
use tether_core::{Error, Function};

fn global(name: &str) -> Function {
    Function::get_global(name).unwrap_or_else(|| panic!("{name} is not registered"))
}

fn call(name: &str, args: &[Any]) -> Result<Any, Error> {
    global(name).call(args)
}

fn s(v: &str) -> Any {
    Any::string(v).unwrap()
}

unsafe extern "C" fn plus_ten(_: *mut c_void, args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    // SAFETY: one int argument, a result slot.
    unsafe {
        assert_eq!(n, 1);
        let x = AnyView::from_raw(*args).get::<i64>().unwrap();
        *result = Any::from(x + 10).into_raw();
    }
    0
}

unsafe extern "C" fn doc_of_plus_ten(_: *mut c_void, _: *const TVMFFIAny, _: i32, result: *mut TVMFFIAny) -> c_int {
    // SAFETY: a result slot.
    unsafe { *result = Any::string("Adds ten.").unwrap().into_raw() };
    0
}

fn register(name: &str, f: unsafe extern "C" fn(*mut c_void, *const TVMFFIAny, i32, *mut TVMFFIAny) -> c_int) {
    let c = CString::new(name).unwrap();
    // SAFETY: a NUL-terminated name and a function address.
    assert_eq!(unsafe { c_api::TVMFFIEnvModRegisterSystemLibSymbol(c.as_ptr(), f as *mut c_void) }, 0);
}

fn module_of(v: Any) -> Module {
    Module::from_object(v.get().unwrap()).unwrap()
}

#[test]
fn system_lib_serves_registered_symbols_with_prefixes() {
    register("__tvm_ffi_rs_plus_ten", plus_ten);
    register("__tvm_ffi__doc_rs_plus_ten", doc_of_plus_ten);
    register("__tvm_ffi_rsprefix.only_prefixed", plus_ten);
    let sys = module_of(call("ffi.SystemLib", &[]).unwrap());
    assert!(sys.as_object().same_as(module::system_lib("").unwrap().as_object()));
    assert_eq!(sys.kind().unwrap(), "library");
    assert_eq!(sys.property_mask().unwrap(), 3);
    let f = sys.get_function("rs_plus_ten", false).unwrap().unwrap();
    assert_eq!(f.call(&[Any::from(5i64)]).unwrap().get::<i64>().unwrap(), 15);
    assert!(sys.get_function("rs_missing", true).unwrap().is_none());
    assert_eq!(sys.function_doc("rs_plus_ten", false).unwrap().get::<String>().unwrap(), "Adds ten.");
    assert!(sys.function_metadata("rs_plus_ten", false).unwrap().is_none());
    assert!(sys.implements_function("rs_plus_ten", false).unwrap());

    let prefixed = module_of(call("ffi.SystemLib", &[s("rsprefix.")]).unwrap());
    assert!(!prefixed.as_object().same_as(sys.as_object()));
    assert!(prefixed.get_function("only_prefixed", false).unwrap().is_some());
    assert!(sys.get_function("only_prefixed", false).unwrap().is_none());
    assert_eq!(
        call("ffi.SystemLib", &[Any::from(1i64)]).err().unwrap().message(),
        "Cannot convert from type `int` to `str`"
    );
}

#[test]
fn globals_report_library_defaults_and_typed_errors() {
    let sys = call("ffi.SystemLib", &[s("rsglobals.")]).unwrap();
    assert_eq!(call("ffi.ModuleGetKind", &[sys.clone()]).unwrap().get::<String>().unwrap(), "library");
    assert_eq!(call("ffi.ModuleGetPropertyMask", &[sys.clone()]).unwrap().get::<i64>().unwrap(), 3);
    let formats = call("ffi.ModuleGetWriteFormats", &[sys.clone()]).unwrap();
    assert_eq!(tether_core::Array::from_object(formats.get().unwrap()).unwrap().len(), 0);
    assert_eq!(call("ffi.ModuleInspectSource", &[sys.clone(), s("")]).unwrap().get::<String>().unwrap(), "");
    let e = call("ffi.ModuleWriteToFile", &[sys.clone(), s("a"), s("b")]).err().unwrap();
    assert_eq!((e.kind(), e.message()), ("RuntimeError", "Module[library] does not support WriteToFile"));
    assert!(call("ffi.ModuleGetFunction", &[sys.clone(), s("nothing"), Any::from(true)]).unwrap().is_none());
    let e = call("ffi.ModuleGetKind", &[Any::from(1i64)]).err().unwrap();
    assert_eq!(e.kind(), "TypeError");
    assert_eq!(
        e.message(),
        "Mismatched type on argument #0 when calling: `ffi.ModuleGetKind(0: ffi.Module) -> str`. Expected `ffi.Module` but got `int`"
    );
    let e = call("ffi.ModuleGetFunction", &[sys.clone(), s("x")]).err().unwrap();
    assert_eq!(
        e.message(),
        "Mismatched number of arguments when calling: `ffi.ModuleGetFunction(0: ffi.Module, 1: str, 2: bool) -> Optional<ffi.Function>`. Expected 3 but got 2 arguments"
    );
    call("ffi.ModuleGlobalsAdd", &[sys.clone()]).unwrap();
    call("ffi.ModuleGlobalsRemove", &[sys.clone()]).unwrap();
}

#[test]
fn load_from_file_reports_upstream_errors() {
    let e = call("ffi.ModuleLoadFromFile", &[s("noext")]).err().unwrap();
    assert_eq!((e.kind(), e.message()), ("RuntimeError", "Failed to get file format from noext"));
    let e = call("ffi.ModuleLoadFromFile", &[s("a.foo")]).err().unwrap();
    assert!(e.message().starts_with("Loader for `.foo` files is not registered, resolved to (ffi.Module.load_from_file.foo)"));
    let e = call("ffi.ModuleLoadFromFile", &[s("/nonexistent/lib.so")]).err().unwrap();
    assert_eq!(e.kind(), "RuntimeError");
    assert!(e
        .message()
        .starts_with("Check failed: (lib_handle_ != nullptr) is false: Failed to load dynamic shared library /nonexistent/lib.so"));
    // .dylib and .dll go to the .so loader.
    let e = module::load_from_file("/nonexistent/lib.dylib").err().unwrap();
    assert!(e.message().contains("Failed to load dynamic shared library /nonexistent/lib.dylib"));
}

#[test]
fn imports_are_searched_depth_first_and_cycles_refused() {
    register("__tvm_ffi_rsimp.b.from_b", plus_ten);
    let a = module_of(call("ffi.SystemLib", &[s("rsimp.a.")]).unwrap());
    let b = module_of(call("ffi.SystemLib", &[s("rsimp.b.")]).unwrap());
    a.clear_imports().unwrap();
    b.clear_imports().unwrap();
    call("ffi.ModuleImportModule", &[a.to_any(), b.to_any()]).unwrap();
    assert_eq!(a.imports().unwrap().len(), 1);
    assert!(a.get_function("from_b", false).unwrap().is_none());
    assert!(a.get_function("from_b", true).unwrap().is_some());
    assert!(call("ffi.ModuleImplementsFunction", &[a.to_any(), s("from_b"), Any::from(true)]).unwrap().get::<bool>().unwrap());
    let e = b.import_module(&a).err().unwrap();
    assert_eq!((e.kind(), e.message()), ("RuntimeError", "Cyclic dependency detected during import"));
    let e = a.import_module(&a).err().unwrap();
    assert_eq!(e.message(), "Cyclic dependency detected during import");

    // TVMFFIEnvModLookupFromImports: from the imports, cached, then globals.
    let name = CString::new("from_b").unwrap();
    let mut out: *mut c_void = std::ptr::null_mut();
    // SAFETY: a live module's C++ address, a name and an output slot.
    assert_eq!(unsafe { c_api::TVMFFIEnvModLookupFromImports(a.cxx_address(), name.as_ptr(), &mut out) }, 0);
    let mut again: *mut c_void = std::ptr::null_mut();
    // SAFETY: as above.
    assert_eq!(unsafe { c_api::TVMFFIEnvModLookupFromImports(a.cxx_address(), name.as_ptr(), &mut again) }, 0);
    assert_eq!(out, again);
    // SAFETY: a borrowed function kept alive by the module.
    let r = unsafe { tether_core::values::function::call_raw(out as *mut TVMFFIObject, &Any::from(1i64).into_raw(), 1) };
    assert_eq!(r.unwrap().get::<i64>().unwrap(), 11);
    let missing = CString::new("rs.no.such").unwrap();
    // SAFETY: as above.
    assert_ne!(unsafe { c_api::TVMFFIEnvModLookupFromImports(a.cxx_address(), missing.as_ptr(), &mut out) }, 0);
    let e = tether_core::values::error::take_raised().unwrap();
    assert_eq!(e.message(), "Cannot find function rs.no.such in the imported modules or global registry.");
    // SAFETY: NULL context is reported, not dereferenced.
    assert_ne!(unsafe { c_api::TVMFFIEnvModLookupFromImports(std::ptr::null_mut(), name.as_ptr(), &mut out) }, 0);
    assert_eq!(tether_core::values::error::take_raised().unwrap().kind(), "ValueError");

    call("ffi.ModuleClearImports", &[a.to_any()]).unwrap();
    assert!(a.imports().unwrap().is_empty());
    assert!(a.get_function("from_b", true).unwrap().is_none());
}

#[test]
fn library_functions_keep_their_module_alive() {
    register("__tvm_ffi_rskeep.f", plus_ten);
    let f = {
        let m = module::system_lib("rskeep.").unwrap();
        m.get_function("f", false).unwrap().unwrap()
    };
    assert_eq!(f.call(&[Any::from(0i64)]).unwrap().get::<i64>().unwrap(), 10);
}
