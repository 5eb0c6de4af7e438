//! The default a reflected field declares (`kHasDefault`), for frontends
//! that show it (upstream's Python `TypeField.c_default` /
//! `c_default_factory`, read from `TVMFFIFieldInfo::default_value_or_factory`):
//!
//! `tether.reflection.FieldDefault(type_index, field_name) -> Array` gives
//! `[]` for a field without a default, `[value]` for a default value and
//! `[factory, true]` for a default factory (`kDefaultFromFactory`).

use crate::abi::field_flag;
use crate::values::any::{Any, AnyView};
use crate::containers::Array;
use crate::values::error::Error;
use crate::values::function::{arg, Function};
use crate::types::type_registry::{self, type_key_of};

/// The default record of field `name` of `type_index` (ancestors' fields
/// included); an error for an unknown type or field.
pub fn field_default(type_index: i32, name: &str) -> Result<Array, Error> {
    if type_registry::type_info(type_index).is_none() {
        return Err(Error::value_error(format!("unknown type index {type_index}")));
    }
    let field = type_registry::find_field(type_index, name)
        .ok_or_else(|| Error::attribute_error(format!("type `{}` has no field `{name}`", type_key_of(type_index))))?;
    if field.flags & field_flag::kHasDefault == 0 {
        return Array::new(Vec::new());
    }
    // The registry owns the default (it retained it at registration).
    let value = Any::from_view(&field.default_value_or_factory)?;
    if field.flags & field_flag::kDefaultFromFactory != 0 {
        return Array::new(vec![value, Any::from(true)]);
    }
    Array::new(vec![value])
}

/// The global, for the registry to install at start-up.
pub(crate) fn globals() -> Vec<(&'static str, Result<Function, Error>)> {
    vec![(
        "tether.reflection.FieldDefault",
        Function::from_closure(|args: &[AnyView<'_>]| {
            if args.len() != 2 {
                return Err(Error::type_error(format!(
                    "tether.reflection.FieldDefault expects 2 arguments (type_index, field_name), got {}",
                    args.len()
                )));
            }
            let index: i32 = arg(args, 0, "type_index")?;
            let name: String = arg(args, 1, "field_name")?;
            Ok(Any::from_object(field_default(index, &name)?.into_object()))
        }),
    )]
}
