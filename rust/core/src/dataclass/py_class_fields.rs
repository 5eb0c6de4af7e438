//! Two-step definition of Python-defined classes with TVM-FFI's native
//! field layouts, as upstream's `_register_py_class` / `_register_fields`:
//!
//! * `tether.dataclass.AllocPyClassType(type_key, parent_index) -> int`
//!   allocates the type (index, ancestry) with no fields yet, so other
//!   classes can name it (forward and mutual references) before its own
//!   annotations resolve;
//! * `tether.dataclass.RegisterPyClassFields(type_index, records,
//!   total_size, structure_kind)` adds the fields to that allocated type,
//!   then its `__ffi_init__`/`__ffi_new__`/`__ffi_shallow_copy__` (see
//!   `py_class`) and, for a nonzero structural kind, its metadata.
//!
//! Each record is `[name, doc, metadata, flags, field_static_type_index,
//! size, alignment, offset, converter, default]`: the frontend lays the
//! fields out (after the parent's reflected fields, C++'s rules); the core
//! checks that layout rather than trusting it. `converter` (a Function or
//! None) turns a value into what the field stores before every write. Two
//! more items may follow, `accept_type_index, accept_none`: the object
//! type whose instances (and None, when set) the converter returns as they
//! are, which the setter then stores without calling it (-1: none).
//!
//! A parent may be `ffi.Object`, another class registered here (once its
//! own fields are), or a native type whose instance storage is exactly its
//! reflected fields: instances are zero-filled blocks released field by
//! field, so a native parent with storage that is not a reflected field
//! (which no constructor would initialise here) is refused.
//! Fields can only be added while the type has none and no instance can
//! exist (instances come from `__ffi_new__`, registered last).

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use parking_lot::Mutex;

use super::native_field::{Ownership, Storage};
use crate::abi::{
    field_flag, type_index as ti, TVMFFIAny, TVMFFIByteArray, TVMFFIFieldInfo, TVMFFIObject, TVMFFITypeMetadata,
};
use crate::object::alloc_header::MAX_ALIGNMENT;
use crate::values::any::{Any, AnyView};
use crate::containers::Array;
use crate::values::error::Error;
use crate::values::function::{arg, Function};
use crate::object::ObjectRef;
use crate::types::type_registry::{self, type_key_of};

const HEADER_SIZE: usize = std::mem::size_of::<TVMFFIObject>();

/// Types allocated by `AllocPyClassType`, with their parent index.
fn allocated() -> &'static Mutex<HashMap<i32, i32>> {
    static ALLOCATED: OnceLock<Mutex<HashMap<i32, i32>>> = OnceLock::new();
    ALLOCATED.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The unpadded end of `parent`'s reflected fields (its ancestors'
/// included): where a child's first field may start. Errors for parents a
/// Python-defined class cannot extend.
fn parent_end(parent: i32, child_key: &str) -> Result<usize, Error> {
    let pkey = type_key_of(parent);
    if parent < ti::kTVMFFIStaticObjectBegin || type_registry::type_info(parent).is_none() {
        return Err(Error::type_error(format!("parent `{pkey}` of `{child_key}` is not an object type")));
    }
    if super::is_dataclass(parent) {
        return Err(Error::type_error(format!(
            "parent `{pkey}` of `{child_key}` was registered with tether.dataclass.RegisterType, whose slot layout \
             a natively laid out class cannot extend"
        )));
    }
    let ours = allocated().lock().contains_key(&parent);
    if ours && !super::py_class::has_layout(parent) {
        return Err(Error::type_error(format!(
            "the fields of parent `{pkey}` are not registered yet; `{child_key}` waits for them"
        )));
    }
    let mut end = HEADER_SIZE;
    for f in type_registry::all_fields(parent) {
        let own = Ownership::of_field(f);
        let field_end = usize::try_from(f.offset).ok().and_then(|o| o.checked_add(own.size()));
        match field_end {
            Some(e) if f.getter.is_some() && f.offset >= HEADER_SIZE as i64 => end = end.max(e),
            _ => {
                return Err(Error::type_error(format!(
                    "parent `{pkey}` of `{child_key}` has field `{}` without a readable native layout",
                    super::field_name(f)
                )))
            }
        }
    }
    if !ours && parent != ti::kTVMFFIObject {
        let info = type_registry::type_info(parent).expect("checked above");
        // SAFETY: NULL or a metadata record the registry keeps for the process.
        if let Some(md) = unsafe { info.metadata.as_ref() } {
            let padded = end.checked_add(7).map(|e| e & !7).unwrap_or(usize::MAX);
            if usize::try_from(md.total_size).map_or(true, |t| t > padded) {
                return Err(Error::type_error(format!(
                    "native parent `{pkey}` of `{child_key}` holds {} bytes but its reflected fields end at {end}: \
                     a Python-defined class cannot extend storage it does not know",
                    md.total_size
                )));
            }
        }
    }
    Ok(end)
}

