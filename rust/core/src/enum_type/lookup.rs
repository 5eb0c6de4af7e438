//! Reading enum singletons and their registry: the canonical indices of a
//! singleton, and the singleton of an enum type at a canonical index
//! (upstream's `EnumObj::_GetByIntIndex` / `_GetByStrIndex`, through the
//! type's `__ffi_enum__` state, with the same `ValueError`).
//!
//! Singletons may come from any allocator (C++ `make_object`, Python
//! classes, this core), so their fields are read through the reflected
//! field records, which every such layout shares.

use crate::abi::type_index as ti;
use crate::values::any::Any;
use crate::containers::Dict;
use crate::dataclass;
use crate::values::error::Error;
use crate::object::{ObjectRef, ObjectType};
use crate::types::type_registry;

use super::objects::{EnumObj, EnumStateObj, IntEnumObj};
use super::objects::ENUM_STATE_ATTR;

/// Whether objects of type `index` are enum singletons (`ffi.Enum` or a
/// subtype).
pub fn is_enum_type(index: i32) -> bool {
    index >= ti::kTVMFFIStaticObjectEnd && type_registry::is_instance(index, EnumObj::type_index())
}

/// Whether type `index` is `ffi.IntEnum` or a subtype (its canonical
/// index is the integer one).
pub fn is_int_enum_type(index: i32) -> bool {
    index >= ti::kTVMFFIStaticObjectEnd && type_registry::is_instance(index, IntEnumObj::type_index())
}

fn read_field(obj: &ObjectRef, owner: i32, name: &str) -> Result<Any, Error> {
    let f = type_registry::find_field(owner, name)
        .ok_or_else(|| Error::runtime_error(format!("`{}` has no field `{name}`", type_registry::type_key_of(owner))))?;
    dataclass::get_field(obj, f)
}

/// The canonical integer index of an enum singleton.
pub fn int_index(obj: &ObjectRef) -> Result<i64, Error> {
    read_field(obj, EnumObj::type_index(), "_int_index")?.get::<i64>()
}

/// The canonical string index of an enum singleton.
pub fn str_index(obj: &ObjectRef) -> Result<String, Error> {
    read_field(obj, EnumObj::type_index(), "_str_index")?.get::<String>()
}

/// The index a singleton is serialized by: the integer one for an
/// `ffi.IntEnum`, the string one for every other enum.
pub fn canonical_index(obj: &ObjectRef) -> Result<Any, Error> {
    if is_int_enum_type(obj.type_index()) {
        Ok(Any::from(int_index(obj)?))
    } else {
        Any::string(&str_index(obj)?)
    }
}

/// The `ffi.EnumState` registered for enum type `index`, if any; a
/// TypeError when the column holds something else.
pub fn state_of(index: i32) -> Result<Option<ObjectRef>, Error> {
    let Some(value) = crate::reflection::attr_columns::attr_value(index, ENUM_STATE_ATTR.as_bytes()) else { return Ok(None) };
    match value.as_object() {
        Some(state) if state.type_index() == EnumStateObj::type_index() => Ok(Some(state)),
        _ => Err(Error::type_error(format!(
            "Expected `{}` in enum state column, but got `{}`",
            EnumStateObj::TYPE_KEY,
            value.type_key()
        ))),
    }
}

/// The `indexes` Dict of a state (canonical index -> singleton).
pub fn state_indexes(state: &ObjectRef) -> Result<Dict, Error> {
    let indexes = read_field(state, EnumStateObj::type_index(), "indexes")?;
    let obj = indexes.as_object().ok_or_else(|| Error::type_error("an enum state without an `indexes` Dict"))?;
    Dict::from_object(obj)
}

/// The singleton of enum type `index` at canonical index `key` (an int or
/// a string); upstream's ValueError when there is none.
pub fn get_by_index(index: i32, key: &Any) -> Result<ObjectRef, Error> {
    if let Some(state) = state_of(index)? {
        if let Some(found) = state_indexes(&state)?.get(key) {
            if let Some(obj) = found.as_object() {
                if type_registry::is_instance(obj.type_index(), EnumObj::type_index()) {
                    return Ok(obj);
                }
            }
            return Err(Error::type_error(format!("Cannot cast from `{}` to `{}`", found.type_key(), EnumObj::TYPE_KEY)));
        }
    }
    let shown = match key.get::<i64>() {
        Ok(i) if key.type_index() == ti::kTVMFFIInt => i.to_string(),
        _ => key.get::<String>().unwrap_or_else(|_| key.type_key()),
    };
    Err(Error::value_error(format!(
        "Enum `{}` has no instance with index {shown}",
        type_registry::type_key_of(index)
    )))
}
