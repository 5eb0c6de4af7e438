//! Fields stored in TVM-FFI's native layouts, as classes defined from
//! Python lay them out (`_ORIGIN_NATIVE_LAYOUT` in upstream's
//! `type_info.pxi`): a field's static type index decides what its bytes
//! hold —
//!
//! | static type index              | storage                  |
//! |--------------------------------|--------------------------|
//! | `kTVMFFIInt`                   | `int64_t`                |
//! | `kTVMFFIFloat`                 | `double`                 |
//! | `kTVMFFIBool`                  | C++ `bool` (one byte)    |
//! | `kTVMFFIOpaquePtr`             | `void*`                  |
//! | `kTVMFFIDataType`              | `DLDataType` (4 bytes)   |
//! | `kTVMFFIDevice`                | `DLDevice` (8 bytes)     |
//! | `kTVMFFIAny`, `kTVMFFINone`    | a 16-byte `TVMFFIAny`    |
//! | an object index (64 and above) | an object pointer (`ObjectRef`; NULL is None) |
//!
//! This module reads and writes one such field: the C getters that
//! `ffi.MakeFieldGetter` hands out, the converting writes of the setters
//! `ffi.MakeFieldSetter` makes (with TVM-FFI's conversions and its
//! `Cannot convert from type ... to ...` TypeErrors), and — for whole
//! objects of a Python-defined layout — what a field owns, so that
//! instances can be copied and destroyed field by field.
//!
//! All bytes zero is a valid value of every storage (0, 0.0, false, NULL,
//! None, an empty reference), so a zero-filled block is a constructed
//! object.
//!
//! SAFETY invariants of this module: every `addr` passed to the unsafe
//! functions is the address of a live field with the storage named next to
//! it (inside an object kept alive by the caller, for the size of that
//! storage); an Any field holds an owned value (`Any`'s invariant) and an
//! object field owns one strong reference when non-NULL. Reads and writes
//! are unaligned-tolerant; those of reference-holding fields go through
//! [`super::field_lock`], so that a read racing a write never takes its
//! reference to a value the write already released.

use std::ffi::{c_int, c_void};

use crate::abi::{type_index as ti, DLDataType, DLDevice, TVMFFIAny, TVMFFIAnyValue, TVMFFIFieldInfo, TVMFFIObject};
use crate::values::any::{Any, FromAny};
use super::field_lock;
use crate::values::error::{self, Error};
use crate::object::ObjectRef;
use crate::tensor::device::device_from_str;
use crate::types::type_registry::type_key_of;

/// What the bytes of a field hold, for the field getters and setters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    Int,
    Float,
    Bool,
    OpaquePtr,
    DataType,
    Device,
    Any,
    ObjectRef,
}

impl Storage {
    /// The storage of a field with this static type index, as upstream's
    /// `MakeFieldGetter`/`MakeFieldSetter` dispatch on it; `None` for the
    /// indices they do not support (raw strings, small strings, …).
    pub fn of_static_type_index(index: i32) -> Option<Storage> {
        Some(match index {
            ti::kTVMFFIInt => Storage::Int,
            ti::kTVMFFIFloat => Storage::Float,
            ti::kTVMFFIBool => Storage::Bool,
            ti::kTVMFFIOpaquePtr => Storage::OpaquePtr,
            ti::kTVMFFIDataType => Storage::DataType,
            ti::kTVMFFIDevice => Storage::Device,
            ti::kTVMFFIAny | ti::kTVMFFINone => Storage::Any,
            i if i >= ti::kTVMFFIStaticObjectBegin => Storage::ObjectRef,
            _ => return None,
        })
    }

    /// The C getter reading a field of this storage.
    pub fn getter(self) -> crate::abi::TVMFFIFieldGetter {
        match self {
            Storage::Int => get_int,
            Storage::Float => get_float,
            Storage::Bool => get_bool,
            Storage::OpaquePtr => get_opaque_ptr,
            Storage::DataType => get_data_type,
            Storage::Device => get_device,
            Storage::Any => get_any,
            Storage::ObjectRef => get_object,
        }
    }

