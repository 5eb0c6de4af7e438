//! The test object types, grouped as upstream's testing library declares
//! them: plain objects and inheritance ([`basic`]), comparison and hashing
//! hooks ([`compare`]), C++-class-style layouts and generated constructors
//! ([`cxx_class`]), enum fixtures ([`enums`]), every field and signature
//! type ([`schema`]) and structural-visit fixtures ([`visit`]).

pub mod basic;
pub mod compare;
pub mod cxx_class;
pub mod enums;
pub mod schema;
pub mod visit;

use crate::ffi::{Any, Error, ObjectRef};
use crate::reflect::instance::{instantiate, Layout};
use crate::reflect::set_field;

/// A new instance of `layout`'s type with `values` stored in the fields
/// named (values already converted by the constructor's signature).
pub fn construct(layout: &Layout, names: &[&str], values: Vec<Any>) -> Result<ObjectRef, Error> {
    let obj = instantiate(layout)?;
    for (name, v) in names.iter().zip(values) {
        set_field(&obj, layout, name, v)?;
    }
    Ok(obj)
}
