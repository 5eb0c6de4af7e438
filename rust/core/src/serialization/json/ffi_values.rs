//! The parser's builder for FFI values (`ffi.json.Parse`): objects become
//! Maps with string keys, arrays Arrays, integers beyond 64 bits BigInts.

use std::borrow::Cow;

use crate::containers::{Array, Map};
use crate::values::any::{make_str_or_bytes, Any};

use super::parser::Build;

pub(super) struct FfiValues;

impl<'t> Build<'t> for FfiValues {
    type Value = Any;
    fn null(&mut self) -> Any {
        Any::none()
    }
    fn bool(&mut self, v: bool) -> Any {
        Any::from(v)
    }
    fn int(&mut self, v: i64) -> Any {
        Any::from(v)
    }
    fn big_int(&mut self, text: &str) -> Result<Any, ()> {
        crate::values::big_int::decimal::parse_decimal(text).map_err(|_| ())
    }
    fn float(&mut self, v: f64) -> Any {
        Any::from(v)
    }
    fn string(&mut self, bytes: Cow<'t, [u8]>) -> Result<Any, ()> {
        make_str_or_bytes(&bytes, false).map_err(|_| ())
    }
    fn array(&mut self, items: std::vec::Drain<'_, Any>) -> Result<Any, ()> {
        Array::new(items.collect()).map(|a| Any::from_object(a.into_object())).map_err(|_| ())
    }
    fn object(&mut self, mut members: std::vec::Drain<'_, Any>) -> Result<Any, ()> {
        let mut pairs = Vec::with_capacity(members.len() / 2);
        while let (Some(k), Some(v)) = (members.next(), members.next()) {
            pairs.push((k, v));
        }
        Map::new(pairs).map(|m| Any::from_object(m.into_object())).map_err(|_| ())
    }
}
