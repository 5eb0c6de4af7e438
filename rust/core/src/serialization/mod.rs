//! Text forms of FFI values, with TVM-FFI's formats: JSON ([`json`],
//! `ffi.json.Parse` / `ffi.json.Stringify`), JSON object graphs
//! ([`json_graph`], `ffi.ToJSONGraph` / `ffi.FromJSONGraph` and their string
//! forms), the printable form ([`repr`], `ffi.ReprPrint`), and deep copies
//! ([`deep_copy`], `ffi.DeepCopy`).

pub mod base64;
pub mod c_number_format;
pub mod deep_copy;
pub mod json;
pub mod json_graph;
pub mod repr;

use crate::values::any::Any;
use crate::values::error::Error;
use crate::values::function::arg;
use crate::values::function::Function;

/// A builtin global: its name and its function.
pub(crate) type Global = (&'static str, Result<Function, Error>);

pub(crate) fn register_globals() -> Vec<Global> {
    let mut out = vec![
        (
            "ffi.json.Parse",
            Function::from_closure(|args| {
                crate::values::function::expect_args(args, 1, "ffi.json.Parse")?;
                let text = args[0].str_bytes().ok_or_else(|| Error::type_error(format!("ffi.json.Parse expects str, got {}", args[0].type_key())))?;
                json::parse(text)
            }),
        ),
        (
            "ffi.json.Stringify",
            Function::from_closure(|args| {
                let indent: Option<i64> = if args.len() > 1 { arg(args, 1, "indent")? } else { None };
                json::stringify_to_any(&arg::<Any>(args, 0, "value")?, indent.unwrap_or(0).max(0) as usize)
            }),
        ),
        (
            "ffi.ReprPrint",
            Function::from_closure(|args| Any::string(&repr::repr_print(&arg::<Any>(args, 0, "value")?)?)),
        ),
        ("ffi.DeepCopy", Function::from_closure(|args| deep_copy::deep_copy(&arg::<Any>(args, 0, "value")?))),
    ];
    out.extend(json_graph::globals());
    out
}