/// `AllocPyClassType(type_key, parent_index)`.
pub fn alloc_type(type_key: &str, parent: i32) -> Result<i32, Error> {
    if type_key.is_empty() {
        return Err(Error::value_error("a type key must not be empty"));
    }
    if let Some(index) = type_registry::key_to_index(type_key.as_bytes()) {
        // A class whose registration was rolled back before its fields
        // were added gets its index back (indices are never reclaimed).
        let reusable = allocated().lock().get(&index) == Some(&parent)
            && !super::py_class::has_layout(index)
            && type_registry::type_info(index).is_some_and(|i| i.num_fields == 0);
        if reusable {
            return Ok(index);
        }
        return Err(Error::value_error(format!("Type key '{type_key}' is already registered")));
    }
    // Refuse a parent that cannot be extended before allocating anything
    // (a native parent's fields are final; a Python-defined one may still
    // be waiting for its fields, which registration checks later).
    if !allocated().lock().contains_key(&parent) {
        parent_end(parent, type_key)?;
    }
    let index = type_registry::get_or_alloc_index(type_key, -1, parent)?;
    allocated().lock().insert(index, parent);
    Ok(index)
}

/// One checked field record.
struct Record {
    name: String,
    doc: String,
    metadata: String,
    flags: i64,
    static_index: i32,
    storage: Storage,
    size: usize,
    alignment: usize,
    offset: usize,
    converter: Option<Function>,
    default: Any,
    /// Object values the converter returns unchanged (see `make_setter`).
    accepts: Option<Accepts>,
}

/// The values a field's converter is known to return unchanged: instances
/// of `type_index`, and None when `none`.
#[derive(Clone, Copy)]
struct Accepts {
    type_index: i32,
    none: bool,
}

impl Accepts {
    fn passes(self, v: &AnyView<'_>) -> bool {
        let t = v.type_index();
        (self.none && t == ti::kTVMFFINone)
            || (t >= ti::kTVMFFIStaticObjectBegin && type_registry::is_instance(t, self.type_index))
    }
}

/// The bytes a field of `storage` occupies in TVM-FFI's layouts.
fn storage_size(storage: Storage, static_index: i32) -> usize {
    match storage {
        Storage::Bool => 1,
        Storage::DataType => 4,
        Storage::Any => std::mem::size_of::<TVMFFIAny>(),
        _ => {
            let probe = TVMFFIFieldInfo {
                name: TVMFFIByteArray::EMPTY,
                doc: TVMFFIByteArray::EMPTY,
                metadata: TVMFFIByteArray::EMPTY,
                flags: 0,
                size: 8,
                alignment: 8,
                offset: 0,
                getter: None,
                setter: std::ptr::null_mut(),
                default_value_or_factory: TVMFFIAny::NONE,
                field_static_type_index: static_index,
            };
            Ownership::of_field(&probe).size()
        }
    }
}

