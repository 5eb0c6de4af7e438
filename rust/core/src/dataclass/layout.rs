//! The layout of run-time dataclass instances: what each field slot
//! stores (`FieldKind`), the slots of each registered type, and making and
//! destroying instances.
//!
//! SAFETY invariants (the dataclass module's): an instance of a registered
//! dataclass type has the layout recorded here for its type index, its
//! slots are always initialised (zeroed at creation), and Object slots own
//! one reference when non-NULL.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, OnceLock};

use parking_lot::RwLock;

use crate::abi::{
    kTVMFFIObjectDeleterFlagBitMaskStrong, kTVMFFIObjectDeleterFlagBitMaskWeak, type_index as ti,
    TVMFFIAny, TVMFFIFieldInfo, TVMFFIObject,
};
use crate::object::alloc_header;
use crate::values::any::Any;
use crate::values::error::{self, Error};
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
    pub(crate) fn size(self) -> usize {
        match self {
            FieldKind::Any | FieldKind::Str => 16,
            _ => 8,
        }
    }

    pub(crate) fn static_type_index(self) -> i32 {
        match self {
            FieldKind::Any => ti::kTVMFFIAny,
            FieldKind::Int => ti::kTVMFFIInt,
            FieldKind::Float => ti::kTVMFFIFloat,
            FieldKind::Bool => ti::kTVMFFIBool,
            FieldKind::Str => ti::kTVMFFIStr,
            FieldKind::Object(t) => t,
        }
    }

    pub(crate) fn describe(self) -> String {
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
pub(crate) struct Slot {
    pub(crate) kind: FieldKind,
    pub(crate) offset: usize,
}

#[derive(Debug)]
pub(crate) struct Layout {
    pub(crate) total_size: usize,
    pub(crate) slots: Vec<Slot>,
}

pub(crate) fn layouts() -> &'static RwLock<HashMap<i32, Arc<Layout>>> {
    static L: OnceLock<RwLock<HashMap<i32, Arc<Layout>>>> = OnceLock::new();
    L.get_or_init(|| RwLock::new(HashMap::new()))
}

pub(crate) fn layout_of(type_index: i32) -> Option<Arc<Layout>> {
    layouts().read().get(&type_index).cloned()
}

/// Whether `type_index` is a run-time dataclass type.
pub fn is_dataclass(type_index: i32) -> bool {
    layouts().read().contains_key(&type_index)
}

/// A new instance with every slot zero/None.
pub fn new_instance(type_index: i32) -> Result<ObjectRef, Error> {
    let layout = layout_of(type_index)
        .ok_or_else(|| Error::type_error(format!("{} is not a run-time dataclass type", type_key_of(type_index))))?;
    new_instance_of(type_index, &layout)
}

/// [`new_instance`] with the type's layout at hand.
pub(crate) fn new_instance_of(type_index: i32, layout: &Layout) -> Result<ObjectRef, Error> {
    let body = alloc_header::allocate_body(layout.total_size, 8, type_index)?;
    // SAFETY: `total_size` bytes were allocated; zero bytes are a valid
    // state for every slot kind (None Any, 0, 0.0, false, NULL object).
    unsafe {
        std::ptr::write_bytes(body.as_ptr(), 0, layout.total_size);
        let obj = alloc_header::init_header(body, type_index, instance_deleter);
        Ok(ObjectRef::from_raw_owned(std::ptr::NonNull::new_unchecked(obj)))
    }
}

pub(crate) unsafe extern "C" fn instance_deleter(ptr: *mut c_void, flags: i32) {
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
