//! The container globals TVM-FFI registers at start-up (`ffi.Array`,
//! `ffi.ListSetItem`, `ffi.DictForwardIterFunctor`, …), with TVM-FFI's
//! names, argument order, semantics and error messages: indices must be in
//! range (no negative indices at this level; frontends normalise them),
//! argument mismatches raise TypeError naming the typed signature, and a
//! `List<Any>`/`Dict<Any, Any>` parameter accepts an Array/Map by converting
//! it to a new List/Dict (so changes to it are not seen by the caller), as
//! TVM-FFI's typed conversion does.

use std::sync::OnceLock;

use crate::abi::type_index as ti;
use crate::values::any::{Any, AnyView};
use crate::values::error::Error;
use crate::values::function::Function;
use crate::object::{header_placeholder, Object, ObjectPtr, ObjectRef};

use super::map::MapCursor;
use super::typed_args::Sig;
use super::{Array, Dict, List, Map, Shape};

/// A packed global (any number of arguments).
fn packed<F>(name: &'static str, body: F) -> (&'static str, Result<Function, Error>)
where
    F: Fn(&[AnyView<'_>]) -> Result<Any, Error> + Send + Sync + 'static,
{
    (name, Function::from_closure(body))
}

fn pairs(args: &[AnyView<'_>]) -> Result<Vec<(Any, Any)>, Error> {
    if args.len() % 2 != 0 {
        return Err(Error::new(
            "InternalError",
            format!("Check failed: args.size() % 2 == 0 ({} vs. 0) : ", args.len() % 2),
        ));
    }
    let mut out = Vec::with_capacity(args.len() / 2);
    for kv in args.chunks(2) {
        out.push((kv[0].to_owned()?, kv[1].to_owned()?));
    }
    Ok(out)
}

fn obj(o: ObjectRef) -> Any {
    Any::from_object(o)
}

fn key_missing() -> Error {
    Error::key_error("key is not in Map")
}

/// The sentinel `ffi.MapGetItemOrMissing` returns for an absent key (also
/// `ffi.GetInvalidObject()`): one plain object for the whole process.
pub fn missing_object() -> Result<ObjectRef, Error> {
    static MISSING: OnceLock<ObjectRef> = OnceLock::new();
    if let Some(m) = MISSING.get() {
        return Ok(m.clone());
    }
    let made = ObjectPtr::new(Object { header: header_placeholder() })?.into_object_ref();
    Ok(MISSING.get_or_init(|| made).clone())
}

fn cursor_function(o: ObjectRef) -> Result<Any, Error> {
    let cursor = MapCursor::new(o)?;
    let f = Function::from_closure(move |args| {
        let sig = Sig { name: "<map iterator>", params: &["int"], ret: "Any" };
        sig.check_count(args)?;
        cursor.command(sig.int(args, 0)?)
    })?;
    Ok(obj(f.into_object()))
}

/// Every container global, for the registry to install at start-up.
pub(crate) fn builtins() -> Vec<(&'static str, Result<Function, Error>)> {
    vec![
        packed("ffi.Array", |args| Ok(obj(Array::from_views(args)?.into_object()))),
        Sig { name: "ffi.ArrayGetItem", params: &["ffi.Array", "int"], ret: "Any" }.into_global(|s, a| {
            let arr = Array::from_object(s.object(a, 0, ti::kTVMFFIArray)?)?;
            let i = s.int(a, 1)?;
            if i < 0 || i >= arr.len() as i64 {
                return Err(Error::index_error(format!("Index {i} out of bounds {}", arr.len())));
            }
            arr.get(i)
        }),
        Sig { name: "ffi.ArraySize", params: &["ffi.Array"], ret: "int" }.into_global(|s, a| {
            Ok(Any::from(Array::from_object(s.object(a, 0, ti::kTVMFFIArray)?)?.len() as i64))
        }),
        Sig { name: "ffi.ArrayContains", params: &["ffi.Array", "Any"], ret: "bool" }.into_global(|s, a| {
            let arr = Array::from_object(s.object(a, 0, ti::kTVMFFIArray)?)?;
            let v = a[1].to_owned()?;
            // SAFETY: both values are alive while compared.
            let found = arr.iter().any(|e| unsafe { super::any_hash::any_equal(e.as_raw(), v.as_raw()) });
            Ok(Any::from(found))
        }),
        packed("ffi.List", |args| Ok(obj(List::from_views(args)?.into_object()))),
        Sig { name: "ffi.ListGetItem", params: &["ffi.List", "int"], ret: "Any" }.into_global(|s, a| {
            List::from_object(s.object(a, 0, ti::kTVMFFIList)?)?.at(s.int(a, 1)?)
        }),
        Sig { name: "ffi.ListSetItem", params: &["List<Any>", "int", "Any"], ret: "void" }.into_global(|s, a| {
            let l = s.list(a, 0)?;
            l.set_at(s.int(a, 1)?, a[2].to_owned()?)?;
            Ok(Any::none())
        }),
        Sig { name: "ffi.ListSize", params: &["ffi.List"], ret: "int" }.into_global(|s, a| {
            Ok(Any::from(List::from_object(s.object(a, 0, ti::kTVMFFIList)?)?.len() as i64))
        }),
        Sig { name: "ffi.ListContains", params: &["ffi.List", "Any"], ret: "bool" }.into_global(|s, a| {
            let l = List::from_object(s.object(a, 0, ti::kTVMFFIList)?)?;
            Ok(Any::from(l.contains(&a[1].to_owned()?)))
        }),
        Sig { name: "ffi.ListAppend", params: &["List<Any>", "Any"], ret: "void" }.into_global(|s, a| {
            s.list(a, 0)?.push(a[1].to_owned()?)?;
            Ok(Any::none())
        }),
        Sig { name: "ffi.ListInsert", params: &["List<Any>", "int", "Any"], ret: "void" }.into_global(|s, a| {
            let l = s.list(a, 0)?;
            l.insert_at(s.int(a, 1)?, a[2].to_owned()?)?;
            Ok(Any::none())
        }),
        Sig { name: "ffi.ListPop", params: &["List<Any>", "int"], ret: "Any" }.into_global(|s, a| {
            let l = s.list(a, 0)?;
            l.pop_at(s.int(a, 1)?)
        }),
        Sig { name: "ffi.ListErase", params: &["List<Any>", "int"], ret: "void" }.into_global(|s, a| {
            let l = s.list(a, 0)?;
            drop(l.pop_at(s.int(a, 1)?)?);
            Ok(Any::none())
        }),
        Sig { name: "ffi.ListEraseRange", params: &["List<Any>", "int", "int"], ret: "void" }.into_global(|s, a| {
            let l = s.list(a, 0)?;
            l.erase_range(s.int(a, 1)?, s.int(a, 2)?)?;
            Ok(Any::none())
        }),
        Sig { name: "ffi.ListReplaceSlice", params: &["List<Any>", "int", "int", "List<Any>"], ret: "void" }.into_global(
            |s, a| {
                let l = s.list(a, 0)?;
                let (start, stop) = (s.int(a, 1)?, s.int(a, 2)?);
                // A snapshot of the replacement, so `l` may be its own replacement.
                let items = s.list(a, 3)?.to_vec();
                l.replace_slice(start, stop, items)?;
                Ok(Any::none())
            },
        ),
        Sig { name: "ffi.ListReverse", params: &["List<Any>"], ret: "void" }.into_global(|s, a| {
            s.list(a, 0)?.reverse();
            Ok(Any::none())
        }),
        Sig { name: "ffi.ListReserve", params: &["List<Any>", "int"], ret: "void" }.into_global(|s, a| {
            let l = s.list(a, 0)?;
            l.reserve(s.int(a, 1)?)?;
            Ok(Any::none())
        }),
        Sig { name: "ffi.ListClear", params: &["List<Any>"], ret: "void" }.into_global(|s, a| {
            s.list(a, 0)?.clear();
            Ok(Any::none())
        }),
        packed("ffi.Map", |args| Ok(obj(Map::new(pairs(args)?)?.into_object()))),
        Sig { name: "ffi.MapSize", params: &["ffi.Map"], ret: "int" }.into_global(|s, a| {
            Ok(Any::from(Map::from_object(s.object(a, 0, ti::kTVMFFIMap)?)?.len() as i64))
        }),
        Sig { name: "ffi.MapGetItem", params: &["ffi.Map", "Any"], ret: "Any" }.into_global(|s, a| {
            let m = Map::from_object(s.object(a, 0, ti::kTVMFFIMap)?)?;
            m.get(&a[1].to_owned()?).ok_or_else(key_missing)
        }),
        Sig { name: "ffi.MapCount", params: &["ffi.Map", "Any"], ret: "int" }.into_global(|s, a| {
            let m = Map::from_object(s.object(a, 0, ti::kTVMFFIMap)?)?;
            Ok(Any::from(m.contains(&a[1].to_owned()?) as i64))
        }),
        Sig { name: "ffi.MapForwardIterFunctor", params: &["ffi.Map"], ret: "ffi.Function" }.into_global(|s, a| {
            cursor_function(s.object(a, 0, ti::kTVMFFIMap)?)
        }),
        Sig { name: "ffi.MapGetItemOrMissing", params: &["ffi.Map", "Any"], ret: "Any" }.into_global(|s, a| {
            let m = Map::from_object(s.object(a, 0, ti::kTVMFFIMap)?)?;
            m.get(&a[1].to_owned()?).map_or_else(|| Ok(obj(missing_object()?)), Ok)
        }),
        packed("ffi.Dict", |args| Ok(obj(Dict::new(pairs(args)?)?.into_object()))),
        Sig { name: "ffi.DictSize", params: &["ffi.Dict"], ret: "int" }.into_global(|s, a| {
            Ok(Any::from(Dict::from_object(s.object(a, 0, ti::kTVMFFIDict)?)?.len() as i64))
        }),
        Sig { name: "ffi.DictGetItem", params: &["ffi.Dict", "Any"], ret: "Any" }.into_global(|s, a| {
            let d = Dict::from_object(s.object(a, 0, ti::kTVMFFIDict)?)?;
            d.get(&a[1].to_owned()?).ok_or_else(key_missing)
        }),
        Sig { name: "ffi.DictSetItem", params: &["Dict<Any, Any>", "Any", "Any"], ret: "void" }.into_global(|s, a| {
            s.dict(a, 0)?.set(a[1].to_owned()?, a[2].to_owned()?)?;
            Ok(Any::none())
        }),
        Sig { name: "ffi.DictCount", params: &["ffi.Dict", "Any"], ret: "int" }.into_global(|s, a| {
            let d = Dict::from_object(s.object(a, 0, ti::kTVMFFIDict)?)?;
            Ok(Any::from(d.contains(&a[1].to_owned()?) as i64))
        }),
        Sig { name: "ffi.DictErase", params: &["Dict<Any, Any>", "Any"], ret: "void" }.into_global(|s, a| {
            s.dict(a, 0)?.erase(&a[1].to_owned()?);
            Ok(Any::none())
        }),
        Sig { name: "ffi.DictClear", params: &["Dict<Any, Any>"], ret: "void" }.into_global(|s, a| {
            s.dict(a, 0)?.clear();
            Ok(Any::none())
        }),
        Sig { name: "ffi.DictForwardIterFunctor", params: &["ffi.Dict"], ret: "ffi.Function" }.into_global(|s, a| {
            cursor_function(s.object(a, 0, ti::kTVMFFIDict)?)
        }),
        Sig { name: "ffi.DictGetItemOrMissing", params: &["ffi.Dict", "Any"], ret: "Any" }.into_global(|s, a| {
            let d = Dict::from_object(s.object(a, 0, ti::kTVMFFIDict)?)?;
            d.get(&a[1].to_owned()?).map_or_else(|| Ok(obj(missing_object()?)), Ok)
        }),
        Sig { name: "ffi.GetInvalidObject", params: &[], ret: "ffi.Object" }.into_global(|_, _| Ok(obj(missing_object()?))),
        packed("ffi.Shape", |args| {
            let dims = args
                .iter()
                .map(|a| match a.type_index() {
                    ti::kTVMFFIInt | ti::kTVMFFIBool => a.get::<i64>(),
                    _ => Err(Error::value_error("Expect shape to take list of int arguments")),
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(obj(Shape::new(&dims)?.into_object()))
        }),
        Sig { name: "ffi.String", params: &["str"], ret: "str" }.into_global(|s, a| match a[0].type_index() {
            ti::kTVMFFIStr | ti::kTVMFFISmallStr | ti::kTVMFFIRawStr => a[0].to_owned(),
            _ => Err(s.mismatch(a, 0)),
        }),
        Sig { name: "ffi.Bytes", params: &["bytes"], ret: "bytes" }.into_global(|s, a| match a[0].type_index() {
            ti::kTVMFFIBytes | ti::kTVMFFISmallBytes | ti::kTVMFFIByteArrayPtr => a[0].to_owned(),
            _ => Err(s.mismatch(a, 0)),
        }),
    ]
}
