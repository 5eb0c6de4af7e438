//! The module globals with TVM-FFI's names, signatures and messages
//! (`ffi.ModuleLoadFromFile`, `ffi.Module.load_from_file.so`,
//! `ffi.ModuleGetFunction`, …, `ffi.SystemLib`), the loader behind
//! `Module::LoadFromFile`, the process-wide modules kept alive by
//! `ffi.ModuleGlobalsAdd`, and the system library's one module per prefix.

use std::collections::HashMap;
use parking_lot::Mutex;

use crate::abi::type_index as ti;
use crate::values::any::{Any, AnyView};
use crate::values::error::Error;
use crate::values::function::Function;
use crate::containers::typed_args::Sig;

use super::library::{deep_bind_default, Library};
use super::library_module::create_library_module;
use super::object::Module;

/// `Module::LoadFromFile`: the loader `ffi.Module.load_from_file.<ext>`
/// (`dll`, `dylib` and `dso` are `so`) called with (path, format).
pub fn load_from_file(file_name: &str) -> Result<Module, Error> {
    let format = match file_name.rfind('.') {
        Some(i) => &file_name[i + 1..],
        None => return Err(Error::runtime_error(format!("Failed to get file format from {file_name}"))),
    };
    let format = if matches!(format, "dll" | "dylib" | "dso") { "so" } else { format };
    let loader_name = format!("ffi.Module.load_from_file.{format}");
    let loader = Function::get_global(&loader_name).ok_or_else(|| {
        Error::runtime_error(format!(
            "Loader for `.{format}` files is not registered, resolved to ({loader_name}) in the global registry.\
             Ensure that you have loaded the correct runtime code, and\
             that you are on the correct hardware architecture."
        ))
    })?;
    let module = loader.call(&[Any::string(file_name)?, Any::string(format)?])?;
    let obj = module
        .as_object()
        .ok_or_else(|| Error::type_error(format!("Cannot convert from type `{}` to `ffi.Module`", module.type_key())))?;
    Module::from_object(obj)
}

/// Open a shared library as a library module.
pub fn load_shared_library(path: &str, deep_bind: bool) -> Result<Module, Error> {
    create_library_module(Library::open(path, deep_bind)?)
}

/// The system library's module for `prefix` (one per prefix for the life
/// of the process).
pub fn system_lib(prefix: &str) -> Result<Module, Error> {
    static MODULES: Mutex<Option<HashMap<String, Module>>> = Mutex::new(None);
    let mut modules = MODULES.lock();
    let modules = modules.get_or_insert_with(HashMap::new);
    if let Some(m) = modules.get(prefix) {
        return Ok(m.clone());
    }
    let m = create_library_module(Library::system(prefix))?;
    modules.insert(prefix.to_string(), m.clone());
    Ok(m)
}

/// Modules kept alive by `ffi.ModuleGlobalsAdd`, by identity.
static KEPT: Mutex<Option<HashMap<usize, Module>>> = Mutex::new(None);

