//! The enum fixtures of upstream's testing library:
//! `testing.TestEnumVariant` (a plain enum declared natively, with the
//! variants `Alpha` and `Beta` and their `code` attribute, looked up by
//! `testing.enum_variant_get`), and the payload enums
//! `testing.TestCxxIntEnum` / `testing.TestCxxStrEnum`, declared natively
//! without variants (the Python side binds them and adds `low`/`high`,
//! `add`/`mul`). Each converts only its own instances (`__ffi_convert__`).

use crate::ffi::{Any, Error, Function};
use crate::registration::def;
use crate::reflect::enum_def::{enum_def, set_enum_attr};
use crate::reflect::enum_state::get_by_index;
use crate::reflect::{register_attr, TypeDef};
use crate::sig::{obj, Ty};

/// `_type_s_eq_hash_kind` of `EnumObj`, which its subclasses inherit.
const UNIQUE_INSTANCE: i32 = 5;

/// `__ffi_convert__` passing instances of the type `index` (subtypes
/// included) and refusing everything else, as `def_convert` does.
fn convert_attr(index: i32, key: &'static str) -> Result<Any, Error> {
    let f = Function::from_closure(move |args| {
        let v = args.first().ok_or_else(|| Error::type_error("__ffi_convert__ takes one value"))?;
        match v.object() {
            Some(o) if crate::ffi::type_table::is_instance(o.type_index(), index) => Ok(Any::object(o)),
            _ => Err(Error::type_error(format!("Cannot cast from `{}` to `{key}`", v.type_key()))),
        }
    })?;
    Ok(f.into_any())
}

fn enum_type(key: &'static str, parent: &'static str) -> Result<crate::reflect::Registered, Error> {
    let registered = TypeDef::new(key).parent(parent).final_type().init_off().structural_kind(UNIQUE_INSTANCE).register()?;
    register_attr(registered.type_index, "__ffi_convert__", &convert_attr(registered.type_index, key)?)?;
    Ok(registered)
}

pub fn register() -> Result<(), Error> {
    let variant = enum_type("testing.TestEnumVariant", "ffi.Enum")?;
    for (name, code) in [("Alpha", 10), ("Beta", 20)] {
        let instance = enum_def(&variant.layout, name, None)?;
        set_enum_attr(variant.type_index, &instance, "code", Any::int(code))?;
    }
    enum_type("testing.TestCxxIntEnum", "ffi.IntEnum")?;
    enum_type("testing.TestCxxStrEnum", "ffi.StrEnum")?;

    let variant_index = variant.type_index;
    def("testing.enum_variant_get", vec![Ty::Str], obj("ffi.Enum"), move |a| {
        Ok(Any::object(get_by_index(variant_index, &a[0])?))
    })
}
