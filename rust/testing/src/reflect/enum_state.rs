//! An enum type's `ffi.EnumState` as the core keeps it (its `__ffi_enum__`
//! attribute), read back: the state registered for a type, its `entries`,
//! `indexes` and `attrs` containers, the singleton at a canonical index,
//! and the payload lookup a field of a payload enum type performs (a raw
//! int or string naming a registered singleton). Making the state and
//! adding singletons is [`super::enum_def`]'s.

use std::ffi::c_void;

use tether_sys::abi::{type_index as ti, TVMFFIAny};

use crate::core_api::api;
use crate::ffi::bytes::{byte_array, bytes_to_string};
use crate::ffi::type_table::{is_instance, type_index_of, type_info, type_key};
use crate::ffi::{Any, AnyView, Error, Function, ObjectRef};

/// The type attribute holding an enum type's state.
pub(super) const STATE_ATTR: &str = "__ffi_enum__";

pub(super) fn global(name: &str) -> Result<Function, Error> {
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
pub(super) fn registered_state(index: i32) -> Result<Option<ObjectRef>, Error> {
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

pub(super) fn container(state: &ObjectRef, name: &str) -> Result<Any, Error> {
    core_field(state, "ffi.EnumState", name)
}

pub(super) fn dict_get(dict: &Any, key: &Any) -> Result<Option<Any>, Error> {
    let count = global("ffi.DictCount")?.call(&[dict.clone(), key.clone()])?;
    if count.view().int().unwrap_or(0) == 0 {
        return Ok(None);
    }
    global("ffi.DictGetItem")?.call(&[dict.clone(), key.clone()]).map(Some)
}

pub(super) fn dict_set(dict: &Any, key: Any, value: Any) -> Result<(), Error> {
    global("ffi.DictSetItem")?.call(&[dict.clone(), key, value]).map(drop)
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
