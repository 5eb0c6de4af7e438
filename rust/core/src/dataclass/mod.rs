//! Object types defined at run time from a list of typed fields, so a
//! frontend (the Python `py_class` decorator) can define classes without
//! native code.
//!
//! An instance is the object header followed by one slot per field,
//! parent's fields first. Slot kinds:
//!
//! | kind     | storage             | accepts                               |
//! |----------|---------------------|---------------------------------------|
//! | `Any`    | 16-byte `TVMFFIAny` | any value                             |
//! | `Int`    | `i64`               | int, bool                             |
//! | `Float`  | `f64`               | float, int, bool                      |
//! | `Bool`   | `i64` (0/1)         | bool, int                             |
//! | `Str`    | 16-byte `TVMFFIAny` | str, None                             |
//! | `Object` | object pointer      | None or an instance of the field type |
//!
//! Each field is registered with the type registry: a getter function, and
//! a setter that is a Function object (`kSetterIsFunctionObj`) checking the
//! declared type. The type gets `__ffi_new__` (an instance with every field
//! zero/None), `__ffi_init__` (TVM-FFI's generated constructor, see
//! `auto_init`: positional and keyword arguments, field defaults and
//! factories) and `__ffi_shallow_copy__` as type attributes, plus its
//! `TVMFFITypeMetadata::total_size`.
//! The metadata `creator` stays NULL: a plain C function pointer cannot
//! know which run-time type to create.
//!
//! The builtin global `tether.dataclass.RegisterType` exposes this to any
//! frontend through the C ABI.
//!
//! SAFETY invariants of this module: an instance of a registered dataclass
//! type has the layout recorded in `LAYOUTS` for its type index, its slots
//! are always initialised (zeroed at creation), and Object slots own one
//! reference when non-NULL.

pub mod auto_init;
pub mod field_default;
mod field_access;
pub mod native_field;
pub mod py_class;
pub mod py_class_fields;
pub(crate) mod reflection_globals;

pub use field_access::{get_field, set_field};
use field_access::{getter_for, make_setter, store_slot};

use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::{Arc, OnceLock};

use parking_lot::RwLock;

use crate::abi::{
    field_flag, kTVMFFIObjectDeleterFlagBitMaskStrong, kTVMFFIObjectDeleterFlagBitMaskWeak, type_index as ti,
    TVMFFIAny, TVMFFIByteArray, TVMFFIFieldInfo, TVMFFIObject, TVMFFITypeMetadata,
};
use crate::object::alloc_header;
use crate::values::any::{Any, AnyView};
use crate::containers::Array;
use crate::values::error::{self, Error};
use crate::values::function::{arg, Function};
use crate::object::ObjectRef;
use crate::types::type_registry::{self, type_key_of};

/// What a field slot stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    Any,
    Int,
    Float,
    Bool,
    Str,
    /// An object of this type index (or a subtype), or None.
    Object(i32),
}

impl FieldKind {
    fn size(self) -> usize {
        match self {
            FieldKind::Any | FieldKind::Str => 16,
            _ => 8,
        }
    }

    fn static_type_index(self) -> i32 {
        match self {
            FieldKind::Any => ti::kTVMFFIAny,
            FieldKind::Int => ti::kTVMFFIInt,
            FieldKind::Float => ti::kTVMFFIFloat,
            FieldKind::Bool => ti::kTVMFFIBool,
            FieldKind::Str => ti::kTVMFFIStr,
            FieldKind::Object(t) => t,
        }
    }

    fn describe(self) -> String {
        match self {
            FieldKind::Any => "Any".into(),
            FieldKind::Int => "int".into(),
            FieldKind::Float => "float".into(),
            FieldKind::Bool => "bool".into(),
            FieldKind::Str => "str".into(),
            FieldKind::Object(t) => type_key_of(t),
        }
    }

    /// Parse the names used by `tether.dataclass.RegisterType`.
    pub fn parse(name: &str, type_index: i32) -> Result<FieldKind, Error> {
        Ok(match name {
            "any" => FieldKind::Any,
            "int" => FieldKind::Int,
            "float" => FieldKind::Float,
            "bool" => FieldKind::Bool,
            "str" => FieldKind::Str,
            "object" => {
                if type_index < ti::kTVMFFIStaticObjectBegin || type_registry::type_info(type_index).is_none() {
                    return Err(Error::value_error(format!(
                        "object field type index {type_index} is not a registered object type"
                    )));
                }
                FieldKind::Object(type_index)
            }
            other => {
                return Err(Error::value_error(format!(
                    "unknown field kind {other:?} (expected any, int, float, bool, str or object)"
                )))
            }
        })
    }
}

/// One field of a run-time type.
#[derive(Clone, Debug)]
pub struct FieldSpec {
    pub name: String,
    pub kind: FieldKind,
    /// `TVMFFIFieldInfo` flags (kInitOff, kReprOff, kKwOnly, …); kWritable is
    /// added unless `frozen`.
    pub flags: i64,
    pub frozen: bool,
}

