//! What the structural algorithms read of an object through reflection:
//! its type's structural kind, its registered fields (by getter or in
//! place), and the def region a field or hook opens.

use crate::abi::{type_index as ti, TVMFFIFieldInfo, TVMFFITypeInfo};
use crate::reflection::structural_kind as kind;
use crate::object::ObjectRef;
use crate::types::byte_array::byte_slice;
use crate::types::type_registry;
use crate::values::any::Any;
use crate::values::error::Error;

/// `TVMFFIDefRegionKind`.
pub mod def_region {
    pub const NONE: i32 = 0;
    /// Propagates to everything below it; entering another region inside
    /// it has no effect.
    pub const PATTERN: i32 = 1;
    /// Free variables directly in it bind; their own fields do not.
    pub const SIMPLE: i32 = 2;
}

/// The structural kind of an object's type, with TVM-FFI's errors for
/// types that do not take part.
pub(crate) fn structural_kind(info: &TVMFFITypeInfo) -> Result<i32, Error> {
    // SAFETY: type infos and their keys live for the process.
    let key = String::from_utf8_lossy(unsafe { byte_slice(&info.type_key) }).into_owned();
    if info.metadata.is_null() {
        return Err(Error::type_error(format!(
            "Type metadata is not set for type `{key}`, so StructuralHash is not supported for this type"
        )));
    }
    // SAFETY: non-NULL metadata records live for the process.
    let kind = unsafe { (*info.metadata).structural_eq_hash_kind };
    if kind == kind::UNSUPPORTED {
        return Err(Error::type_error(format!(
            "_type_s_eq_hash_kind is not set for type `{key}`, so StructuralHash is not supported for this type"
        )));
    }
    Ok(kind)
}

pub(crate) fn type_info_of(obj: &ObjectRef) -> Result<&'static TVMFFITypeInfo, Error> {
    type_registry::type_info(obj.type_index()).ok_or_else(|| {
        Error::type_error(format!(
            "object has unregistered type index {}",
            obj.type_index()
        ))
    })
}

/// Read a reflected field of `obj` (the field belongs to its type).
pub(crate) fn read_field(obj: &ObjectRef, field: &TVMFFIFieldInfo) -> Result<Any, Error> {
    match read_field_in_place(obj, field) {
        Some(v) => Ok(v),
        None => crate::dataclass::get_field(obj, field),
    }
}

/// A field of a Python-defined layout, read in place (None for fields
/// with other getters, which [`read_field`] calls). A walk reads every
/// field of every object, and the call through the getter was a large
/// part of each; no Result either: returned through memory, it was
/// written in wide stores and read back in narrow pieces, a
/// store-forwarding stall per field.
#[inline(always)]
pub(crate) fn read_field_in_place(obj: &ObjectRef, field: &TVMFFIFieldInfo) -> Option<Any> {
    // SAFETY: the field belongs to the object's type (callers look it up
    // from the object's own type index), so the address is inside it.
    let addr = unsafe { (obj.as_ptr() as *const u8).add(field.offset as usize) };
    // SAFETY: as above, the live object holds the field at `addr`.
    unsafe { crate::dataclass::native_field::read_without_getter(field, addr) }
}

pub(crate) fn field_name(field: &TVMFFIFieldInfo) -> String {
    // SAFETY: registered field names live for the process.
    String::from_utf8_lossy(unsafe { byte_slice(&field.name) }).into_owned()
}

/// The region a `SEqHashDef*` field opens inside region `current`.
pub(crate) fn region_for_field(flags: i64, current: i32) -> Option<i32> {
    use crate::abi::field_flag::{kSEqHashDefPattern, kSEqHashDefSimple};
    if flags & (kSEqHashDefPattern | kSEqHashDefSimple) == 0 {
        return None;
    }
    Some(if current == def_region::PATTERN {
        def_region::PATTERN
    } else if flags & kSEqHashDefSimple != 0 {
        def_region::SIMPLE
    } else {
        def_region::PATTERN
    })
}

/// The region a custom hook's callback asks for inside region `current`.
pub(crate) fn region_for_hook(requested: i32, current: i32) -> i32 {
    if current == def_region::PATTERN || requested == def_region::NONE {
        current
    } else {
        requested
    }
}

pub(crate) fn is_object_index(index: i32) -> bool {
    index >= ti::kTVMFFIStaticObjectBegin
}

/// The structural kind a type declares (Unsupported when it has none).
pub(crate) fn declared_kind(index: i32) -> i32 {
    match type_registry::type_info(index) {
        // SAFETY: non-NULL metadata records live for the process.
        Some(info) if !info.metadata.is_null() => unsafe {
            (*info.metadata).structural_eq_hash_kind
        },
        _ => kind::UNSUPPORTED,
    }
}
