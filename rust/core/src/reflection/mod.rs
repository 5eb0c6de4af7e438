//! The reflection layer (`reflection/`): this builder, the attribute columns
//! (`attr_columns`), the values field and method records hold
//! (`type_members`), native hooks and the structural kinds. It may name the
//! values, objects and the type table below it, never containers or above.
//!
//! Reflection for Rust-defined object types: register fields (with typed
//! getters and setters generated per field type), methods, metadata and
//! the type attributes TVM-FFI's `ObjectDef` derives from a C++ class —
//! `__ffi_new__` and the metadata's creator for a default-constructible
//! type ([`DefaultObject`]), `__ffi_shallow_copy__` for a copyable one
//! ([`ShallowCopy`]), `__ffi_type_final__` from its finality.
//!
//! ```
//! use tether_core::abi::TVMFFIObject;
//! use tether_core::object::header_placeholder;
//! use tether_core::reflection::TypeBuilder;
//! use tether_core::types::type_registry;
//! use tether_core::{dataclass, ObjectPtr, ObjectType};
//!
//! #[repr(C)]
//! struct Point { header: TVMFFIObject, x: i64, y: f64 }
//! tether_core::object_type!(Point, "doc.reflect.Point");
//!
//! TypeBuilder::<Point>::new()
//!     .field::<i64>("x", std::mem::offset_of!(Point, x)).unwrap()
//!     .field::<f64>("y", std::mem::offset_of!(Point, y)).unwrap();
//! let p = ObjectPtr::new(Point { header: header_placeholder(), x: 3, y: 0.5 }).unwrap().into_object_ref();
//! let fx = type_registry::find_field(Point::type_index(), "x").unwrap();
//! assert_eq!(dataclass::get_field(&p, fx).unwrap().get::<i64>().unwrap(), 3);
//! ```

pub mod attr_columns;
pub(crate) mod native_hook;
pub mod structural_kind;
pub mod type_members;

use std::ffi::{c_int, c_void};
use std::marker::PhantomData;

use crate::abi::{
    field_flag, type_index as ti, TVMFFIAny, TVMFFIByteArray, TVMFFIFieldInfo, TVMFFIMethodInfo, TVMFFIObjectHandle,
    TVMFFITypeMetadata,
};
use crate::values::any::{Any, FromAny};
use crate::values::error::{self, Error};
use crate::values::function::{arg, Function};
use crate::object::{ObjectPtr, ObjectRef, ObjectType};
use crate::types::type_registry;

/// A Rust type that can be stored in a reflected field.
pub trait FieldValue: Sized + 'static {
    /// The field's static type index (`kTVMFFIAny` when unconstrained).
    const STATIC_TYPE_INDEX: i32;
    fn read(&self) -> Any;
    fn write(&mut self, v: &TVMFFIAny) -> Result<(), Error>;
}

impl FieldValue for i64 {
    const STATIC_TYPE_INDEX: i32 = ti::kTVMFFIInt;
    fn read(&self) -> Any {
        Any::from(*self)
    }
    fn write(&mut self, v: &TVMFFIAny) -> Result<(), Error> {
        *self = i64::from_any(v)?;
        Ok(())
    }
}

/// A 32-bit integer field (a C++ `int32_t` or `int32_t`-based enum).
impl FieldValue for i32 {
    const STATIC_TYPE_INDEX: i32 = ti::kTVMFFIInt;
    fn read(&self) -> Any {
        Any::from(*self as i64)
    }
    fn write(&mut self, v: &TVMFFIAny) -> Result<(), Error> {
        *self = i32::from_any(v)?;
        Ok(())
    }
}

impl FieldValue for f64 {
    const STATIC_TYPE_INDEX: i32 = ti::kTVMFFIFloat;
    fn read(&self) -> Any {
        Any::from(*self)
    }
    fn write(&mut self, v: &TVMFFIAny) -> Result<(), Error> {
        *self = f64::from_any(v)?;
        Ok(())
    }
}

impl FieldValue for bool {
    const STATIC_TYPE_INDEX: i32 = ti::kTVMFFIBool;
    fn read(&self) -> Any {
        Any::from(*self)
    }
    fn write(&mut self, v: &TVMFFIAny) -> Result<(), Error> {
        *self = bool::from_any(v)?;
        Ok(())
    }
}

impl FieldValue for Any {
    const STATIC_TYPE_INDEX: i32 = ti::kTVMFFIAny;
    fn read(&self) -> Any {
        self.clone()
    }
    fn write(&mut self, v: &TVMFFIAny) -> Result<(), Error> {
        *self = Any::from_view(v)?;
        Ok(())
    }
}

/// An optional object (TVM-FFI's `Optional<T>` fields declare no static type).
impl FieldValue for Option<ObjectRef> {
    const STATIC_TYPE_INDEX: i32 = ti::kTVMFFIAny;
    fn read(&self) -> Any {
        self.clone().into()
    }
    fn write(&mut self, v: &TVMFFIAny) -> Result<(), Error> {
        *self = Option::<ObjectRef>::from_any(v)?;
        Ok(())
    }
}

