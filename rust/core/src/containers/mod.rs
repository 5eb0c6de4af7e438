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
mod python_index;

pub use array::{Array, ArrayObj};
pub use globals::missing_object;
pub use list::{List, ListObj};
pub use map::{Dict, DictObj, Map, MapCursor, MapObj};
pub use opaque::OpaqueObj;
pub use shape::{Shape, ShapeObj};
pub(crate) use python_index::resolve_index;
