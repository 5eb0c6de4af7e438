//! Reflection and function globals TVM-FFI registers for its frontends:
//! `ffi.GetRegisteredTypeKeys` (every type key, POD names included),
//! `ffi.MakeObjectFromPackedArgs` (an instance from its type and
//! alternating field names and values, fields without a value taking their
//! defaults) and `ffi.FunctionFromExternC` (a Function over a C callback),
//! with TVM-FFI's argument checking and messages.

use std::ffi::c_void;

use crate::abi::{field_flag, type_index as ti, TVMFFISafeCallType};
use crate::values::any::{Any, AnyView};
use crate::containers::Array;
use crate::values::error::Error;
use crate::values::function::Function;
use crate::object::ObjectRef;
use crate::containers::typed_args::Sig;
use crate::types::type_registry::{self, type_key_of};

type Global = (&'static str, Result<Function, Error>);

/// A global with a typed signature (see [`Sig::into_global`]).
fn typed(sig: Sig, body: fn(&Sig, &[AnyView<'_>]) -> Result<Any, Error>) -> (&'static str, Result<Function, Error>) {
    sig.into_global(body)
}

fn cannot_convert(v: &AnyView<'_>, to: &str) -> Error {
    Error::type_error(format!("Cannot convert from type `{}` to `{to}`", type_key_of(v.type_index())))
}

/// A new instance of `type_index` before its fields are set: the type's
/// creator, else its `__ffi_new__`.
fn create_empty(type_index: i32) -> Result<ObjectRef, Error> {
    if type_registry::type_info(type_index).is_none() {
        return Err(Error::runtime_error(format!(
            "Check failed: (entry != nullptr) is false: Cannot find type info for type_index={type_index}"
        )));
    }
    crate::dataclass::auto_init::create_empty(type_index)
}

/// `ffi.MakeObjectFromPackedArgs(type, name0, value0, name1, value1, ...)`.
fn make_object(args: &[AnyView<'_>]) -> Result<Any, Error> {
    let first = args.first().ok_or_else(|| Error::type_error("ffi.MakeObjectFromPackedArgs takes a type key or index"))?;
    let type_index = match first.type_index() {
        ti::kTVMFFIInt | ti::kTVMFFIBool => first.get::<i64>()? as i32,
        _ => {
            let key = first.str_bytes().filter(|_| !matches!(first.type_index(), ti::kTVMFFIBytes | ti::kTVMFFISmallBytes));
            let key = key.ok_or_else(|| cannot_convert(first, "str"))?;
            type_registry::key_to_index(key).ok_or_else(|| {
                Error::runtime_error(format!(
                    "Check failed: (it != type_key2index_.end()) is false: Cannot find type `{}`",
                    String::from_utf8_lossy(key)
                ))
            })?
        }
    };
    if args.len() % 2 != 1 {
        return Err(Error::runtime_error("Check failed: (args.size() % 2 == 1) is false: "));
    }
    let obj = create_empty(type_index)?;
    let mut keys = Vec::new();
    for i in (1..args.len()).step_by(2) {
        let k = args[i].str_bytes().filter(|_| !matches!(args[i].type_index(), ti::kTVMFFIBytes | ti::kTVMFFISmallBytes));
        keys.push(k.ok_or_else(|| cannot_convert(&args[i], "str"))?.to_vec());
    }
    let mut found = vec![false; keys.len()];
    for field in type_registry::all_fields(type_index) {
        let name = crate::dataclass::field_name(field);
        let slot = (0..keys.len()).find(|&i| !found[i] && keys[i] == name.as_bytes());
        if let Some(i) = slot {
            crate::dataclass::set_field(&obj, field, args[2 * i + 2].as_raw())?;
            found[i] = true;
        } else if field.flags & field_flag::kHasDefault != 0 {
            let stored = Any::from_view(&field.default_value_or_factory)?;
            let value = if field.flags & field_flag::kDefaultFromFactory != 0 {
                Function::from_object(stored.get::<ObjectRef>()?)?.call(&[])?
            } else {
                stored
            };
            crate::dataclass::set_field(&obj, field, value.as_raw())?;
        } else {
            return Err(Error::type_error(format!("Required field `{name}` not set in type `{}`", type_key_of(type_index))));
        }
    }
    if let Some(i) = found.iter().position(|f| !f) {
        return Err(Error::type_error(format!(
            "Type `{}` does not have field `{}`",
            type_key_of(type_index),
            String::from_utf8_lossy(&keys[i])
        )));
    }
    Ok(Any::from_object(obj))
}

/// A `void*` parameter: an opaque pointer or None (NULL).
fn pointer(sig: &Sig, args: &[AnyView<'_>], i: usize) -> Result<*mut c_void, Error> {
    match args[i].type_index() {
        ti::kTVMFFINone => Ok(std::ptr::null_mut()),
        // SAFETY: an opaque pointer's payload is the pointer.
        ti::kTVMFFIOpaquePtr => Ok(unsafe { args[i].as_raw().value.v_ptr }),
        _ => Err(sig.mismatch(args, i)),
    }
}

pub(crate) fn globals() -> Vec<Global> {
    vec![
        typed(Sig { name: "ffi.GetRegisteredTypeKeys", params: &[], ret: "Array<str>" }, |_, _| {
            let keys: Result<Vec<Any>, Error> = type_registry::registered_type_keys().iter().map(|k| Any::string(k)).collect();
            Ok(Any::from_object(Array::new(keys?)?.into_object()))
        }),
        ("ffi.MakeObjectFromPackedArgs", Function::from_closure(make_object)),
        typed(
            Sig { name: "ffi.FunctionFromExternC", params: &["void*", "void*", "void*"], ret: "ffi.Function" },
            |s, a| {
                let (self_, call, deleter) = (pointer(s, a, 0)?, pointer(s, a, 1)?, pointer(s, a, 2)?);
                if call.is_null() {
                    return Err(Error::value_error("ffi.FunctionFromExternC: safe_call is NULL"));
                }
                // SAFETY: the caller passes a safe-call function and a
                // deleter (or NULL) as TVM-FFI's C ABI types them; a
                // function pointer and `void*` have the same size here.
                let call: TVMFFISafeCallType = unsafe { std::mem::transmute::<*mut c_void, TVMFFISafeCallType>(call) };
                let deleter: Option<unsafe extern "C" fn(*mut c_void)> =
                    // SAFETY: as above; NULL maps to None.
                    if deleter.is_null() { None } else { Some(unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*mut c_void)>(deleter) }) };
                Ok(Any::from_object(Function::from_extern(self_, call, deleter)?.into_object()))
            },
        ),
    ]
}
