//! Text forms of FFI values, with TVM-FFI's formats: JSON ([`json`],
//! `ffi.json.Parse` / `ffi.json.Stringify`), JSON object graphs
//! ([`json_graph`], `ffi.ToJSONGraph` / `ffi.FromJSONGraph` and their string
//! forms), the printable form ([`repr`], `ffi.ReprPrint`), and deep copies
//! ([`deep_copy`], `ffi.DeepCopy`).

use crate::error::Error;
use crate::function::Function;

/// A builtin global: its name and its function.
pub(crate) type Global = (&'static str, Result<Function, Error>);

pub(crate) fn register_globals() -> Vec<Global> {
    Vec::new()
}