unsafe extern "C" fn field_getter<F: FieldValue>(field: *mut c_void, out: *mut TVMFFIAny) -> c_int {
    if out.is_null() || field.is_null() {
        error::set_raised(Error::value_error("field getter called with a NULL pointer"));
        return -1;
    }
    // SAFETY: registered for a field of type F at this address.
    let v = unsafe { (*(field as *const F)).read() };
    // SAFETY: the caller's result slot.
    unsafe { *out = v.into_raw() };
    0
}

unsafe extern "C" fn field_setter<F: FieldValue>(field: *mut c_void, value: *const TVMFFIAny) -> c_int {
    if value.is_null() || field.is_null() {
        error::set_raised(Error::value_error("field setter called with a NULL pointer"));
        return -1;
    }
    // SAFETY: registered for a field of type F at this address; the ABI
    // leaves synchronisation of field writes to the caller.
    match unsafe { (*(field as *mut F)).write(&*value) } {
        Ok(()) => 0,
        Err(e) => {
            error::set_raised(e);
            -1
        }
    }
}

/// An object type TVM-FFI's runtime can default-construct: its `ObjectDef`
/// registers `__ffi_new__` and a metadata creator for such a class.
pub trait DefaultObject: ObjectType + Sized {
    /// A new instance with every field at its default.
    fn default_object() -> Self;
}

/// An object type TVM-FFI's runtime can copy: its `ObjectDef` registers
/// `__ffi_shallow_copy__` for a copy-constructible class.
pub trait ShallowCopy: ObjectType + Sized {
    /// A new instance (fresh header) sharing this one's field values.
    fn shallow_copy(&self) -> Self;
}

/// `TVMFFITypeMetadata.creator` of a [`DefaultObject`].
unsafe extern "C" fn default_creator<T: DefaultObject>(out: *mut TVMFFIObjectHandle) -> c_int {
    if out.is_null() {
        error::set_raised(Error::value_error("object creator called with a NULL result pointer"));
        return -1;
    }
    match ObjectPtr::new(T::default_object()) {
        Ok(p) => {
            // SAFETY: the caller's result slot; the reference moves to it.
            unsafe { *out = p.into_object_ref().into_raw() as TVMFFIObjectHandle };
            0
        }
        Err(e) => {
            error::set_raised(e.into());
            -1
        }
    }
}

/// Registers reflection for `T`.
pub struct TypeBuilder<T: ObjectType> {
    index: i32,
    _t: PhantomData<T>,
}

impl<T: ObjectType> Default for TypeBuilder<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: ObjectType> TypeBuilder<T> {
    pub fn new() -> Self {
        TypeBuilder { index: T::type_index(), _t: PhantomData }
    }

    /// A writable field of Rust type `F` at byte `offset` inside `T`.
    pub fn field<F: FieldValue>(self, name: &str, offset: usize) -> Result<Self, Error> {
        self.field_with_flags::<F>(name, offset, field_flag::kWritable)
    }

    /// A read-only field.
    pub fn readonly_field<F: FieldValue>(self, name: &str, offset: usize) -> Result<Self, Error> {
        self.field_with_flags::<F>(name, offset, 0)
    }

    /// A read-only field whose default (for constructors) is None.
    pub fn readonly_field_default_none<F: FieldValue>(self, name: &str, offset: usize) -> Result<Self, Error> {
        self.field_with_flags::<F>(name, offset, field_flag::kHasDefault)
    }

    /// A read-only field declaring static type `static_type_index` (e.g. a
    /// container type) instead of its Rust type's.
    pub fn readonly_field_of_type<F: FieldValue>(self, name: &str, offset: usize, static_type_index: i32) -> Result<Self, Error> {
        self.field_record::<F>(name, offset, 0, static_type_index)
    }

    /// A field with explicit flags (`field_flag::*`) and static type index.
    pub fn field_full<F: FieldValue>(self, name: &str, offset: usize, flags: i64, static_type_index: i32) -> Result<Self, Error> {
        self.field_record::<F>(name, offset, flags, static_type_index)
    }

    fn field_with_flags<F: FieldValue>(self, name: &str, offset: usize, flags: i64) -> Result<Self, Error> {
        self.field_record::<F>(name, offset, flags, F::STATIC_TYPE_INDEX)
    }

