//! The globals through which a frontend defines object classes whose
//! fields live in TVM-FFI's native layouts (upstream's Python `py_class`):
//!
//! * `ffi.MakeFieldGetter(field_static_type_index) -> int` — the address of
//!   a C `TVMFFIFieldGetter` for a field of that type (see `native_field`);
//! * `ffi.MakeFieldSetter(field_static_type_index, converter, convert_fn)`
//!   — a setter Function (`kTVMFFIFieldFlagBitSetterIsFunctionObj`: called
//!   as `setter(field_address, value)`) that passes the value through the C
//!   callback `convert_fn(converter, &value, &result)` (0 with an owned
//!   result, or -1 with the error raised) and stores the result with the
//!   conversion the field's C++ type gets upstream;
//! * `ffi._PyClassRegisterTypeAttrColumns(type_index, total_size)` — the
//!   type attributes `__ffi_init__` (the generated constructor, see
//!   `auto_init`), `__ffi_new__` (a zero-filled instance of `total_size`
//!   bytes) and `__ffi_shallow_copy__` (a new instance sharing the field
//!   values).
//!
//! Instances come from the allocator registry, so frontends tie and free
//! them like every other object; their deleter releases the Any and object
//! fields of the type's reflected fields (parents' included) and returns
//! the block. The converter pointer is borrowed: its owner keeps it alive
//! as long as the setter.
//!
//! SAFETY invariants of this module: an object whose deleter is
//! [`py_class_deleter`] was allocated by [`new_instance`] for a type
//! recorded in `LAYOUTS` with its `total_size`, zero-filled, and every
//! reflected field of its type that lies inside `[header, total_size)` is
//! a field of the storage `Ownership::of_field` names; convert functions
//! have the C signature [`ConvertFn`].

use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::ptr::NonNull;
use std::sync::OnceLock;

use parking_lot::RwLock;

use super::native_field::{Ownership, Storage};
use crate::abi::{
    kTVMFFIObjectDeleterFlagBitMaskStrong, kTVMFFIObjectDeleterFlagBitMaskWeak, type_index as ti, TVMFFIAny,
    TVMFFIFieldInfo, TVMFFIObject,
};
use crate::object::alloc_header;
use crate::values::any::{Any, AnyView};
use crate::values::error::{self, Error};
use crate::values::function::Function;
use crate::object::ObjectRef;
use crate::containers::typed_args::Sig;
use crate::types::type_registry::{self, type_key_of};

/// `int (*)(void* converter, const TVMFFIAny* value, TVMFFIAny* result)`:
/// 0 with an owned value in `result`, or nonzero with the error raised.
pub type ConvertFn = unsafe extern "C" fn(*mut c_void, *const TVMFFIAny, *mut TVMFFIAny) -> c_int;

const HEADER_SIZE: usize = std::mem::size_of::<TVMFFIObject>();

/// The attributes `_PyClassRegisterTypeAttrColumns` registers, in
/// upstream's order.
const ATTRS: [&str; 3] = ["__ffi_init__", "__ffi_new__", "__ffi_shallow_copy__"];

/// A registered Python-defined layout.
#[derive(Clone, Copy, Debug)]
struct Layout {
    type_index: i32,
    total_size: usize,
    alignment: usize,
}

fn layouts() -> &'static RwLock<HashMap<i32, Layout>> {
    static LAYOUTS: OnceLock<RwLock<HashMap<i32, Layout>>> = OnceLock::new();
    LAYOUTS.get_or_init(|| RwLock::new(HashMap::new()))
}

/// The reflected fields of `type_index` (parents' first) that lie inside
/// an instance of `total_size` bytes, with their offsets and what they own.
fn owned_fields(type_index: i32, total_size: usize) -> Vec<(usize, Ownership)> {
    type_registry::all_fields(type_index)
        .into_iter()
        .filter_map(|f| {
            let own = Ownership::of_field(f);
            let offset = usize::try_from(f.offset).ok()?;
            (offset >= HEADER_SIZE && offset.checked_add(own.size())? <= total_size).then_some((offset, own))
        })
        .collect()
}

