//! Registering a type's reflected fields and methods with the values they
//! hold: the type table stores the records, and this module keeps the
//! values they point to (a field's default or default factory, a function
//! setter, a method) alive for the life of the process, as the records do.

use parking_lot::Mutex;

use crate::abi::{field_flag, type_index as ti, TVMFFIAny, TVMFFIAnyValue, TVMFFIFieldInfo, TVMFFIMethodInfo};
use crate::types::type_registry;
use crate::values::any::Any;
use crate::values::error::Error;

/// Values held by registered field and method records. Types are never
/// unregistered, so neither are these.
static HELD: Mutex<Vec<Any>> = Mutex::new(Vec::new());

/// Register a reflected field. Strings are copied; the default value and a
/// function setter are retained.
pub fn register_field(index: i32, info: &TVMFFIFieldInfo) -> Result<(), Error> {
    let mut held = Vec::new();
    let mut rec = *info;
    if info.flags & field_flag::kHasDefault != 0 {
        let default = Any::from_view(&info.default_value_or_factory)?;
        // The record holds the retained copy, which `held` keeps alive.
        rec.default_value_or_factory = *default.as_raw();
        held.push(default);
    }
    if info.flags & field_flag::kSetterIsFunctionObj != 0 && !info.setter.is_null() {
        let setter = TVMFFIAny { type_index: ti::kTVMFFIFunction, small_str_len: 0, value: TVMFFIAnyValue { v_ptr: info.setter } };
        held.push(Any::from_view(&setter)?);
    }
    type_registry::register_field(index, &rec)?;
    HELD.lock().extend(held);
    Ok(())
}

/// Register a reflected method (its function value is retained).
pub fn register_method(index: i32, info: &TVMFFIMethodInfo) -> Result<(), Error> {
    let method = Any::from_view(&info.method)?;
    let rec = TVMFFIMethodInfo { method: *method.as_raw(), ..*info };
    type_registry::register_method(index, &rec)?;
    HELD.lock().push(method);
    Ok(())
}
