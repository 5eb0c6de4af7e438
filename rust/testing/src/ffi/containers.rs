//! Arrays, lists, maps and dicts of the core: made and read through the
//! core's container globals (`ffi.Array`, `ffi.MapForwardIterFunctor`, …);
//! an array's or list's items are read in place from its sequence cell.

use std::sync::OnceLock;

use tether_sys::abi::{type_index as ti, TVMFFIAny, TVMFFIObject, TVMFFISeqCell};

use super::any::{Any, AnyView};
use super::error::Error;
use super::function::Function;
use super::object::ObjectRef;

/// A core global looked up once.
fn global(slot: &'static OnceLock<Option<Function>>, name: &str) -> Result<&'static Function, Error> {
    slot.get_or_init(|| Function::get_global(name))
        .as_ref()
        .ok_or_else(|| Error::runtime_error(format!("the core has no global `{name}`")))
}

macro_rules! core_global {
    ($fn_name:ident, $name:literal) => {
        fn $fn_name() -> Result<&'static Function, Error> {
            static SLOT: OnceLock<Option<Function>> = OnceLock::new();
            global(&SLOT, $name)
        }
    };
}

core_global!(array_ctor, "ffi.Array");
core_global!(list_ctor, "ffi.List");
core_global!(map_ctor, "ffi.Map");
core_global!(dict_ctor, "ffi.Dict");
core_global!(map_iter, "ffi.MapForwardIterFunctor");
core_global!(dict_iter, "ffi.DictForwardIterFunctor");

/// A new `ffi.Array` of `items`.
pub fn array(items: &[Any]) -> Result<Any, Error> {
    array_ctor()?.call(items)
}

/// A new `ffi.List` of `items`.
pub fn list(items: &[Any]) -> Result<Any, Error> {
    list_ctor()?.call(items)
}

fn flat(pairs: &[(Any, Any)]) -> Vec<Any> {
    pairs.iter().flat_map(|(k, v)| [k.clone(), v.clone()]).collect()
}

/// A new `ffi.Map` of `pairs` (a later key replaces an earlier one).
pub fn map(pairs: &[(Any, Any)]) -> Result<Any, Error> {
    map_ctor()?.call(&flat(pairs))
}

/// A new `ffi.Dict` of `pairs`.
pub fn dict(pairs: &[(Any, Any)]) -> Result<Any, Error> {
    dict_ctor()?.call(&flat(pairs))
}

/// The items of an Array or List (new references).
pub fn seq_items(v: &AnyView<'_>) -> Option<Vec<Any>> {
    if !matches!(v.type_index(), ti::kTVMFFIArray | ti::kTVMFFIList) {
        return None;
    }
    let obj = v.object()?;
    Some(seq_items_of(&obj))
}

fn seq_items_of(obj: &ObjectRef) -> Vec<Any> {
    // SAFETY: an Array/List object: the sequence cell follows the header and
    // `data` holds `size` owned values, alive while `obj` is; each is copied
    // with its own reference (a read; the container is not changed here).
    unsafe {
        let cell = &*((obj.as_ptr() as *const u8).add(std::mem::size_of::<TVMFFIObject>()) as *const TVMFFISeqCell);
        let data = cell.data as *const TVMFFIAny;
        (0..cell.size.max(0) as usize)
            .map(|i| AnyView::from_raw(&*data.add(i)).to_owned())
            .collect::<Result<Vec<_>, _>>()
            .unwrap_or_default()
    }
}

/// The pairs of a Map or Dict (new references), in iteration order.
pub fn map_items(v: &AnyView<'_>) -> Result<Option<Vec<(Any, Any)>>, Error> {
    let iter = match v.type_index() {
        ti::kTVMFFIMap => map_iter()?,
        ti::kTVMFFIDict => dict_iter()?,
        _ => return Ok(None),
    };
    let cursor = iter.call_views(&[*v])?;
    let cursor = cursor.into_object().and_then(Function::from_object).ok_or_else(|| Error::runtime_error("map iterator is not a function"))?;
    let (key, value, next, valid) = (Any::int(0), Any::int(1), Any::int(2), Any::int(3));
    let mut out = Vec::new();
    while cursor.call(std::slice::from_ref(&valid))?.view().bool() == Some(true) {
        let k = cursor.call(std::slice::from_ref(&key))?;
        let val = cursor.call(std::slice::from_ref(&value))?;
        out.push((k, val));
        cursor.call(std::slice::from_ref(&next))?;
    }
    Ok(Some(out))
}