/// A new zero-filled instance: every field zero, None or NULL.
fn new_instance(layout: &Layout) -> Result<ObjectRef, Error> {
    let body = alloc_header::allocate_body(layout.total_size, layout.alignment, layout.type_index).map_err(|_| {
        Error::runtime_error(format!(
            "Failed to allocate {} bytes for type {}",
            layout.total_size,
            type_key_of(layout.type_index)
        ))
    })?;
    // SAFETY: `total_size` writable bytes were just allocated; zero bytes
    // are a constructed value of every field storage (module invariant of
    // `native_field`), and the header is initialised before the object is
    // handed out with its one reference.
    unsafe {
        std::ptr::write_bytes(body.as_ptr(), 0, layout.total_size);
        let obj = alloc_header::init_header(body, layout.type_index, py_class_deleter);
        Ok(ObjectRef::from_raw_owned(NonNull::new_unchecked(obj)))
    }
}

/// A new instance of `layout`'s type holding the same field values as
/// `src` (an instance of that type or a subtype): plain bytes copied,
/// Any and object fields sharing the values with new references.
fn shallow_copy(layout: &Layout, src: &ObjectRef) -> Result<ObjectRef, Error> {
    let copy = new_instance(layout)?;
    let (dst_base, src_base) = (copy.as_ptr() as *mut u8, src.as_ptr() as *const u8);
    for (offset, own) in owned_fields(layout.type_index, layout.total_size) {
        // SAFETY: `src` is an instance of the type or a subtype, so it has
        // the type's fields at the same offsets (single inheritance
        // extends a layout); `copy` is zero-filled with the type's layout.
        unsafe { own.copy(dst_base.add(offset), src_base.add(offset))? };
    }
    Ok(copy)
}

unsafe extern "C" fn py_class_deleter(ptr: *mut c_void, flags: c_int) {
    if flags & kTVMFFIObjectDeleterFlagBitMaskStrong != 0 {
        // SAFETY: the deleter is called with the object (module invariant).
        let index = unsafe { (*(ptr as *const TVMFFIObject)).type_index };
        let total_size = layouts().read().get(&index).map(|l| l.total_size);
        if let Some(total_size) = total_size {
            for (offset, own) in owned_fields(index, total_size) {
                // SAFETY: a field inside the instance, of this ownership
                // (module invariant); it is left zero/None.
                unsafe { own.release((ptr as *mut u8).add(offset)) };
            }
        }
    }
    if flags & kTVMFFIObjectDeleterFlagBitMaskWeak != 0 {
        // SAFETY: the block came from the allocator registry and no
        // reference is left.
        unsafe { alloc_header::free_body(ptr) };
    }
}