    /// Convert `value` the way TVM-FFI casts to the field's C++ type and
    /// store it at `addr`, releasing what the field held before. On error
    /// the field is left unchanged.
    ///
    /// # Safety
    /// `addr` must be a live field of this storage (module invariant).
    pub unsafe fn write(self, addr: *mut u8, value: Any) -> Result<(), Error> {
        match self {
            // SAFETY: `addr` is an int64 field, per the caller.
            Storage::Int => unsafe { (addr as *mut i64).write_unaligned(cast_int(&value)?) },
            // SAFETY: a double field.
            Storage::Float => unsafe { (addr as *mut f64).write_unaligned(cast_float(&value)?) },
            // SAFETY: a one-byte bool field.
            Storage::Bool => unsafe { addr.write(cast_bool(&value)? as u8) },
            // SAFETY: a pointer field.
            Storage::OpaquePtr => unsafe { (addr as *mut *mut c_void).write_unaligned(cast_opaque_ptr(&value)?) },
            // SAFETY: a DLDataType field.
            Storage::DataType => unsafe { (addr as *mut DLDataType).write_unaligned(cast_data_type(&value)?) },
            // SAFETY: a DLDevice field.
            Storage::Device => unsafe { (addr as *mut DLDevice).write_unaligned(cast_device(&value)?) },
            Storage::Any => {
                let new = owned_value(value)?;
                // SAFETY: an Any field; the old value is released after the
                // locked swap (`field_lock`), racing readers having taken
                // their own references.
                drop(unsafe { field_lock::swap_any(addr, new) });
            }
            Storage::ObjectRef => {
                let new = cast_object(&value)?.map_or(std::ptr::null_mut(), ObjectRef::into_raw);
                // SAFETY: an object field, given the new reference; as above.
                drop(unsafe { field_lock::swap_object(addr, new) });
            }
        }
        Ok(())
    }
}

/// What a field of a Python-defined layout owns, for copying and
/// destroying whole objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ownership {
    /// Plain bytes (`size` of them), copied as they are.
    Plain(usize),
    /// A 16-byte Any.
    Any,
    /// An object pointer owning one reference when non-NULL.
    ObjectRef,
}

impl Ownership {
    /// What a registered field owns, by upstream's rule for Python-defined
    /// layouts: object indices are references; an Any-typed field is an
    /// Any, unless it is pointer-sized (a C++ parent's `ObjectRef` field
    /// typed as Any); everything else is plain bytes. A None-typed field is
    /// an Any, as its getter and setter treat it.
    pub fn of_field(info: &TVMFFIFieldInfo) -> Ownership {
        match info.field_static_type_index {
            ti::kTVMFFIAny | ti::kTVMFFINone if info.size == std::mem::size_of::<*mut TVMFFIObject>() as i64 => {
                Ownership::ObjectRef
            }
            ti::kTVMFFIAny | ti::kTVMFFINone => Ownership::Any,
            i if i >= ti::kTVMFFIStaticObjectBegin => Ownership::ObjectRef,
            _ => Ownership::Plain(usize::try_from(info.size).unwrap_or(0)),
        }
    }

    /// The bytes the field occupies.
    pub fn size(self) -> usize {
        match self {
            Ownership::Plain(n) => n,
            Ownership::Any => std::mem::size_of::<TVMFFIAny>(),
            Ownership::ObjectRef => std::mem::size_of::<*mut TVMFFIObject>(),
        }
    }

    /// Copy the field at `src` into the zero-filled field at `dst`, adding
    /// the references the copy holds.
    ///
    /// # Safety
    /// `src` a live field of this ownership, `dst` the same field of a
    /// zero-filled object (it owns nothing yet).
    pub unsafe fn copy(self, dst: *mut u8, src: *const u8) -> Result<(), Error> {
        match self {
            // SAFETY: both fields are `n` bytes inside their objects.
            Ownership::Plain(n) => unsafe { std::ptr::copy_nonoverlapping(src, dst, n) },
            Ownership::Any => {
                // SAFETY: an owned Any, copied with its own reference.
                let copy = unsafe { field_lock::clone_any(src) };
                // SAFETY: the destination owns nothing (zero-filled) and no
                // other thread can see it yet.
                unsafe { (dst as *mut TVMFFIAny).write_unaligned(copy.into_raw()) };
            }
            Ownership::ObjectRef => {
                // SAFETY: an object field; the copy takes a reference of its own.
                if let Some(copy) = unsafe { field_lock::clone_object(src) } {
                    // SAFETY: as above.
                    unsafe { (dst as *mut *mut TVMFFIObject).write_unaligned(copy.into_raw()) };
                }
            }
        }
        Ok(())
    }

    /// Release what the field at `addr` owns and leave it zero/None.
    ///
    /// # Safety
    /// `addr` a live field of this ownership.
    pub unsafe fn release(self, addr: *mut u8) {
        match self {
            Ownership::Plain(_) => {}
            // SAFETY: the field owned the value; it is None afterwards.
            Ownership::Any => drop(unsafe { Any::from_raw_owned((addr as *mut TVMFFIAny).replace(TVMFFIAny::NONE)) }),
            // SAFETY: the field owned the reference; it is NULL afterwards.
            Ownership::ObjectRef => unsafe {
                release_object((addr as *mut *mut TVMFFIObject).replace(std::ptr::null_mut()))
            },
        }
    }
}

