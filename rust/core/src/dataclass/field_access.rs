//! Reading and writing the fields of run-time dataclass instances: the
//! generic get/set through a field's registered getter and setter, the
//! getter each slot kind registers, and the setter Function that checks a
//! value against the field's declared type before storing it. The slot
//! layout and its invariants are the parent module's.

use std::ffi::{c_int, c_void};

use crate::abi::{field_flag, type_index as ti, TVMFFIAny, TVMFFIFieldInfo, TVMFFIObject};
use crate::object::ObjectRef;
use crate::types::type_registry;
use crate::values::any::{Any, AnyView};
use crate::values::error::{self, Error};
use crate::values::function::Function;

use super::field_lock;
use super::layout::{FieldKind, FieldSpec};

/// Read a reflected field of any object through its getter.
pub fn get_field(obj: &ObjectRef, f: &TVMFFIFieldInfo) -> Result<Any, Error> {
    let getter = f.getter.ok_or_else(|| Error::attribute_error("field has no getter"))?;
    let mut out = TVMFFIAny::NONE;
    // SAFETY: the field belongs to the object's type (callers look it up
    // from the object's own type index), so the address is inside it.
    let rc = unsafe { getter((obj.as_ptr() as *mut u8).add(f.offset as usize) as *mut c_void, &mut out) };
    if rc != 0 {
        return Err(error::take_raised_or_unknown(rc));
    }
    // SAFETY: getters hand back an owned value.
    Ok(unsafe { Any::from_raw_owned(out) })
}

/// Write a reflected field of any object through its setter.
pub fn set_field(obj: &ObjectRef, f: &TVMFFIFieldInfo, value: &TVMFFIAny) -> Result<(), Error> {
    // SAFETY: as in `get_field`.
    let addr = unsafe { (obj.as_ptr() as *mut u8).add(f.offset as usize) as *mut c_void };
    if f.setter.is_null() {
        return Err(Error::attribute_error("field has no setter"));
    }
    if f.flags & field_flag::kSetterIsFunctionObj != 0 {
        let args = [Any::opaque_ptr(addr), Any::from_view(value)?];
        // SAFETY: the registry keeps the setter Function alive.
        unsafe { crate::values::function::call_raw(f.setter as *mut TVMFFIObject, args.as_ptr() as *const TVMFFIAny, 2) }?;
        Ok(())
    } else {
        // SAFETY: a plain setter function pointer for this field.
        let setter: crate::abi::TVMFFIFieldSetter = unsafe { std::mem::transmute(f.setter) };
        // SAFETY: address inside the object, per above.
        let rc = unsafe { setter(addr, value) };
        if rc != 0 {
            return Err(error::take_raised_or_unknown(rc));
        }
        Ok(())
    }
}

pub(super) fn getter_for(kind: FieldKind) -> crate::abi::TVMFFIFieldGetter {
    match kind {
        FieldKind::Any | FieldKind::Str => get_any_slot,
        FieldKind::Int => get_int_slot,
        FieldKind::Float => get_float_slot,
        FieldKind::Bool => get_bool_slot,
        FieldKind::Object(_) => get_object_slot,
    }
}

unsafe extern "C" fn get_any_slot(field: *mut c_void, out: *mut TVMFFIAny) -> c_int {
    // SAFETY: `field` is an initialised Any slot (module invariant); the
    // read takes its reference under the field's lock.
    write_out(Ok(unsafe { field_lock::clone_any(field as *const u8) }), out)
}
unsafe extern "C" fn get_int_slot(field: *mut c_void, out: *mut TVMFFIAny) -> c_int {
    // SAFETY: an i64 slot.
    write_out(Ok(Any::from(unsafe { *(field as *const i64) })), out)
}
unsafe extern "C" fn get_float_slot(field: *mut c_void, out: *mut TVMFFIAny) -> c_int {
    // SAFETY: an f64 slot.
    write_out(Ok(Any::from(unsafe { *(field as *const f64) })), out)
}
unsafe extern "C" fn get_bool_slot(field: *mut c_void, out: *mut TVMFFIAny) -> c_int {
    // SAFETY: an i64 0/1 slot.
    write_out(Ok(Any::from(unsafe { *(field as *const i64) } != 0)), out)
}
unsafe extern "C" fn get_object_slot(field: *mut c_void, out: *mut TVMFFIAny) -> c_int {
    // SAFETY: an object pointer slot owning its reference when non-NULL;
    // the read takes its own under the field's lock.
    let v = unsafe { field_lock::clone_object(field as *const u8) }.map_or_else(Any::none, Any::from_object);
    write_out(Ok(v), out)
}