/// Argument `i` of a typed global as a C `int32_t` (truncated, as
/// upstream's conversion of an int to `int32_t` does).
fn int32(sig: &Sig, args: &[AnyView<'_>], i: usize) -> Result<i32, Error> {
    Ok(sig.int(args, i)? as i32)
}

/// A global with a typed signature (see [`Sig::into_global`]).
fn typed(sig: Sig, body: fn(&Sig, &[AnyView<'_>]) -> Result<Any, Error>) -> (&'static str, Result<Function, Error>) {
    sig.into_global(body)
}

/// `ffi.MakeFieldGetter(field_static_type_index: int) -> int`.
fn make_field_getter(sig: &Sig, args: &[AnyView<'_>]) -> Result<Any, Error> {
    let index = int32(sig, args, 0)?;
    let storage = Storage::of_static_type_index(index)
        .ok_or_else(|| Error::value_error(format!("Unsupported field type index for getter: {index}")))?;
    Ok(Any::from(storage.getter() as usize as i64))
}

/// `ffi.MakeFieldSetter(field_static_type_index: int, converter: int,
/// convert_fn: int) -> ffi.Function`.
fn make_field_setter(sig: &Sig, args: &[AnyView<'_>]) -> Result<Any, Error> {
    let index = int32(sig, args, 0)?;
    // A borrowed context pointer, opaque here (kept as an integer so the
    // closure is Send and Sync).
    let converter = sig.int(args, 1)? as usize;
    let convert_addr = sig.int(args, 2)? as usize;
    let storage = Storage::of_static_type_index(index)
        .ok_or_else(|| Error::value_error(format!("Unsupported field type index for setter: {index}")))?;
    if convert_addr == 0 {
        return Err(Error::value_error("ffi.MakeFieldSetter: convert_fn is NULL"));
    }
    // SAFETY: the caller passes the address of a function with the
    // `ConvertFn` signature (the protocol of this global); it is non-NULL
    // and code pointers are address-sized here.
    let convert = unsafe { std::mem::transmute::<usize, ConvertFn>(convert_addr) };
    let setter = Function::from_closure(move |args| {
        set_field(storage, converter as *mut c_void, convert, args)?;
        Ok(Any::none())
    })?;
    Ok(Any::from_object(setter.into_object()))
}

/// One call of a setter made by `ffi.MakeFieldSetter`:
/// `setter(field_address, value)`.
fn set_field(storage: Storage, converter: *mut c_void, convert: ConvertFn, args: &[AnyView<'_>]) -> Result<(), Error> {
    if args.len() != 2 {
        return Err(Error::type_error(format!(
            "a field setter takes 2 arguments (the field address and the value), got {}",
            args.len()
        )));
    }
    let addr = field_address(&args[0])?;
    let mut converted = TVMFFIAny::NONE;
    // SAFETY: `convert` has the ConvertFn signature (module invariant); the
    // value is the caller's view, alive for the call, and `converted` a
    // writable slot.
    let rc = unsafe { convert(converter, args[1].as_raw(), &mut converted) };
    if rc != 0 {
        return Err(error::take_raised_or_unknown(rc));
    }
    let value = take_converted(converted)?;
    // SAFETY: the setter protocol passes the address of the field this
    // setter was made for, inside a live object.
    unsafe { storage.write(addr as *mut u8, value) }
}

/// The field address a `kSetterIsFunctionObj` setter is called with
/// (an opaque pointer; NULL and other values refused).
pub(super) fn field_address(arg: &AnyView<'_>) -> Result<*mut c_void, Error> {
    let addr = match arg.type_index() {
        ti::kTVMFFINone => std::ptr::null_mut(),
        // SAFETY: an opaque pointer carries v_ptr.
        ti::kTVMFFIOpaquePtr => unsafe { arg.as_raw().value.v_ptr },
        _ => {
            return Err(Error::type_error(format!(
                "Cannot convert from type `{}` to `void*`",
                type_key_of(arg.type_index())
            )))
        }
    };
    if addr.is_null() {
        return Err(Error::value_error("a field setter was called with a NULL field address"));
    }
    Ok(addr)
}

/// Whether `type_index` has a layout registered by
/// `_PyClassRegisterTypeAttrColumns` (its instances can be made).
pub(super) fn has_layout(type_index: i32) -> bool {
    layouts().read().contains_key(&type_index)
}

/// Own the converter's result, refusing values that would break `Any`'s
/// invariant (an object index without an object, an oversized small string).
fn take_converted(raw: TVMFFIAny) -> Result<Any, Error> {
    let index = raw.type_index;
    // SAFETY: reading the payload union per the type index.
    if index >= ti::kTVMFFIStaticObjectBegin && unsafe { raw.value.v_obj }.is_null() {
        return Err(Error::value_error(format!(
            "the field converter returned a `{}` value holding NULL",
            type_key_of(index)
        )));
    }
    if matches!(index, ti::kTVMFFISmallStr | ti::kTVMFFISmallBytes) && raw.small_str_len > 7 {
        return Err(Error::value_error(format!(
            "the field converter returned a small string of {} bytes (at most 7 fit)",
            raw.small_str_len
        )));
    }
    // SAFETY: checked above; the converter hands over its reference.
    Ok(unsafe { Any::from_raw_owned(raw) })
}

/// `ffi._PyClassRegisterTypeAttrColumns(type_index: int, total_size: int)`.
fn register_type_attr_columns(sig: &Sig, args: &[AnyView<'_>]) -> Result<Any, Error> {
    let type_index = int32(sig, args, 0)?;
    let total_size = int32(sig, args, 1)?;
    register(type_index, total_size)?;
    Ok(Any::none())
}

/// Check `type_index` and `total_size` against the type's fields, then
/// register the three attributes.
pub(super) fn register(type_index: i32, total_size: i32) -> Result<(), Error> {
    if type_registry::type_info(type_index).is_none() {
        return Err(Error::new(
            "InternalError",
            format!("Check failed: (entry != nullptr) is false: Cannot find type info for type_index={type_index}"),
        ));
    }
    let key = type_key_of(type_index);
    let what = "ffi._PyClassRegisterTypeAttrColumns";
    if type_index < ti::kTVMFFIDynObjectBegin {
        return Err(Error::value_error(format!(
            "{what}: type `{key}` (index {type_index}) is not a type allocated at run time"
        )));
    }
    let total = usize::try_from(total_size).ok().filter(|&t| t >= HEADER_SIZE).ok_or_else(|| {
        Error::value_error(format!(
            "{what}: total_size {total_size} of `{key}` is smaller than the object header ({HEADER_SIZE} bytes)"
        ))
    })?;
    let mut alignment = 8usize;
    for f in type_registry::all_fields(type_index) {
        check_field(f, &key, total)?;
        if let Ok(a) = usize::try_from(f.alignment) {
            if a.is_power_of_two() {
                alignment = alignment.max(a);
            }
        }
    }
    if alignment > alloc_header::MAX_ALIGNMENT {
        return Err(Error::value_error(format!(
            "{what}: `{key}` needs alignment {alignment}, more than the allocator serves"
        )));
    }
    for name in ATTRS {
        if crate::reflection::attr_columns::attr_value(type_index, name.as_bytes()).is_some() {
            return Err(Error::runtime_error(format!(
                "TypeAttr `{name}` is already registered for type index {type_index}. To update the stored value, \
                 register a mutable container (e.g., Dict/List) once and mutate it in place on subsequent calls."
            )));
        }
    }
    let layout = Layout { type_index, total_size: total, alignment };
    layouts().write().insert(type_index, layout);

    super::auto_init::register_init(type_index)?;
    let new_fn = Function::from_closure(move |args| {
        Sig { name: "", params: &[], ret: "ffi.Object" }.check_count(args)?;
        Ok(Any::from_object(new_instance(&layout)?))
    })?;
    crate::reflection::attr_columns::register_attr(type_index, ATTRS[1].as_bytes(), Any::from_object(new_fn.into_object()).as_raw())?;
    let copy_fn = Function::from_closure(move |args| {
        let sig = Sig { name: "", params: &["ffi.Object"], ret: "ffi.Object" };
        sig.check_count(args)?;
        if args[0].type_index() < ti::kTVMFFIStaticObjectBegin {
            return Err(sig.mismatch(args, 0));
        }
        let src = args[0].get::<ObjectRef>()?;
        if !type_registry::is_instance(src.type_index(), layout.type_index) {
            return Err(Error::type_error(format!(
                "Mismatched type on argument #0 when calling: `(0: ffi.Object) -> ffi.Object`. Expected `{}` but got `{}`",
                type_key_of(layout.type_index),
                type_key_of(src.type_index())
            )));
        }
        Ok(Any::from_object(shallow_copy(&layout, &src)?))
    })?;
    crate::reflection::attr_columns::register_attr(type_index, ATTRS[2].as_bytes(), Any::from_object(copy_fn.into_object()).as_raw())?;
    Ok(())
}

/// A registered field must lie between the object header and `total`.
fn check_field(f: &TVMFFIFieldInfo, key: &str, total: usize) -> Result<(), Error> {
    let size = Ownership::of_field(f).size().max(usize::try_from(f.size).unwrap_or(0));
    let inside = usize::try_from(f.offset)
        .ok()
        .filter(|&o| o >= HEADER_SIZE)
        .and_then(|o| o.checked_add(size))
        .is_some_and(|end| end <= total);
    if inside {
        return Ok(());
    }
    Err(Error::value_error(format!(
        "ffi._PyClassRegisterTypeAttrColumns: field `{}` of `{key}` (offset {}, size {size}) lies outside the \
         {total} bytes of total_size",
        super::field_name(f),
        f.offset
    )))
}

/// The three globals, for the registry to install at start-up.
pub(crate) fn globals() -> Vec<(&'static str, Result<Function, Error>)> {
    vec![
        typed(Sig { name: "ffi.MakeFieldGetter", params: &["int"], ret: "int" }, make_field_getter),
        typed(Sig { name: "ffi.MakeFieldSetter", params: &["int", "int", "int"], ret: "ffi.Function" }, make_field_setter),
        typed(
            Sig { name: "ffi._PyClassRegisterTypeAttrColumns", params: &["int", "int"], ret: "void" },
            register_type_attr_columns,
        ),
    ]
}