/// # Safety
/// `p` is NULL or an object on which the caller owns a reference.
unsafe fn release_object(p: *mut TVMFFIObject) {
    if !p.is_null() {
        // SAFETY: per the caller.
        unsafe { crate::object::dec_ref(p) }
    }
}

/// TVM-FFI's TypeError for a failed cast.
fn cannot_convert(value: &Any, to: &str) -> Error {
    Error::type_error(format!("Cannot convert from type `{}` to `{to}`", type_key_of(value.type_index())))
}

fn payload(value: &Any) -> TVMFFIAnyValue {
    value.as_raw().value
}

fn cast_int(value: &Any) -> Result<i64, Error> {
    match value.type_index() {
        // SAFETY: int and bool carry v_int64.
        ti::kTVMFFIInt | ti::kTVMFFIBool => Ok(unsafe { payload(value).v_int64 }),
        _ => Err(cannot_convert(value, "int")),
    }
}

fn cast_float(value: &Any) -> Result<f64, Error> {
    match value.type_index() {
        // SAFETY: a float carries v_float64.
        ti::kTVMFFIFloat => Ok(unsafe { payload(value).v_float64 }),
        // SAFETY: int and bool carry v_int64.
        ti::kTVMFFIInt | ti::kTVMFFIBool => Ok(unsafe { payload(value).v_int64 } as f64),
        _ => Err(cannot_convert(value, "float")),
    }
}

fn cast_bool(value: &Any) -> Result<bool, Error> {
    match value.type_index() {
        // SAFETY: int and bool carry v_int64.
        ti::kTVMFFIBool | ti::kTVMFFIInt => Ok(unsafe { payload(value).v_int64 } != 0),
        _ => Err(cannot_convert(value, "bool")),
    }
}

fn cast_opaque_ptr(value: &Any) -> Result<*mut c_void, Error> {
    match value.type_index() {
        ti::kTVMFFINone => Ok(std::ptr::null_mut()),
        // SAFETY: an opaque pointer carries v_ptr.
        ti::kTVMFFIOpaquePtr => Ok(unsafe { payload(value).v_ptr }),
        _ => Err(cannot_convert(value, "void*")),
    }
}

fn cast_data_type(value: &Any) -> Result<DLDataType, Error> {
    match value.type_index() {
        // SAFETY: a data type carries v_dtype.
        ti::kTVMFFIDataType => Ok(unsafe { payload(value).v_dtype }),
        ti::kTVMFFIStr | ti::kTVMFFISmallStr | ti::kTVMFFIRawStr => {
            crate::tensor::dtype::from_str(&String::from_any(value.as_raw())?)
        }
        _ => Err(cannot_convert(value, "DataType")),
    }
}

fn cast_device(value: &Any) -> Result<DLDevice, Error> {
    match value.type_index() {
        // SAFETY: a device carries v_device.
        ti::kTVMFFIDevice => Ok(unsafe { payload(value).v_device }),
        ti::kTVMFFIStr | ti::kTVMFFISmallStr | ti::kTVMFFIRawStr => String::from_any(value.as_raw())
            .ok()
            .and_then(|s| device_from_str(&s))
            .ok_or_else(|| cannot_convert(value, "Device")),
        _ => Err(cannot_convert(value, "Device")),
    }
}

/// An object field's new value: an object, or None for NULL.
fn cast_object(value: &Any) -> Result<Option<ObjectRef>, Error> {
    match value.type_index() {
        ti::kTVMFFINone => Ok(None),
        i if i >= ti::kTVMFFIStaticObjectBegin => value.get::<ObjectRef>().map(Some),
        _ => Err(cannot_convert(value, "ffi.Object")),
    }
}

/// A value an Any field can own: views of memory the caller owns (raw C
/// strings, byte-array pointers, rvalue references) become the values
/// they refer to.
fn owned_value(value: Any) -> Result<Any, Error> {
    match value.type_index() {
        ti::kTVMFFIRawStr | ti::kTVMFFIByteArrayPtr | ti::kTVMFFIObjectRValueRef => Any::from_view(value.as_raw()),
        _ => Ok(value),
    }
}

