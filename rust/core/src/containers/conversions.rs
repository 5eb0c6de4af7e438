//! `__ffi_convert__` of the builtin object types, as TVM-FFI's runtime
//! registers it when it loads: the conversion of their C++ reference
//! classes (strings from C strings, a Shape from an Array of ints, Array
//! and List from each other, Map and Dict from each other). Compiled code
//! reads the column directly, so it holds an `ffi.Function` as upstream's.
//! The crate root registers it at start-up.

use crate::abi::type_index as ti;
use crate::values::any::{Any, AnyView};
use crate::containers::{Array, Dict, List, Map, Shape};
use crate::values::error::Error;
use crate::values::function::{expect_args, Function};

/// Register `__ffi_convert__` on the builtin object types.
pub(crate) fn register() -> Result<(), Error> {
    for (index, target) in CONVERSIONS {
        let f = Function::from_closure(move |args: &[AnyView<'_>]| {
            expect_args(args, 1, "__ffi_convert__")?;
            convert(*index, target, &args[0].to_owned()?)
        })?;
        crate::reflection::attr_columns::register_attr(*index, b"__ffi_convert__", Any::from_object(f.into_object()).as_raw())?;
    }
    Ok(())
}

/// The builtin types with an `__ffi_convert__`, and the name of the
/// reference type it converts to (in conversion errors).
const CONVERSIONS: &[(i32, &str)] = &[
    (ti::kTVMFFIObject, "Object"),
    (ti::kTVMFFIStr, "str"),
    (ti::kTVMFFIBytes, "bytes"),
    (ti::kTVMFFIError, "ffi.Error"),
    (ti::kTVMFFIFunction, "ffi.Function"),
    (ti::kTVMFFIShape, "ffi.Shape"),
    (ti::kTVMFFITensor, "ffi.Tensor"),
    (ti::kTVMFFIArray, "Array<Any>"),
    (ti::kTVMFFIMap, "Map<Any, Any>"),
    (ti::kTVMFFIList, "List<Any>"),
    (ti::kTVMFFIDict, "Dict<Any, Any>"),
];

/// A Shape of `items` when every one is an int; None otherwise.
fn shape_of_ints(items: &[Any]) -> Result<Option<Any>, Error> {
    if !items.iter().all(|d| d.type_index() == ti::kTVMFFIInt) {
        return Ok(None);
    }
    let dims = items.iter().map(|d| d.get::<i64>()).collect::<Result<Vec<i64>, Error>>()?;
    Ok(Some(Any::from_object(Shape::new(&dims)?.into_object())))
}

/// A value as type `index`'s reference class would take it: itself when
/// it already is one, else through the class's fallbacks (strings from C
/// strings, a Shape from an Array of ints, Array and List from each other,
/// Map and Dict from each other).
fn convert(index: i32, target: &str, v: &Any) -> Result<Any, Error> {
    let t = v.type_index();
    let converted = match index {
        ti::kTVMFFIObject if t == ti::kTVMFFINone || t >= ti::kTVMFFIStaticObjectBegin => Some(v.clone()),
        ti::kTVMFFIStr if matches!(t, ti::kTVMFFIStr | ti::kTVMFFISmallStr) => Some(v.clone()),
        ti::kTVMFFIStr if t == ti::kTVMFFIRawStr => Some(Any::string(&v.get::<String>()?)?),
        ti::kTVMFFIBytes if matches!(t, ti::kTVMFFIBytes | ti::kTVMFFISmallBytes) => Some(v.clone()),
        ti::kTVMFFIBytes if t == ti::kTVMFFIByteArrayPtr => Some(Any::bytes(&v.get::<Vec<u8>>()?)?),
        ti::kTVMFFIShape if t == ti::kTVMFFIArray => {
            let items: Vec<Any> = Array::from_object(v.as_object().expect("an array"))?.iter().cloned().collect();
            shape_of_ints(&items)?
        }
        // A List of ints is a shape as well as an Array of them is.
        ti::kTVMFFIShape if t == ti::kTVMFFIList => {
            shape_of_ints(&List::from_object(v.as_object().expect("a list"))?.to_vec())?
        }
        ti::kTVMFFIArray if t == ti::kTVMFFIList => {
            let items = List::from_object(v.as_object().expect("a list"))?.to_vec();
            Some(Any::from_object(Array::new(items)?.into_object()))
        }
        ti::kTVMFFIList if t == ti::kTVMFFIArray => {
            let items = Array::from_object(v.as_object().expect("an array"))?.iter().cloned().collect();
            Some(Any::from_object(List::new(items)?.into_object()))
        }
        ti::kTVMFFIMap if t == ti::kTVMFFIDict => {
            let items = Dict::from_object(v.as_object().expect("a dict"))?.items();
            Some(Any::from_object(Map::new(items)?.into_object()))
        }
        ti::kTVMFFIDict if t == ti::kTVMFFIMap => {
            let items = Map::from_object(v.as_object().expect("a map"))?.items();
            Some(Any::from_object(Dict::new(items)?.into_object()))
        }
        _ if t == index => Some(v.clone()),
        _ => None,
    };
    converted.ok_or_else(|| Error::type_error(format!("Cannot cast from `{}` to `{target}`", v.type_key())))
}