fn parse_record(i: usize, value: &Any, key: &str) -> Result<Record, Error> {
    let rec = Array::from_object(value.get::<ObjectRef>()?)
        .map_err(|_| Error::type_error(format!("field record {i} of `{key}` must be an Array")))?;
    if rec.len() != 10 && rec.len() != 12 {
        return Err(Error::value_error(format!(
            "field record {i} of `{key}` must be [name, doc, metadata, flags, field_static_type_index, size, \
             alignment, offset, converter, default] and optionally [accept_type_index, accept_none], got {} items",
            rec.len()
        )));
    }
    let name: String = rec.get(0)?.get()?;
    let text = |j: i64| -> Result<String, Error> {
        let v = rec.get(j)?;
        if v.is_none() {
            Ok(String::new())
        } else {
            v.get()
        }
    };
    let int = |j: i64, what: &str| -> Result<i64, Error> {
        rec.get(j)?
            .get::<i64>()
            .map_err(|_| Error::type_error(format!("field `{name}` of `{key}`: {what} must be an int")))
    };
    let static_index = i32::try_from(int(4, "field_static_type_index")?)
        .map_err(|_| Error::value_error(format!("field `{name}` of `{key}`: field_static_type_index out of range")))?;
    let storage = Storage::of_static_type_index(static_index).ok_or_else(|| {
        Error::value_error(format!("field `{name}` of `{key}`: unsupported field type index {static_index}"))
    })?;
    let bad = |what: &str| Error::value_error(format!("field `{name}` of `{key}`: {what}"));
    let size = usize::try_from(int(5, "size")?).map_err(|_| bad("negative size"))?;
    let alignment = usize::try_from(int(6, "alignment")?).map_err(|_| bad("negative alignment"))?;
    let offset = usize::try_from(int(7, "offset")?).map_err(|_| bad("negative offset"))?;
    if size != storage_size(storage, static_index) {
        return Err(bad(&format!(
            "size {size} does not match its storage ({} bytes)",
            storage_size(storage, static_index)
        )));
    }
    if !alignment.is_power_of_two() || alignment > MAX_ALIGNMENT || offset % alignment != 0 {
        return Err(bad(&format!("offset {offset} and alignment {alignment} do not form an aligned field")));
    }
    let conv = rec.get(8)?;
    let converter = if conv.is_none() {
        None
    } else if conv.type_index() == ti::kTVMFFIFunction {
        Some(Function::from_object(conv.get::<ObjectRef>()?)?)
    } else {
        return Err(bad("the converter must be a Function or None"));
    };
    let accepts = if rec.len() == 12 {
        let index = i32::try_from(int(10, "accept_type_index")?).map_err(|_| bad("accept_type_index out of range"))?;
        let none = rec.get(11)?.get::<bool>().map_err(|_| bad("accept_none must be a bool"))?;
        if index >= 0 && index < ti::kTVMFFIStaticObjectBegin {
            return Err(bad(&format!("accept_type_index {index} is not an object type")));
        }
        (index >= 0).then_some(Accepts { type_index: index, none })
    } else {
        None
    };
    Ok(Record {
        accepts,
        doc: text(1)?,
        metadata: text(2)?,
        flags: int(3, "flags")?,
        static_index,
        storage,
        size,
        alignment,
        offset,
        converter,
        default: rec.get(9)?,
        name,
    })
}

/// Check the records against each other, the parent and `total_size`.
fn check_layout(records: &[Record], start: usize, total_size: usize, key: &str) -> Result<(), Error> {
    let mut names = HashSet::new();
    let mut spans: Vec<(usize, usize, &str)> = Vec::with_capacity(records.len());
    for r in records {
        if r.name.is_empty() || !names.insert(r.name.as_str()) {
            return Err(Error::value_error(format!("field name {:?} of `{key}` is empty or repeated", r.name)));
        }
        let end = r.offset.checked_add(r.size).filter(|&e| e <= total_size);
        let Some(end) = end.filter(|_| r.offset >= start) else {
            return Err(Error::value_error(format!(
                "field `{}` of `{key}` (offset {}, size {}) lies outside [{start}, {total_size}): the parent's \
                 fields end at {start}",
                r.name, r.offset, r.size
            )));
        };
        spans.push((r.offset, end, &r.name));
    }
    spans.sort_unstable();
    for w in spans.windows(2) {
        if w[1].0 < w[0].1 {
            return Err(Error::value_error(format!("fields `{}` and `{}` of `{key}` overlap", w[0].2, w[1].2)));
        }
    }
    Ok(())
}

/// The setter of one field: convert, then store as the field's C++ type.
/// A value already of the field's POD kind (an FFI int for an int field, …)
/// is one every converter returns unchanged, and so is one the record says
/// the converter accepts as it is (an instance of the field's object type,
/// None for an Optional field): both are stored without the call back into
/// the frontend.
fn make_setter(storage: Storage, converter: Option<Function>, accepts: Option<Accepts>) -> Result<Function, Error> {
    let exact_kind = match storage {
        Storage::Int => Some(ti::kTVMFFIInt),
        Storage::Float => Some(ti::kTVMFFIFloat),
        Storage::Bool => Some(ti::kTVMFFIBool),
        _ => None,
    };
    Function::from_closure(move |args: &[AnyView<'_>]| {
        if args.len() != 2 {
            return Err(Error::type_error(format!(
                "a field setter takes 2 arguments (the field address and the value), got {}",
                args.len()
            )));
        }
        let addr = super::py_class::field_address(&args[0])?;
        let value = match &converter {
            Some(convert)
                if exact_kind != Some(args[1].type_index()) && !accepts.is_some_and(|a| a.passes(&args[1])) =>
            {
                convert.call_views(&args[1..2])?
            }
            _ => args[1].to_owned()?,
        };
        // SAFETY: the setter protocol passes the address of the field this
        // setter was made for, inside a live object.
        unsafe { storage.write(addr as *mut u8, value) }?;
        Ok(Any::none())
    })
}