/// Hand `v` to the getter's caller.
fn deliver(v: Any, out: *mut TVMFFIAny) -> c_int {
    // SAFETY: checked non-NULL by the getters; the caller's result slot.
    unsafe { out.write(v.into_raw()) };
    0
}

/// The getters' shared argument check.
fn null_arguments(field: *mut c_void, out: *mut TVMFFIAny) -> bool {
    if field.is_null() || out.is_null() {
        error::set_raised(Error::value_error(if field.is_null() {
            "field getter called with a NULL field address"
        } else {
            "field getter called with a NULL result slot"
        }));
        return true;
    }
    false
}

unsafe extern "C" fn get_int(field: *mut c_void, out: *mut TVMFFIAny) -> c_int {
    if null_arguments(field, out) {
        return -1;
    }
    // SAFETY: an int64 field (the getter was made for one).
    deliver(Any::from(unsafe { (field as *const i64).read_unaligned() }), out)
}

unsafe extern "C" fn get_float(field: *mut c_void, out: *mut TVMFFIAny) -> c_int {
    if null_arguments(field, out) {
        return -1;
    }
    // SAFETY: a double field.
    deliver(Any::from(unsafe { (field as *const f64).read_unaligned() }), out)
}

unsafe extern "C" fn get_bool(field: *mut c_void, out: *mut TVMFFIAny) -> c_int {
    if null_arguments(field, out) {
        return -1;
    }
    // SAFETY: a one-byte bool field.
    deliver(Any::from(unsafe { (field as *const u8).read() } != 0), out)
}

unsafe extern "C" fn get_opaque_ptr(field: *mut c_void, out: *mut TVMFFIAny) -> c_int {
    if null_arguments(field, out) {
        return -1;
    }
    // SAFETY: a pointer field.
    let p = unsafe { (field as *const *mut c_void).read_unaligned() };
    // As upstream, a NULL pointer reads back as a NULL opaque pointer, not None.
    let raw = TVMFFIAny { type_index: ti::kTVMFFIOpaquePtr, small_str_len: 0, value: TVMFFIAnyValue { v_ptr: p } };
    // SAFETY: a plain value owns nothing.
    deliver(unsafe { Any::from_raw_owned(raw) }, out)
}

unsafe extern "C" fn get_data_type(field: *mut c_void, out: *mut TVMFFIAny) -> c_int {
    if null_arguments(field, out) {
        return -1;
    }
    // SAFETY: a DLDataType field.
    deliver(Any::data_type(unsafe { (field as *const DLDataType).read_unaligned() }), out)
}

unsafe extern "C" fn get_device(field: *mut c_void, out: *mut TVMFFIAny) -> c_int {
    if null_arguments(field, out) {
        return -1;
    }
    // SAFETY: a DLDevice field.
    deliver(Any::device(unsafe { (field as *const DLDevice).read_unaligned() }), out)
}

unsafe extern "C" fn get_any(field: *mut c_void, out: *mut TVMFFIAny) -> c_int {
    if null_arguments(field, out) {
        return -1;
    }
    // SAFETY: an Any field holding an owned value; the copy takes its own reference.
    deliver(unsafe { field_lock::clone_any(field as *const u8) }, out)
}

unsafe extern "C" fn get_object(field: *mut c_void, out: *mut TVMFFIAny) -> c_int {
    if null_arguments(field, out) {
        return -1;
    }
    // SAFETY: an object field; the result takes a reference of its own.
    let v = unsafe { field_lock::clone_object(field as *const u8) }.map_or_else(Any::none, Any::from_object);
    deliver(v, out)
}

/// A field read without the call through its getter, for readers that
/// walk many objects (the structural algorithms): the value when `field`'s
/// getter is one of this module's int, float, bool, Any or object getters
/// (the read is then exactly that getter's, and cannot fail), else None
/// and the caller calls the getter.
///
/// # Safety
/// `addr` is the address of `field` inside a live object of its type.
#[inline]
pub(crate) unsafe fn read_without_getter(field: &TVMFFIFieldInfo, addr: *const u8) -> Option<Any> {
    // SAFETY: per the caller.
    in_place_kind(field).map(|kind| unsafe { read_in_place(kind, addr) })
}

/// How a field [`read_without_getter`] can read is stored in place.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum InPlace {
    Any,
    Object,
    Int,
    Float,
    Bool,
}

/// How `field` is read in place, or None when only its getter reads it
/// (looked up once per type by walks over many objects).
pub(crate) fn in_place_kind(field: &TVMFFIFieldInfo) -> Option<InPlace> {
    let g = field.getter? as *const ();
    [
        (get_any as *const (), InPlace::Any),
        (get_object as *const (), InPlace::Object),
        (get_int as *const (), InPlace::Int),
        (get_float as *const (), InPlace::Float),
        (get_bool as *const (), InPlace::Bool),
    ]
    .into_iter()
    .find_map(|(getter, kind)| (getter == g).then_some(kind))
}

