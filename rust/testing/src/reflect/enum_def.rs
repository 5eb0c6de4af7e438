//! Enum singletons registered the way upstream's `refl::EnumDef` does it
//! from C++: the enum type's `ffi.EnumState` (made and registered as its
//! `__ffi_enum__` attribute on first use) gets each new singleton appended
//! to `entries` and filed under both canonical indices in `indexes`;
//! per-singleton attributes go into `attrs`. The state and its containers
//! are the core's objects, reached through the core's reflection and
//! container globals, so Python classes binding the same type key see
//! exactly these singletons.
//!
//! Also here: the payload lookup a field of a payload enum type performs
//! (a raw int or string naming a registered singleton).

use std::ffi::c_void;

use tether_sys::abi::{type_index as ti, TVMFFIAny};

use super::instance::{instantiate, Layout};
use super::object_def::{register_attr, set_field};
use crate::core_api::api;
use crate::ffi::function::byte_array;
use crate::ffi::object::{bytes_to_string, is_instance, type_index_of, type_info, type_key};
use crate::ffi::{Any, AnyView, Error, Function, ObjectRef};

const STATE_ATTR: &str = "__ffi_enum__";

fn global(name: &str) -> Result<Function, Error> {
    Function::get_global_required(name)
}

/// Field `name` of `obj`, read with the getter the core registered for
/// the type `owner_key` (or one of its ancestors).
fn core_field(obj: &ObjectRef, owner_key: &str, name: &str) -> Result<Any, Error> {
    let owner = type_index_of(owner_key).ok_or_else(|| Error::runtime_error(format!("{owner_key} is not registered")))?;
    let info = type_info(owner).ok_or_else(|| Error::runtime_error(format!("{owner_key} has no type info")))?;
    let count = usize::try_from(info.num_fields).unwrap_or(0);
    for i in 0..count {
        // SAFETY: the core keeps `num_fields` records at `fields` for the process.
        let f = unsafe { &*info.fields.add(i) };
        if bytes_to_string(&f.name) != name {
            continue;
        }
        let getter = f.getter.ok_or_else(|| Error::runtime_error(format!("{owner_key}.{name} has no getter")))?;
        let mut out = TVMFFIAny::NONE;
        let addr = (obj.as_ptr() as *mut u8).wrapping_add(usize::try_from(f.offset).unwrap_or(0));
        // SAFETY: `obj` is an instance of `owner_key` (callers check), so
        // the field lies inside it; the getter writes an owned value.
        let rc = unsafe { getter(addr as *mut c_void, &mut out) };
        Error::check(rc)?;
        // SAFETY: the getter's result is owned by us now.
        return Ok(unsafe { Any::from_raw_owned(out) });
    }
    Err(Error::runtime_error(format!("{owner_key} has no field {name}")))
}

/// The state registered for enum type `index`, if any.
fn registered_state(index: i32) -> Result<Option<ObjectRef>, Error> {
    let name = byte_array(STATE_ATTR);
    // SAFETY: a valid name; the core returns NULL or a column it keeps.
    let Some(column) = (unsafe { (api().TVMFFIGetTypeAttrColumn)(&name).as_ref() }) else { return Ok(None) };
    let slot = index - column.begin_index;
    if slot < 0 || slot >= column.size || column.data.is_null() {
        return Ok(None);
    }
    // SAFETY: `slot` is inside the column's `size` values.
    let value = unsafe { AnyView::from_raw(&*column.data.add(slot as usize)) };
    if value.is_none() {
        return Ok(None);
    }
    match (value.object(), type_index_of("ffi.EnumState")) {
        (Some(state), Some(state_index)) if state.type_index() == state_index => Ok(Some(state)),
        _ => Err(Error::type_error(format!(
            "Expected `ffi.EnumState` in enum state column, but got `{}`",
            value.type_key()
        ))),
    }
}

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

fn container(state: &ObjectRef, name: &str) -> Result<Any, Error> {
    core_field(state, "ffi.EnumState", name)
}

fn dict_get(dict: &Any, key: &Any) -> Result<Option<Any>, Error> {
    let count = global("ffi.DictCount")?.call(&[dict.clone(), key.clone()])?;
    if count.view().int().unwrap_or(0) == 0 {
        return Ok(None);
    }
    global("ffi.DictGetItem")?.call(&[dict.clone(), key.clone()]).map(Some)
}

fn dict_set(dict: &Any, key: Any, value: Any) -> Result<(), Error> {
    global("ffi.DictSetItem")?.call(&[dict.clone(), key, value]).map(drop)
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

/// The singleton of enum type `index` at canonical index `key`; upstream's
/// ValueError when there is none.
pub fn get_by_index(index: i32, key: &Any) -> Result<ObjectRef, Error> {
    if let Some(state) = registered_state(index)? {
        if let Some(found) = dict_get(&container(&state, "indexes")?, key)? {
            if let Some(obj) = found.into_object() {
                return Ok(obj);
            }
        }
    }
    let shown = key.view().int().map(|i| i.to_string()).or_else(|| key.view().str()).unwrap_or_default();
    Err(Error::value_error(format!("Enum `{}` has no instance with index {shown}", type_key(index))))
}

/// For a field of object type `target`: the registered singleton a raw
/// payload names — an int for an `ffi.IntEnum` type, a string for an
/// `ffi.StrEnum` type. `Ok(None)` when `target` is no payload enum or
/// the value is no payload of its kind; a TypeError in upstream's words
/// when it is one but names no singleton.
pub fn normalize_payload(target: i32, value: &AnyView<'_>) -> Result<Option<Any>, Error> {
    let is_payload_of = |base: &str| type_index_of(base).is_some_and(|b| is_instance(target, b));
    let index = value.type_index();
    let payload = if is_payload_of("ffi.IntEnum") && matches!(index, ti::kTVMFFIInt | ti::kTVMFFIBool) {
        Any::int(value.int().unwrap_or(0))
    } else if is_payload_of("ffi.StrEnum") && matches!(index, ti::kTVMFFIStr | ti::kTVMFFISmallStr | ti::kTVMFFIRawStr) {
        Any::string(&value.str().unwrap_or_default())?
    } else {
        return Ok(None);
    };
    if let Some(state) = registered_state(target)? {
        if let Some(found) = dict_get(&container(&state, "indexes")?, &payload)? {
            return Ok(Some(found));
        }
    }
    let key = type_key(target);
    let got = if index == ti::kTVMFFIInt || index == ti::kTVMFFIBool { "int" } else { "str" };
    Err(Error::type_error(format!(
        "type conversion failed for {key}: expected {key}, got {got}\n  __ffi_convert__ failed:\n    Cannot cast from `{}` to `{key}`",
        value.type_key()
    )))
}