fn write_out(v: Result<Any, Error>, out: *mut TVMFFIAny) -> c_int {
    match v {
        Ok(v) if !out.is_null() => {
            // SAFETY: the caller's result slot.
            unsafe { *out = v.into_raw() };
            0
        }
        Ok(_) => {
            error::set_raised(Error::value_error("field getter called with a NULL result slot"));
            -1
        }
        Err(e) => {
            error::set_raised(e);
            -1
        }
    }
}

/// The checked setter of one field: `setter(field_addr, value)`.
pub(super) fn make_setter(type_key: &str, f: &FieldSpec) -> Result<Function, Error> {
    let kind = f.kind;
    let what = format!("field {:?} of {type_key}", f.name);
    Function::from_closure(move |args| {
        let addr = match args.first().map(|a| (a.type_index(), a)) {
            // SAFETY: reading the pointer payload of an opaque-pointer value.
            Some((ti::kTVMFFIOpaquePtr, a)) => (unsafe { a.as_raw().value.v_ptr }) as *mut u8,
            _ => return Err(Error::type_error(format!("setter of {what} needs the field address first"))),
        };
        let value = args.get(1).ok_or_else(|| Error::type_error(format!("setter of {what} needs a value")))?;
        // SAFETY: `addr` is the slot of this field in a live instance (the
        // address comes from `set_field` or the ABI's field-setter protocol).
        unsafe { store_slot(kind, addr, value, || what.clone())? };
        Ok(Any::none())
    })
}

/// Store `value` in a slot of `kind`, with the type checks of the field's
/// setter (this is its body; the generated constructor calls it directly
/// for run-time types). `what` names the field in an error.
///
/// # Safety
/// `addr` is an initialised slot of `kind` in a live instance.
pub(crate) unsafe fn store_slot(kind: FieldKind, addr: *mut u8, value: &AnyView<'_>, what: impl Fn() -> String) -> Result<(), Error> {
    let bad = || Error::type_error(format!("{} expects {}, got {}", what(), kind.describe(), value.type_key()));
    // SAFETY: per the caller.
    unsafe {
        match kind {
            FieldKind::Any => replace_any(addr, value.to_owned()?),
            FieldKind::Str => match value.type_index() {
                ti::kTVMFFIStr | ti::kTVMFFISmallStr | ti::kTVMFFIRawStr | ti::kTVMFFINone => {
                    replace_any(addr, value.to_owned()?)
                }
                _ => return Err(bad()),
            },
            FieldKind::Int => match value.type_index() {
                ti::kTVMFFIInt | ti::kTVMFFIBool => *(addr as *mut i64) = value.as_raw().value.v_int64,
                _ => return Err(bad()),
            },
            FieldKind::Bool => match value.type_index() {
                ti::kTVMFFIInt | ti::kTVMFFIBool => *(addr as *mut i64) = (value.as_raw().value.v_int64 != 0) as i64,
                _ => return Err(bad()),
            },
            FieldKind::Float => *(addr as *mut f64) = value.get::<f64>().map_err(|_| bad())?,
            FieldKind::Object(t) => {
                let new = if value.type_index() == ti::kTVMFFINone {
                    std::ptr::null_mut()
                } else {
                    let o = value.get::<ObjectRef>().map_err(|_| bad())?;
                    if !type_registry::is_instance(o.type_index(), t) {
                        return Err(bad());
                    }
                    o.into_raw()
                };
                // Released after the locked swap.
                drop(field_lock::swap_object(addr, new));
            }
        }
    }
    Ok(())
}

/// # Safety
/// `addr` must be an initialised Any slot.
unsafe fn replace_any(addr: *mut u8, v: Any) {
    // SAFETY: per the caller; the old value is released after the locked swap.
    drop(unsafe { field_lock::swap_any(addr, v) });
}

