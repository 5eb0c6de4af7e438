//! Container and value objects: Array, List, Map, Shape, and opaque objects.

pub mod array;
pub mod list;
pub mod map;
pub mod opaque;
pub mod shape;

pub use array::{Array, ArrayObj};
pub use list::{List, ListObj};
pub use map::{Map, MapObj};
pub use opaque::OpaqueObj;
pub use shape::{Shape, ShapeObj};

use crate::error::Error;

/// Resolve a Python-style index (negative counts from the end).
pub(crate) fn resolve_index(i: i64, len: usize, what: &str) -> Result<usize, Error> {
    let len_i = len as i64;
    let j = if i < 0 { i + len_i } else { i };
    if j < 0 || j >= len_i {
        return Err(Error::index_error(format!("{what} index {i} out of range for length {len}")));
    }
    Ok(j as usize)
}
