//! Metadata of global functions (`ffi.GetGlobalFuncMetadata`).
//!
//! Functions registered through `TVMFFIFunctionSetGlobalFromMethodInfo`
//! carry a metadata JSON string (TVM-FFI's reflection writes
//! `{"type_schema": ...}` there). The function registry itself stores only
//! the function objects, so the metadata lives in this side table together
//! with the function it was recorded for: a later plain registration,
//! override or removal of the name replaces the function, and the stale
//! entry is then ignored (and dropped on the next recording), so the
//! metadata answered is always that of the function currently registered.

use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

use crate::values::any::Any;
use crate::values::error::Error;
use crate::values::function::{arg, Function};
use crate::object::ObjectRef;

/// name -> (the function the metadata was recorded with, metadata JSON).
fn table() -> &'static RwLock<HashMap<String, (ObjectRef, String)>> {
    static TABLE: OnceLock<RwLock<HashMap<String, (ObjectRef, String)>>> = OnceLock::new();
    TABLE.get_or_init(|| RwLock::new(HashMap::new()))
}

/// Record `metadata` for global `name`, registered as `f`.
pub fn record(name: &str, f: &Function, metadata: &str) {
    let mut t = table().write().unwrap_or_else(|e| e.into_inner());
    if metadata.is_empty() {
        t.remove(name);
    } else {
        t.insert(name.to_string(), (f.as_object().clone(), metadata.to_string()));
    }
}

/// The metadata JSON of the global function `name` ("" when it was
/// registered without any); an error when no such global exists, with
/// TVM-FFI's message.
pub fn lookup(name: &str) -> Result<String, Error> {
    let current = Function::get_global(name)
        .ok_or_else(|| Error::runtime_error(format!("Global Function is not found: {name}")))?;
    let t = table().read().unwrap_or_else(|e| e.into_inner());
    Ok(match t.get(name) {
        Some((f, md)) if f.as_ptr() == current.as_object().as_ptr() => md.clone(),
        _ => String::new(),
    })
}

/// `ffi.GetGlobalFuncMetadata(name) -> str`.
pub(crate) fn builtins() -> Vec<(&'static str, Result<Function, Error>)> {
    vec![(
        "ffi.GetGlobalFuncMetadata",
        Function::from_closure(|args| Any::string(&lookup(&arg::<String>(args, 0, "name")?)?)),
    )]
}
