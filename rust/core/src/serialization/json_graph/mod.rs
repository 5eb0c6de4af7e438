//! JSON object graphs (`ffi.ToJSONGraph`, `ffi.FromJSONGraph`,
//! `ffi.ToJSONGraphString`, `ffi.FromJSONGraphString`) in TVM-FFI's format,
//! so graphs written by either runtime load in the other:
//!
//! `{"root_index": i, "nodes": [...], "metadata": ...}` where each node is
//! `{"type": <type key>, "data": ...}`, children come before their parents,
//! and equal values (PODs and strings by value, objects by identity) share
//! one node. Data by type: `int`/`bool`/`float` the value, `ffi.String` the
//! text, `ffi.Bytes` base64, `ffi.Array`/`ffi.List` node indices,
//! `ffi.Map`/`ffi.Dict` alternating key/value indices, `ffi.Shape` the dims, `Device`
//! `[type, id]`, `DataType` its text, `None` nothing; reflected objects an
//! object of fields (int/bool/float/None-typed fields inline, others as node
//! indices), or whatever the type's `__data_to_json__` hook returns (read
//! back with `__data_from_json__`). A cycle (which the format cannot
//! express) is an error.


mod graph_node;
mod load;
mod graph_values;
mod save;

use crate::values::any::Any;
use crate::values::function::{arg, Function};
use crate::values::global_table::Builtin;

pub use super::base64::{base64_decode, base64_encode};
pub use load::{from_json_graph, from_json_graph_text};
pub use save::to_json_graph;

pub(crate) fn globals() -> Vec<Builtin> {
    let metadata = |args: &[crate::values::any::AnyView<'_>]| args.get(1).map_or(Ok(Any::none()), |a| a.to_owned());
    vec![
        (
            "ffi.ToJSONGraph",
            Function::from_closure(move |args| to_json_graph(&arg::<Any>(args, 0, "value")?, &metadata(args)?)),
        ),
        (
            "ffi.ToJSONGraphString",
            Function::from_closure(move |args| {
                crate::serialization::json::stringify_to_any(&to_json_graph(&arg::<Any>(args, 0, "value")?, &metadata(args)?)?, 0)
            }),
        ),
        ("ffi.FromJSONGraph", Function::from_closure(|args| from_json_graph(&arg::<Any>(args, 0, "graph")?))),
        (
            "ffi.FromJSONGraphString",
            Function::from_closure(|args| {
                from_json_graph_text(arg::<String>(args, 0, "text")?.as_bytes())
            }),
        ),
    ]
}