/// The value stored at `addr` as `kind` says, with a reference of its own
/// (taken under the field's lock, so a concurrent write cannot free it
/// first): what the field's getter returns, without the call.
///
/// # Safety
/// `addr` is the address of a field stored as `kind` inside a live object.
#[inline(always)]
pub(crate) unsafe fn read_in_place(kind: InPlace, addr: *const u8) -> Any {
    // SAFETY: per the caller, `addr` holds the storage of `kind`.
    unsafe {
        match kind {
            InPlace::Any => field_lock::clone_any(addr),
            InPlace::Object => field_lock::clone_object(addr).map_or_else(Any::none, Any::from_object),
            InPlace::Int => Any::from((addr as *const i64).read_unaligned()),
            InPlace::Float => Any::from((addr as *const f64).read_unaligned()),
            InPlace::Bool => Any::from(addr.read() != 0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storages_follow_upstream_dispatch() {
        assert_eq!(Storage::of_static_type_index(ti::kTVMFFIAny), Some(Storage::Any));
        assert_eq!(Storage::of_static_type_index(ti::kTVMFFINone), Some(Storage::Any));
        assert_eq!(Storage::of_static_type_index(ti::kTVMFFIBool), Some(Storage::Bool));
        assert_eq!(Storage::of_static_type_index(ti::kTVMFFIArray), Some(Storage::ObjectRef));
        assert_eq!(Storage::of_static_type_index(ti::kTVMFFIRawStr), None);
        assert_eq!(Storage::of_static_type_index(ti::kTVMFFISmallStr), None);
        assert_eq!(Storage::of_static_type_index(-2), None);
    }

    #[test]
    fn reads_without_the_getter_give_what_the_getter_gives() {
        let values = [
            (Storage::Int, Any::from(-7i64)),
            (Storage::Float, Any::from(2.5)),
            (Storage::Bool, Any::from(true)),
            (Storage::Any, Any::from(41i64)),
            (Storage::Any, Any::none()),
            (Storage::ObjectRef, Any::none()),
        ];
        for (storage, value) in values {
            let mut bytes = [0u8; 16];
            let addr = bytes.as_mut_ptr();
            // SAFETY: a 16-byte zeroed buffer is a field of every storage;
            // the Any storage is emptied again before the buffer goes.
            unsafe {
                storage.write(addr, value.clone()).unwrap();
                let field = TVMFFIFieldInfo { getter: Some(storage.getter()), ..std::mem::zeroed() };
                let direct = read_without_getter(&field, addr).expect("one of this module's getters");
                let mut out = TVMFFIAny::NONE;
                assert_eq!((storage.getter())(addr as *mut c_void, &mut out), 0);
                let through_getter = Any::from_raw_owned(out);
                assert!(direct.same_value(&through_getter), "{storage:?}");
                assert!(direct.same_value(&value), "{storage:?}");
            }
        }
        // A getter of another module's is left to the caller.
        unsafe extern "C" fn foreign(_: *mut c_void, _: *mut TVMFFIAny) -> c_int {
            0
        }
        // SAFETY: an all-zero field info with a getter is a valid record.
        let field = TVMFFIFieldInfo { getter: Some(foreign), ..unsafe { std::mem::zeroed() } };
        // SAFETY: the read is refused before the address is touched.
        assert!(unsafe { read_without_getter(&field, std::ptr::null()) }.is_none());
    }

    #[test]
    fn writes_convert_and_reads_give_back() {
        let mut bytes = [0u8; 16];
        let addr = bytes.as_mut_ptr();
        // SAFETY: a 16-byte zeroed buffer is a field of every storage.
        unsafe {
            Storage::Float.write(addr, Any::from(3i64)).unwrap();
            let mut out = TVMFFIAny::NONE;
            assert_eq!(get_float(addr as *mut c_void, &mut out), 0);
            assert_eq!(Any::from_raw_owned(out).get::<f64>().unwrap(), 3.0);
            let e = Storage::Int.write(addr, Any::from(1.5)).unwrap_err();
            assert_eq!((e.kind(), e.message()), ("TypeError", "Cannot convert from type `float` to `int`"));
            Storage::Bool.write(addr, Any::from(7i64)).unwrap();
            assert_eq!(bytes[0], 1);
        }
    }
}