fn module_arg(sig: &Sig, args: &[AnyView<'_>], i: usize) -> Result<Module, Error> {
    Module::from_object(sig.object(args, i, ti::kTVMFFIModule)?)
}

fn str_arg(sig: &Sig, args: &[AnyView<'_>], i: usize) -> Result<String, Error> {
    match args[i].type_index() {
        ti::kTVMFFIStr | ti::kTVMFFISmallStr | ti::kTVMFFIRawStr => args[i].get::<String>(),
        _ => Err(sig.mismatch(args, i)),
    }
}

fn bool_arg(sig: &Sig, args: &[AnyView<'_>], i: usize) -> Result<bool, Error> {
    Ok(sig.int(args, i)? != 0)
}

/// A global with a typed signature (see [`Sig::into_global`]).
fn typed(sig: Sig, body: fn(&Sig, &[AnyView<'_>]) -> Result<Any, Error>) -> (&'static str, Result<Function, Error>) {
    sig.into_global(body)
}

const MODULE: &[&str] = &["ffi.Module"];
const MODULE_NAME_QUERY: &[&str] = &["ffi.Module", "str", "bool"];

/// The module globals, registered with the builtins.
pub(crate) fn builtins() -> Vec<(&'static str, Result<Function, Error>)> {
    if let Err(e) = super::object::register_reflection() {
        return vec![("ffi.ModuleLoadFromFile", Err(e))];
    }
    vec![
        typed(Sig { name: "ffi.ModuleLoadFromFile", params: &["str"], ret: "ffi.Module" }, |s, a| {
            Ok(load_from_file(&str_arg(s, a, 0)?)?.to_any())
        }),
        typed(Sig { name: "ffi.Module.load_from_file.so", params: &["str", "str"], ret: "ffi.Module" }, |s, a| {
            str_arg(s, a, 1)?;
            Ok(load_shared_library(&str_arg(s, a, 0)?, deep_bind_default())?.to_any())
        }),
        typed(
            Sig { name: "ffi.ModuleGetFunction", params: MODULE_NAME_QUERY, ret: "Optional<ffi.Function>" },
            |s, a| {
                let f = module_arg(s, a, 0)?.get_function(&str_arg(s, a, 1)?, bool_arg(s, a, 2)?)?;
                Ok(f.map_or_else(Any::none, |f| Any::from_object(f.into_object())))
            },
        ),
        typed(Sig { name: "ffi.ModuleGetFunctionDoc", params: MODULE_NAME_QUERY, ret: "Optional<str>" }, |s, a| {
            module_arg(s, a, 0)?.function_doc(&str_arg(s, a, 1)?, bool_arg(s, a, 2)?)
        }),
        typed(
            Sig { name: "ffi.ModuleGetFunctionMetadata", params: MODULE_NAME_QUERY, ret: "Optional<str>" },
            |s, a| module_arg(s, a, 0)?.function_metadata(&str_arg(s, a, 1)?, bool_arg(s, a, 2)?),
        ),
        typed(Sig { name: "ffi.ModuleImplementsFunction", params: MODULE_NAME_QUERY, ret: "bool" }, |s, a| {
            Ok(Any::from(module_arg(s, a, 0)?.implements_function(&str_arg(s, a, 1)?, bool_arg(s, a, 2)?)?))
        }),
        typed(Sig { name: "ffi.ModuleGetKind", params: MODULE, ret: "str" }, |s, a| {
            Any::string(&module_arg(s, a, 0)?.kind()?)
        }),
        typed(Sig { name: "ffi.ModuleGetPropertyMask", params: MODULE, ret: "int" }, |s, a| {
            Ok(Any::from(module_arg(s, a, 0)?.property_mask()?))
        }),
        typed(Sig { name: "ffi.ModuleGetWriteFormats", params: MODULE, ret: "Array<str>" }, |s, a| {
            module_arg(s, a, 0)?.write_formats()
        }),
        typed(Sig { name: "ffi.ModuleWriteToFile", params: &["ffi.Module", "str", "str"], ret: "void" }, |s, a| {
            module_arg(s, a, 0)?.write_to_file(&str_arg(s, a, 1)?, &str_arg(s, a, 2)?)?;
            Ok(Any::none())
        }),
        typed(Sig { name: "ffi.ModuleInspectSource", params: &["ffi.Module", "str"], ret: "str" }, |s, a| {
            module_arg(s, a, 0)?.inspect_source(&str_arg(s, a, 1)?)
        }),
        typed(Sig { name: "ffi.ModuleImportModule", params: &["ffi.Module", "ffi.Module"], ret: "void" }, |s, a| {
            module_arg(s, a, 0)?.import_module(&module_arg(s, a, 1)?)?;
            Ok(Any::none())
        }),
        typed(Sig { name: "ffi.ModuleClearImports", params: MODULE, ret: "void" }, |s, a| {
            module_arg(s, a, 0)?.clear_imports()?;
            Ok(Any::none())
        }),
        typed(Sig { name: "ffi.ModuleGlobalsAdd", params: MODULE, ret: "void" }, |s, a| {
            let m = module_arg(s, a, 0)?;
            KEPT.lock().get_or_insert_with(HashMap::new).insert(m.as_object().as_ptr() as usize, m);
            Ok(Any::none())
        }),
        typed(Sig { name: "ffi.ModuleGlobalsRemove", params: MODULE, ret: "void" }, |s, a| {
            let m = module_arg(s, a, 0)?;
            let removed = KEPT.lock().as_mut().and_then(|k| k.remove(&(m.as_object().as_ptr() as usize)));
            drop(removed); // released outside the lock
            Ok(Any::none())
        }),
        (
            // ffi.SystemLib(prefix="") is packed: extra arguments are ignored.
            "ffi.SystemLib",
            Function::from_closure(|args| {
                let prefix = match args.first() {
                    None => String::new(),
                    Some(v) => match v.type_index() {
                        ti::kTVMFFIStr | ti::kTVMFFISmallStr | ti::kTVMFFIRawStr => v.get::<String>()?,
                        _ => {
                            return Err(Error::type_error(format!(
                                "Cannot convert from type `{}` to `str`",
                                v.type_key()
                            )))
                        }
                    },
                };
                Ok(system_lib(&prefix)?.to_any())
            }),
        ),
    ]
}