    fn field_record<F: FieldValue>(self, name: &str, offset: usize, flags: i64, static_type_index: i32) -> Result<Self, Error> {
        if offset + std::mem::size_of::<F>() > std::mem::size_of::<T>() {
            return Err(Error::value_error(format!("field {name} at offset {offset} lies outside {}", T::TYPE_KEY)));
        }
        let info = TVMFFIFieldInfo {
            name: TVMFFIByteArray::from_slice(name.as_bytes()),
            doc: TVMFFIByteArray::EMPTY,
            metadata: TVMFFIByteArray::EMPTY,
            flags,
            size: std::mem::size_of::<F>() as i64,
            alignment: std::mem::align_of::<F>() as i64,
            offset: offset as i64,
            getter: Some(field_getter::<F>),
            setter: field_setter::<F> as *mut c_void,
            default_value_or_factory: TVMFFIAny::NONE,
            field_static_type_index: static_type_index,
        };
        crate::reflection::type_members::register_field(self.index, &info)?;
        Ok(self)
    }

    /// A method (its first argument is the object itself).
    pub fn method(self, name: &str, f: Function) -> Result<Self, Error> {
        self.method_with_flags(name, f, 0)
    }

    /// A static method (no object argument; frontends attach it to the class).
    pub fn static_method(self, name: &str, f: Function) -> Result<Self, Error> {
        self.method_with_flags(name, f, field_flag::kIsStaticMethod)
    }

    fn method_with_flags(self, name: &str, f: Function, flags: i64) -> Result<Self, Error> {
        // `value` keeps the function alive while the registry takes its own reference.
        let value = Any::from_object(f.into_object());
        let info = TVMFFIMethodInfo {
            name: TVMFFIByteArray::from_slice(name.as_bytes()),
            doc: TVMFFIByteArray::EMPTY,
            metadata: TVMFFIByteArray::EMPTY,
            flags,
            method: *value.as_raw(),
        };
        crate::reflection::type_members::register_method(self.index, &info)?;
        Ok(self)
    }

    /// The `__ffi_init__` constructor used by frontends.
    pub fn init(self, f: Function) -> Result<Self, Error> {
        crate::reflection::attr_columns::register_attr(self.index, b"__ffi_init__", Any::from_object(f.into_object()).as_raw())?;
        Ok(self)
    }

    /// Set type attribute `name` to `value`.
    pub fn attr(self, name: &str, value: Any) -> Result<Self, Error> {
        crate::reflection::attr_columns::register_attr(self.index, name.as_bytes(), value.as_raw())?;
        Ok(self)
    }

    /// Set type attribute `name` to a Function.
    pub fn fn_attr(self, name: &str, f: Function) -> Result<Self, Error> {
        self.attr(name, Any::from_object(f.into_object()))
    }

    /// `__ffi_type_final__`: whether the type forbids subtypes.
    pub fn type_final(self, is_final: bool) -> Result<Self, Error> {
        self.attr("__ffi_type_final__", Any::from(is_final))
    }

    /// Metadata with structural kind `kind` and no creator.
    pub fn metadata(self, kind: i32) -> Result<Self, Error> {
        self.metadata_record(kind, None)
    }

    /// Metadata with structural kind `kind`, no creator, and `total_size`
    /// (the size of the prefix that compiled code shares with this type).
    pub fn metadata_sized(self, kind: i32, total_size: usize) -> Result<Self, Error> {
        self.metadata_full(kind, None, total_size)
    }

    fn metadata_record(self, kind: i32, creator: Option<crate::abi::TVMFFIObjectCreator>) -> Result<Self, Error> {
        self.metadata_full(kind, creator, std::mem::size_of::<T>())
    }

    fn metadata_full(self, kind: i32, creator: Option<crate::abi::TVMFFIObjectCreator>, total_size: usize) -> Result<Self, Error> {
        type_registry::register_metadata(
            self.index,
            &TVMFFITypeMetadata {
                doc: TVMFFIByteArray::EMPTY,
                creator,
                total_size: total_size as i32,
                structural_eq_hash_kind: kind,
            },
        )?;
        Ok(self)
    }
}

impl<T: DefaultObject> TypeBuilder<T> {
    /// Metadata with structural kind `kind` whose creator makes a default
    /// instance, and `__ffi_new__` (the same, as a Function).
    pub fn metadata_with_creator(self, kind: i32) -> Result<Self, Error> {
        let new_fn = Function::from_closure(|_| Ok(Any::from_object(ObjectPtr::new(T::default_object())?.into_object_ref())))?;
        self.metadata_record(kind, Some(default_creator::<T>))?.fn_attr("__ffi_new__", new_fn)
    }
}

impl<T: ShallowCopy> TypeBuilder<T> {
    /// `__ffi_shallow_copy__`: a Function from an instance to a new one
    /// sharing its field values.
    pub fn shallow_copy(self) -> Result<Self, Error> {
        let copy_fn = Function::from_closure(|args| {
            let this = arg::<ObjectRef>(args, 0, "self")?.downcast::<T>()?;
            Ok(Any::from_object(ObjectPtr::new(this.shallow_copy())?.into_object_ref()))
        })?;
        self.fn_attr("__ffi_shallow_copy__", copy_fn)
    }
}