/// `RegisterPyClassFields(type_index, records, total_size, structure_kind)`.
pub fn register_fields(type_index: i32, records: &Array, total_size: i64, structure_kind: i64) -> Result<(), Error> {
    let key = type_key_of(type_index);
    let parent = *allocated().lock().get(&type_index).ok_or_else(|| {
        Error::value_error(format!("type `{key}` (index {type_index}) was not allocated by AllocPyClassType"))
    })?;
    let info = type_registry::type_info(type_index).expect("allocated types are registered");
    if super::py_class::has_layout(type_index) || info.num_fields != 0 {
        return Err(Error::runtime_error(format!("the fields of `{key}` are already registered")));
    }
    if !(0..=5).contains(&structure_kind) {
        return Err(Error::value_error(format!("structure kind {structure_kind} is not a TVMFFISEqHashKind")));
    }
    let total = usize::try_from(total_size)
        .ok()
        .filter(|&t| t >= HEADER_SIZE && i32::try_from(t).is_ok())
        .ok_or_else(|| Error::value_error(format!("total_size {total_size} of `{key}` is out of range")))?;
    let start = parent_end(parent, &key)?;
    let parsed = records.iter().enumerate().map(|(i, v)| parse_record(i, v, &key)).collect::<Result<Vec<_>, _>>()?;
    check_layout(&parsed, start, total, &key)?;
    for r in parsed {
        let setter = make_setter(r.storage, r.converter, r.accepts)?;
        let has_default = r.flags & field_flag::kHasDefault != 0;
        let field = TVMFFIFieldInfo {
            name: TVMFFIByteArray::from_slice(r.name.as_bytes()),
            doc: TVMFFIByteArray::from_slice(r.doc.as_bytes()),
            metadata: TVMFFIByteArray::from_slice(r.metadata.as_bytes()),
            flags: r.flags | field_flag::kSetterIsFunctionObj,
            size: r.size as i64,
            alignment: r.alignment as i64,
            offset: r.offset as i64,
            getter: Some(r.storage.getter()),
            setter: setter.as_object().as_ptr() as *mut std::ffi::c_void,
            // The registry keeps its own references (default and setter).
            default_value_or_factory: if has_default { *r.default.as_raw() } else { TVMFFIAny::NONE },
            field_static_type_index: r.static_index,
        };
        crate::reflection::type_members::register_field(type_index, &field)?;
    }
    super::py_class::register(type_index, total as i32)?;
    if structure_kind != 0 {
        type_registry::register_metadata(
            type_index,
            &TVMFFITypeMetadata {
                doc: TVMFFIByteArray::EMPTY,
                creator: None,
                total_size: total as i32,
                structural_eq_hash_kind: structure_kind as i32,
            },
        )?;
    }
    Ok(())
}

/// The two globals, for the registry to install at start-up.
pub(crate) fn globals() -> Vec<(&'static str, Result<Function, Error>)> {
    vec![
        (
            "tether.dataclass.AllocPyClassType",
            Function::from_closure(|args: &[AnyView<'_>]| {
                if args.len() != 2 {
                    return Err(Error::type_error(format!(
                        "tether.dataclass.AllocPyClassType expects 2 arguments, got {}",
                        args.len()
                    )));
                }
                let key: String = arg(args, 0, "type_key")?;
                let parent: i32 = arg(args, 1, "parent_type_index")?;
                Ok(Any::from(alloc_type(&key, parent)? as i64))
            }),
        ),
        (
            "tether.dataclass.RegisterPyClassFields",
            Function::from_closure(|args: &[AnyView<'_>]| {
                if args.len() != 4 {
                    return Err(Error::type_error(format!(
                        "tether.dataclass.RegisterPyClassFields expects 4 arguments, got {}",
                        args.len()
                    )));
                }
                let index: i32 = arg(args, 0, "type_index")?;
                let records = Array::from_object(arg(args, 1, "records")?)?;
                register_fields(index, &records, arg(args, 2, "total_size")?, arg(args, 3, "structure_kind")?)?;
                Ok(Any::none())
            }),
        ),
    ]
}
