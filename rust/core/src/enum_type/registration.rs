//! What the core registers for its enum types when it loads, as upstream's
//! runtime does in `object.cc`: the reflected fields (`_int_index`, ignored
//! by structural comparison, and `_str_index` on `ffi.Enum`; the read-only
//! `value` alias on `ffi.IntEnum`/`ffi.StrEnum`; the three containers of
//! `ffi.EnumState`), metadata with a creator (so `__ffi_new__` exists),
//! `__ffi_shallow_copy__`, finality, `__ffi_convert__` for the payload
//! enums, `ffi.EnumState`'s no-argument `__ffi_init__`, and the
//! `__ffi_enum__` column.
//!
//! Enum singletons print as `<type key>.<string index>`: upstream's
//! printer special-cases enums; here each enum type gets that printer as
//! its `__ffi_repr__` hook when its state is registered, as a default that
//! a repr registered for the type later replaces (the base types keep no
//! hook, as upstream's have none).

use std::mem::offset_of;
use std::sync::OnceLock;

use crate::abi::{field_flag, type_index as ti};
use crate::values::any::Any;
use crate::values::error::Error;
use crate::values::function::{arg, Function};
use crate::object::{ObjectPtr, ObjectRef, ObjectType};
use crate::reflection::TypeBuilder;
use crate::reflection::structural_kind as kind;
use crate::types::type_registry;

use super::lookup::{is_enum_type, str_index};
use super::objects::{EnumObj, EnumStateObj, IntEnumObj, StrEnumObj};
use super::objects::ENUM_STATE_ATTR;

const INT_INDEX_OFFSET: usize = offset_of!(EnumObj, int_index);
const STR_INDEX_OFFSET: usize = offset_of!(EnumObj, str_index);

/// Register the enum types (called once, from the start-up registration).
pub(crate) fn register() -> Result<(), Error> {
    let containers = field_flag::kInitOff;
    TypeBuilder::<EnumStateObj>::new()
        .field_full::<Option<ObjectRef>>("entries", offset_of!(EnumStateObj, entries), containers, ti::kTVMFFIList)?
        // Upstream's Dict reference declares the generic object index.
        .field_full::<Option<ObjectRef>>("indexes", offset_of!(EnumStateObj, indexes), containers, ti::kTVMFFIObject)?
        .field_full::<Option<ObjectRef>>("attrs", offset_of!(EnumStateObj, attrs), containers, ti::kTVMFFIObject)?
        .metadata_with_creator(0)?
        .shallow_copy()?
        // `refl::init<>()`: the constructor is a static method and the
        // `__ffi_init__` attribute.
        .static_method("__ffi_init__", new_state()?)?
        .init(new_state()?)?
        .type_final(true)?;

    TypeBuilder::<EnumObj>::new()
        .field_full::<i64>("_int_index", INT_INDEX_OFFSET, field_flag::kSEqHashIgnore, ti::kTVMFFIInt)?
        .field_full::<Any>("_str_index", STR_INDEX_OFFSET, 0, ti::kTVMFFIAny)?
        .metadata_with_creator(kind::UNIQUE_INSTANCE)?
        .shallow_copy()?
        .type_final(false)?;

    let alias = field_flag::kInitOff | field_flag::kSEqHashIgnore;
    TypeBuilder::<IntEnumObj>::new()
        .field_full::<i64>("value", INT_INDEX_OFFSET, alias, ti::kTVMFFIInt)?
        .metadata_with_creator(kind::UNIQUE_INSTANCE)?
        .shallow_copy()?
        .type_final(false)?
        .fn_attr("__ffi_convert__", convert_to(IntEnumObj::type_index())?)?;
    TypeBuilder::<StrEnumObj>::new()
        .field_full::<Any>("value", STR_INDEX_OFFSET, alias, ti::kTVMFFIAny)?
        .metadata_with_creator(kind::UNIQUE_INSTANCE)?
        .shallow_copy()?
        .type_final(false)?
        .fn_attr("__ffi_convert__", convert_to(StrEnumObj::type_index())?)?;

    // Like upstream's `EnsureTypeAttrColumn`: the column exists before any
    // enum registers its state.
    crate::reflection::attr_columns::register_attr(ti::kTVMFFINone, ENUM_STATE_ATTR.as_bytes(), Any::none().as_raw())
}

/// `ffi.EnumState()`: a state with no variants.
fn new_state() -> Result<Function, Error> {
    Function::from_closure(|args| {
        if !args.is_empty() {
            return Err(Error::type_error(format!("ffi.EnumState() takes no arguments ({} given)", args.len())));
        }
        Ok(Any::from_object(ObjectPtr::new(EnumStateObj::empty()?)?.into_object_ref()))
    })
}

/// `__ffi_convert__` of a payload enum (upstream's `def_convert`): an
/// instance of the type passes; anything else, payloads included, is a
/// TypeError — payloads become singletons in the frontends' converters.
fn convert_to(target: i32) -> Result<Function, Error> {
    Function::from_closure(move |args| {
        let value = args.first().ok_or_else(|| Error::type_error("__ffi_convert__ takes one value"))?.to_owned()?;
        match value.as_object() {
            Some(obj) if type_registry::is_instance(obj.type_index(), target) => Ok(value),
            _ => Err(Error::type_error(format!(
                "Cannot cast from `{}` to `{}`",
                value.type_key(),
                type_registry::type_key_of(target)
            ))),
        }
    })
}

/// The enum printer `(obj, fn_repr) -> "<type key>.<string index>"`, one
/// Function shared by every enum type.
fn repr_hook() -> Result<Any, Error> {
    static HOOK: OnceLock<Any> = OnceLock::new();
    if let Some(hook) = HOOK.get() {
        return Ok(hook.clone());
    }
    let f = Function::from_closure(|args| {
        let obj: ObjectRef = arg(args, 0, "self")?;
        Any::string(&format!("{}.{}", type_registry::type_key_of(obj.type_index()), str_index(&obj)?))
    })?;
    Ok(HOOK.get_or_init(|| Any::from_object(f.into_object())).clone())
}

/// An enum type registered its state: it prints as an enum unless it has
/// (or later gets) a repr of its own.
pub(crate) fn on_attr_installed(index: i32, attr_name: &[u8]) -> Result<(), Error> {
    if attr_name == ENUM_STATE_ATTR.as_bytes() {
        on_state_registered(index)?;
    }
    Ok(())
}

fn on_state_registered(index: i32) -> Result<(), Error> {
    if !is_enum_type(index) {
        return Ok(());
    }
    crate::reflection::attr_columns::register_default_attr(index, b"__ffi_repr__", repr_hook()?.as_raw())
}
