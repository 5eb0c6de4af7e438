//! The JSON values a graph is written as, built from FFI values: a Map
//! with string keys, an Array, an object as an Any.

use crate::containers::{Array, Map};
use crate::object::ObjectRef;
use crate::values::any::Any;
use crate::values::error::Error;

pub(super) fn obj_any(o: ObjectRef) -> Any {
    Any::from_object(o)
}
pub(super) fn map_of(pairs: Vec<(&str, Any)>) -> Result<Any, Error> {
    let pairs = pairs.into_iter().map(|(k, v)| Ok((Any::string(k)?, v))).collect::<Result<Vec<_>, Error>>()?;
    Ok(obj_any(Map::new(pairs)?.into_object()))
}
pub(super) fn array_of(items: Vec<Any>) -> Result<Any, Error> {
    Ok(obj_any(Array::new(items)?.into_object()))
}