#[derive(Clone, Debug)]
struct Slot {
    kind: FieldKind,
    offset: usize,
}

#[derive(Debug)]
struct Layout {
    total_size: usize,
    slots: Vec<Slot>,
}

fn layouts() -> &'static RwLock<HashMap<i32, Arc<Layout>>> {
    static L: OnceLock<RwLock<HashMap<i32, Arc<Layout>>>> = OnceLock::new();
    L.get_or_init(|| RwLock::new(HashMap::new()))
}

fn layout_of(type_index: i32) -> Option<Arc<Layout>> {
    layouts().read().get(&type_index).cloned()
}

/// Whether `type_index` is a run-time dataclass type.
pub fn is_dataclass(type_index: i32) -> bool {
    layouts().read().contains_key(&type_index)
}

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

/// A new instance with every slot zero/None.
pub fn new_instance(type_index: i32) -> Result<ObjectRef, Error> {
    let layout = layout_of(type_index)
        .ok_or_else(|| Error::type_error(format!("{} is not a run-time dataclass type", type_key_of(type_index))))?;
    new_instance_of(type_index, &layout)
}

/// [`new_instance`] with the type's layout at hand.
fn new_instance_of(type_index: i32, layout: &Layout) -> Result<ObjectRef, Error> {
    let body = alloc_header::allocate_body(layout.total_size, 8, type_index)?;
    // SAFETY: `total_size` bytes were allocated; zero bytes are a valid
    // state for every slot kind (None Any, 0, 0.0, false, NULL object).
    unsafe {
        std::ptr::write_bytes(body.as_ptr(), 0, layout.total_size);
        let obj = alloc_header::init_header(body, type_index, instance_deleter);
        Ok(ObjectRef::from_raw_owned(std::ptr::NonNull::new_unchecked(obj)))
    }
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

unsafe extern "C" fn instance_deleter(ptr: *mut c_void, flags: i32) {
    if flags & kTVMFFIObjectDeleterFlagBitMaskStrong != 0 {
        // SAFETY: module invariant: instances of a dataclass type have its layout.
        unsafe {
            let index = (*(ptr as *mut TVMFFIObject)).type_index;
            if let Some(layout) = layout_of(index) {
                for s in &layout.slots {
                    drop_slot((ptr as *mut u8).add(s.offset), s.kind);
                }
            }
        }
    }
    if flags & kTVMFFIObjectDeleterFlagBitMaskWeak != 0 {
        // SAFETY: registry-allocated block, no references left.
        unsafe { alloc_header::free_body(ptr) };
    }
}

/// # Safety
/// `slot` must be an initialised slot of `kind`; it is left zeroed.
unsafe fn drop_slot(slot: *mut u8, kind: FieldKind) {
    // SAFETY: per the caller.
    unsafe {
        match kind {
            FieldKind::Any | FieldKind::Str => {
                drop(Any::from_raw_owned(std::ptr::read(slot as *const TVMFFIAny)));
                std::ptr::write(slot as *mut TVMFFIAny, TVMFFIAny::NONE);
            }
            FieldKind::Object(_) => {
                let p = std::ptr::replace(slot as *mut *mut TVMFFIObject, std::ptr::null_mut());
                if !p.is_null() {
                    crate::object::dec_ref(p);
                }
            }
            _ => {}
        }
    }
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

/// A field record's name.
pub(crate) fn field_name(f: &TVMFFIFieldInfo) -> String {
    if f.name.data.is_null() {
        return String::new();
    }
    // SAFETY: registry records point their names at bytes the registry owns
    // for the whole process, `size` bytes long.
    let bytes = unsafe { std::slice::from_raw_parts(f.name.data as *const u8, f.name.size) };
    String::from_utf8_lossy(bytes).into_owned()
}

/// A new instance made by the type's metadata creator (C++ types with a
/// default constructor register one).
pub(crate) fn create_with_creator(type_index: i32) -> Result<ObjectRef, Error> {
    let info = type_registry::type_info(type_index)
        .ok_or_else(|| Error::value_error(format!("unknown type index {type_index}")))?;
    // SAFETY: NULL or a metadata record the registry keeps for the process.
    let creator = unsafe { info.metadata.as_ref() }.and_then(|m| m.creator).ok_or_else(|| {
        Error::type_error(format!("type {} has no creator to make an empty instance", type_key_of(type_index)))
    })?;
    let mut handle: *mut c_void = std::ptr::null_mut();
    // SAFETY: a creator writes one owned handle on success.
    let rc = unsafe { creator(&mut handle) };
    if rc != 0 {
        return Err(error::take_raised_or_unknown(rc));
    }
    let p = std::ptr::NonNull::new(handle as *mut TVMFFIObject)
        .ok_or_else(|| Error::runtime_error(format!("creator of {} returned NULL", type_key_of(type_index))))?;
    // SAFETY: the creator handed us its reference.
    Ok(unsafe { ObjectRef::from_raw_owned(p) })
}
