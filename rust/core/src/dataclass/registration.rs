//! Registering run-time dataclass types: their fields with the type
//! registry (getter, checking setter), `__ffi_new__`, `__ffi_init__`,
//! `__ffi_shallow_copy__` and metadata, and the builtin global
//! `tether.dataclass.RegisterType` that offers this to frontends.

use std::ffi::c_void;
use std::sync::Arc;


use crate::abi::{
    field_flag, type_index as ti,
    TVMFFIAny, TVMFFIByteArray, TVMFFIFieldInfo, TVMFFIObject, TVMFFITypeMetadata,
};
use crate::values::any::{Any, AnyView};
use crate::containers::Array;
use crate::values::error::Error;
use crate::values::function::{arg, Function};
use crate::object::ObjectRef;
use crate::types::type_registry::{self, type_key_of};

use super::auto_init;
use super::field_access::{get_field, getter_for, make_setter, set_field};
use super::layout::{layout_of, layouts, new_instance, FieldKind, FieldSpec, Layout, Slot};

/// Register a run-time type. Returns its type index.
pub fn register_type(type_key: &str, parent: i32, fields: Vec<FieldSpec>) -> Result<i32, Error> {
    let defaults = vec![None; fields.len()];
    register_type_with_defaults(type_key, parent, fields, defaults)
}

/// A field's default: a value, or (`from_factory`) a Function called with
/// no arguments each time a constructor needs the default.
#[derive(Clone, Debug)]
pub struct FieldDefault {
    pub value: Any,
    pub from_factory: bool,
}

/// Register a run-time type whose fields may have defaults (one entry per
/// field, `None` for none); the generated `__ffi_init__` uses them.
pub fn register_type_with_defaults(
    type_key: &str,
    parent: i32,
    fields: Vec<FieldSpec>,
    defaults: Vec<Option<FieldDefault>>,
) -> Result<i32, Error> {
    register_type_full(type_key, parent, fields, defaults, 1)
}

/// As `register_type_with_defaults`, with the type's structural
/// equality kind (`TVMFFISEqHashKind`: 0 unsupported, 1 tree node, 2 free
/// variable, 3 DAG node, 4 constant tree node, 5 unique instance).
pub fn register_type_full(
    type_key: &str,
    parent: i32,
    fields: Vec<FieldSpec>,
    defaults: Vec<Option<FieldDefault>>,
    structural_kind: i32,
) -> Result<i32, Error> {
    if defaults.len() != fields.len() {
        return Err(Error::value_error(format!(
            "{type_key}: {} defaults given for {} fields",
            defaults.len(),
            fields.len()
        )));
    }
    for (f, d) in fields.iter().zip(&defaults) {
        if let Some(d) = d {
            if d.from_factory && d.value.type_index() != ti::kTVMFFIFunction {
                return Err(Error::type_error(format!(
                    "default factory of field {:?} of {type_key} must be a Function, got {}",
                    f.name,
                    d.value.type_key()
                )));
            }
        }
    }
    if type_registry::key_to_index(type_key.as_bytes()).is_some() {
        return Err(Error::value_error(format!("type {type_key} is already registered")));
    }
    let parent_slots = if parent == ti::kTVMFFIObject {
        Layout { total_size: std::mem::size_of::<TVMFFIObject>(), slots: Vec::new() }
    } else {
        let p = layout_of(parent).ok_or_else(|| {
            Error::type_error(format!(
                "parent {} of {type_key} is not a run-time dataclass type (or ffi.Object)",
                type_key_of(parent)
            ))
        })?;
        Layout { total_size: p.total_size, slots: p.slots.clone() }
    };
    let mut seen = std::collections::HashSet::new();
    for f in &fields {
        if f.name.is_empty() || !seen.insert(f.name.clone()) {
            return Err(Error::value_error(format!("field name {:?} of {type_key} is empty or repeated", f.name)));
        }
    }
    let index = type_registry::get_or_alloc_index(type_key, -1, parent)?;
    let mut layout = parent_slots;
    for (f, default) in fields.iter().zip(&defaults) {
        let offset = layout.total_size; // every slot is 8-aligned, sizes are 8 or 16
        layout.slots.push(Slot { kind: f.kind, offset });
        layout.total_size += f.kind.size();
        let setter = make_setter(type_key, f)?;
        let info = TVMFFIFieldInfo {
            name: TVMFFIByteArray::from_slice(f.name.as_bytes()),
            doc: TVMFFIByteArray::EMPTY,
            metadata: TVMFFIByteArray::EMPTY,
            flags: (f.flags & !(field_flag::kHasDefault | field_flag::kDefaultFromFactory))
                | field_flag::kSetterIsFunctionObj
                | if f.frozen { 0 } else { field_flag::kWritable }
                | match default {
                    Some(d) if d.from_factory => field_flag::kHasDefault | field_flag::kDefaultFromFactory,
                    Some(_) => field_flag::kHasDefault,
                    None => 0,
                },
            size: f.kind.size() as i64,
            alignment: 8,
            offset: offset as i64,
            getter: Some(getter_for(f.kind)),
            setter: setter.as_object().as_ptr() as *mut c_void,
            // The registry keeps its own reference (kHasDefault only).
            default_value_or_factory: default.as_ref().map_or(TVMFFIAny::NONE, |d| *d.value.as_raw()),
            field_static_type_index: f.kind.static_type_index(),
        };
        // The registry retains the setter function; ours drops after this.
        crate::reflection::type_members::register_field(index, &info)?;
    }
    let total = layout.total_size;
    layouts().write().insert(index, Arc::new(layout));
    type_registry::register_metadata(
        index,
        &TVMFFITypeMetadata {
            doc: TVMFFIByteArray::EMPTY,
            creator: None,
            total_size: total as i32,
            structural_eq_hash_kind: structural_kind,
        },
    )?;
    let new_fn = Function::from_closure(move |args| {
        if !args.is_empty() {
            return Err(Error::type_error(format!("__ffi_new__ takes no arguments, got {}", args.len())));
        }
        Ok(Any::from_object(new_instance(index)?))
    })?;
    let copy_fn = Function::from_closure(move |args| {
        let src: ObjectRef = arg(args, 0, "self")?;
        Ok(Any::from_object(shallow_copy(&src)?))
    })?;
    crate::reflection::attr_columns::register_attr(index, b"__ffi_new__", Any::from_object(new_fn.into_object()).as_raw())?;
    crate::reflection::attr_columns::register_attr(index, b"__ffi_shallow_copy__", Any::from_object(copy_fn.into_object()).as_raw())?;
    // TVM-FFI's generated constructor (positional and KWARGS calls, defaults).
    auto_init::register_init(index)?;
    Ok(index)
}

