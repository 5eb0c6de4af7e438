//! Container and value objects: Array, List, Map, Dict, Shape, and opaque
//! objects, all in TVM-FFI's layouts, and the `ffi.*` container globals.

pub mod any_hash;
pub mod array;
pub mod container_lock;
pub(crate) mod conversions;
pub(crate) mod globals;
pub mod list;
pub mod map;
pub mod map_cell;
pub mod opaque;
pub mod shape;
pub mod typed_args;

pub use array::{Array, ArrayObj};
pub use globals::missing_object;
pub use list::{List, ListObj};
pub use map::{Dict, DictObj, Map, MapCursor, MapObj};
pub use opaque::OpaqueObj;
pub use shape::{Shape, ShapeObj};

use crate::values::error::Error;

/// Resolve a Python-style index (negative counts from the end).
pub(crate) fn resolve_index(i: i64, len: usize, what: &str) -> Result<usize, Error> {
    let len_i = len as i64;
    let j = if i < 0 { i + len_i } else { i };
    if j < 0 || j >= len_i {
        return Err(Error::index_error(format!("{what} index {i} out of range for length {len}")));
    }
    Ok(j as usize)
}
