//! Enum singletons registered the way upstream's `refl::EnumDef` does it
//! from C++: the enum type's `ffi.EnumState` (made and registered as its
//! `__ffi_enum__` attribute on first use) gets each new singleton appended
//! to `entries` and filed under both canonical indices in `indexes`;
//! per-singleton attributes go into `attrs`. The state and its containers
//! are the core's objects, reached through the core's reflection and
//! container globals, so Python classes binding the same type key see
//! exactly these singletons.
//!
//! Reading the state back (lookups by index, a payload enum field's
//! conversion) is [`super::enum_state`]'s.

use super::enum_state::{container, dict_get, dict_set, global, registered_state, STATE_ATTR};
use super::instance::{instantiate, Layout};
use super::object_def::{register_attr, set_field};
use crate::core_api::api;
use crate::ffi::bytes::byte_array;
use crate::ffi::type_table::type_index_of;
use crate::ffi::{Any, AnyView, Error, Function, ObjectRef};

/// The state of enum type `index`, made and registered when it has none.
fn ensure_state(index: i32) -> Result<ObjectRef, Error> {
    if let Some(state) = registered_state(index)? {
        return Ok(state);
    }
    let state = state_constructor()?
        .call(&[])?
        .into_object()
        .ok_or_else(|| Error::runtime_error("ffi.EnumState() returned no object"))?;
    register_attr(index, STATE_ATTR, &Any::object(state.clone()))?;
    Ok(state)
}

/// `ffi.EnumState`'s reflected constructor.
fn state_constructor() -> Result<Function, Error> {
    let index = type_index_of("ffi.EnumState").ok_or_else(|| Error::runtime_error("the core has no ffi.EnumState"))?;
    let name = byte_array("__ffi_init__");
    // SAFETY: a valid name; the core returns NULL or a column it keeps.
    let column = unsafe { (api().TVMFFIGetTypeAttrColumn)(&name).as_ref() }
        .ok_or_else(|| Error::runtime_error("the core has no __ffi_init__ column"))?;
    let slot = index - column.begin_index;
    if slot < 0 || slot >= column.size {
        return Err(Error::runtime_error("ffi.EnumState has no __ffi_init__"));
    }
    // SAFETY: `slot` is inside the column.
    let value = unsafe { AnyView::from_raw(&*column.data.add(slot as usize)) };
    value.object().and_then(Function::from_object).ok_or_else(|| Error::runtime_error("ffi.EnumState has no __ffi_init__"))
}

/// Register a new singleton of the enum type `layout` describes, with
/// canonical indices `str_index` and `int_index` (by default its position
/// in registration order). A ValueError when either index is taken.
pub fn enum_def(layout: &Layout, str_index: &str, int_index: Option<i64>) -> Result<ObjectRef, Error> {
    let state = ensure_state(layout.type_index)?;
    let entries = container(&state, "entries")?;
    let indexes = container(&state, "indexes")?;
    let int_index = match int_index {
        Some(i) => i,
        None => global("ffi.ListSize")?.call(&[entries.clone()])?.view().int().unwrap_or(0),
    };
    let (int_key, str_key) = (Any::int(int_index), Any::string(str_index)?);
    if dict_get(&indexes, &int_key)?.is_some() || dict_get(&indexes, &str_key)?.is_some() {
        return Err(Error::value_error(format!("Duplicate enum index for type `{}`", layout.type_key)));
    }
    let instance = instantiate(layout)?;
    set_field(&instance, layout, "_int_index", int_key.clone())?;
    set_field(&instance, layout, "_str_index", str_key.clone())?;
    global("ffi.ListAppend")?.call(&[entries, Any::object(instance.clone())])?;
    dict_set(&indexes, int_key, Any::object(instance.clone()))?;
    dict_set(&indexes, str_key, Any::object(instance.clone()))?;
    Ok(instance)
}

/// Set the extensible attribute `name` of the singleton `instance` of enum
/// type `index` (`EnumDef::set_attr`).
pub fn set_enum_attr(index: i32, instance: &ObjectRef, name: &str, value: Any) -> Result<(), Error> {
    let attrs = container(&ensure_state(index)?, "attrs")?;
    let key = Any::string(name)?;
    let column = match dict_get(&attrs, &key)? {
        Some(column) => column,
        None => {
            let column = crate::ffi::containers::dict(&[])?;
            dict_set(&attrs, key, column.clone())?;
            column
        }
    };
    dict_set(&column, Any::object(instance.clone()), value)
}