/// A new instance of the same type whose fields hold the same values
/// (objects shared, not copied): `__ffi_shallow_copy__`.
pub fn shallow_copy(src: &ObjectRef) -> Result<ObjectRef, Error> {
    let index = src.type_index();
    let obj = new_instance(index)?;
    for f in type_registry::all_fields(index) {
        let v = get_field(src, f)?;
        set_field(&obj, f, v.as_raw())?;
    }
    Ok(obj)
}

/// A new instance with every field set, in declaration order.
pub fn init_instance(type_index: i32, values: &[AnyView<'_>]) -> Result<ObjectRef, Error> {
    let obj = new_instance(type_index)?;
    let fields = type_registry::all_fields(type_index);
    if values.len() != fields.len() {
        return Err(Error::type_error(format!(
            "{}.__ffi_init__ expects {} values (one per field), got {}",
            type_key_of(type_index),
            fields.len(),
            values.len()
        )));
    }
    for (f, v) in fields.iter().zip(values) {
        set_field(&obj, f, v.as_raw())?;
    }
    Ok(obj)
}

/// `tether.dataclass.RegisterType(type_key, parent_index, fields)` where
/// `fields` is an Array of `[name, kind, type_index, flags, frozen]` Arrays,
/// optionally followed by the field's default (see `FieldDefault`).
pub(crate) fn register_type_global() -> Result<Function, Error> {
    Function::from_closure(|args| {
        if args.len() != 3 && args.len() != 4 {
            return Err(Error::type_error(format!(
                "tether.dataclass.RegisterType expects 3 or 4 arguments, got {}",
                args.len()
            )));
        }
        // Optional fourth argument: the TVMFFISEqHashKind (TreeNode when absent).
        let structural_kind: i32 = if args.len() == 4 { arg(args, 3, "structural_kind")? } else { 1 };
        if !(0..=5).contains(&structural_kind) {
            return Err(Error::value_error(format!("structural kind {structural_kind} is not a TVMFFISEqHashKind")));
        }
        let key: String = arg(args, 0, "type_key")?;
        let parent: i32 = arg(args, 1, "parent_type_index")?;
        let arr = Array::from_object(arg(args, 2, "fields")?)?;
        let mut specs = Vec::new();
        let mut defaults = Vec::new();
        for (i, f) in arr.iter().enumerate() {
            let rec = Array::from_object(f.get::<ObjectRef>()?)
                .map_err(|_| Error::type_error(format!("field record {i} must be an Array")))?;
            if rec.len() != 5 && rec.len() != 6 {
                return Err(Error::value_error(format!(
                    "field record {i} must be [name, kind, type_index, flags, frozen(, default)], got {} items",
                    rec.len()
                )));
            }
            let name: String = rec.get(0)?.get()?;
            let kind_name: String = rec.get(1)?.get()?;
            let kind = FieldKind::parse(&kind_name, rec.get(2)?.get()?)
                .map_err(|e| Error::new(e.kind(), format!("field {name:?}: {}", e.message())))?;
            let flags: i64 = rec.get(3)?.get()?;
            // The sixth item is the default (a factory Function when flags
            // has kDefaultFromFactory); kHasDefault says it is present.
            defaults.push(if rec.len() == 6 && flags & field_flag::kHasDefault != 0 {
                Some(FieldDefault { value: rec.get(5)?, from_factory: flags & field_flag::kDefaultFromFactory != 0 })
            } else {
                None
            });
            specs.push(FieldSpec { name, kind, flags, frozen: rec.get(4)?.get()? });
        }
        Ok(Any::from(register_type_full(&key, parent, specs, defaults, structural_kind)? as i64))
    })
}
