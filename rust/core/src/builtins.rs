//! Global functions every process has: the registry's own helpers, the
//! container constructors and accessors frontends call through the C ABI,
//! run-time type registration, and the `testing.*` helpers.

use crate::any::{Any, AnyView};
use crate::containers::{Array, List, Map, Shape};
use crate::error::Error;
use crate::function::{arg, expect_args, Function};
use crate::object::ObjectRef;

type Builtin = (&'static str, Result<Function, Error>);

fn f<F>(body: F) -> Result<Function, Error>
where
    F: Fn(&[AnyView<'_>]) -> Result<Any, Error> + Send + Sync + 'static,
{
    Function::from_closure(body)
}

fn owned(args: &[AnyView<'_>]) -> Result<Vec<Any>, Error> {
    args.iter().map(|a| a.to_owned()).collect()
}

/// All builtin globals, registered when the registry is first touched.
pub(crate) fn all() -> Vec<Builtin> {
    let mut all = crate::tensor::builtins();
    all.extend(vec![
        (
            // f(-1) -> count; f(i) -> name i (a snapshot taken when f is made).
            "ffi.FunctionListGlobalNamesFunctor",
            f(|_| {
                let names = Function::list_global_names();
                let functor = Function::from_closure(move |args| {
                    let i: i64 = arg(args, 0, "index")?;
                    if i < 0 {
                        return Ok(Any::from(names.len() as i64));
                    }
                    let name = names
                        .get(i as usize)
                        .ok_or_else(|| Error::index_error(format!("global name index {i} out of range")))?;
                    Any::string(name)
                })?;
                Ok(Any::from_object(functor.into_object()))
            }),
        ),
        ("ffi.FunctionRemoveGlobal", f(|args| Ok(Any::from(Function::remove_global(&arg::<String>(args, 0, "name")?))))),
        ("ffi.Array", f(|args| Ok(Any::from_object(Array::new(owned(args)?)?.into_object())))),
        ("ffi.ArraySize", f(|args| Ok(Any::from(Array::from_object(arg(args, 0, "array")?)?.len() as i64)))),
        (
            "ffi.ArrayGetItem",
            f(|args| {
                expect_args(args, 2, "ffi.ArrayGetItem")?;
                Array::from_object(arg(args, 0, "array")?)?.get(arg(args, 1, "index")?)
            }),
        ),
        ("ffi.List", f(|args| Ok(Any::from_object(List::new(owned(args)?)?.into_object())))),
        ("ffi.ListSize", f(|args| Ok(Any::from(List::from_object(arg(args, 0, "list")?)?.len() as i64)))),
        (
            "ffi.ListGetItem",
            f(|args| {
                expect_args(args, 2, "ffi.ListGetItem")?;
                List::from_object(arg(args, 0, "list")?)?.get(arg(args, 1, "index")?)
            }),
        ),
        (
            "ffi.ListSetItem",
            f(|args| {
                expect_args(args, 3, "ffi.ListSetItem")?;
                List::from_object(arg(args, 0, "list")?)?.set(arg(args, 1, "index")?, args[2].to_owned()?)?;
                Ok(Any::none())
            }),
        ),
        (
            "ffi.ListAppend",
            f(|args| {
                expect_args(args, 2, "ffi.ListAppend")?;
                List::from_object(arg(args, 0, "list")?)?.push(args[1].to_owned()?)?;
                Ok(Any::none())
            }),
        ),
        (
            "ffi.ListInsert",
            f(|args| {
                expect_args(args, 3, "ffi.ListInsert")?;
                List::from_object(arg(args, 0, "list")?)?.insert(arg(args, 1, "index")?, args[2].to_owned()?)?;
                Ok(Any::none())
            }),
        ),
        (
            "ffi.ListPop",
            f(|args| {
                expect_args(args, 2, "ffi.ListPop")?;
                List::from_object(arg(args, 0, "list")?)?.pop(arg(args, 1, "index")?)
            }),
        ),
        (
            "ffi.ListClear",
            f(|args| {
                List::from_object(arg(args, 0, "list")?)?.clear();
                Ok(Any::none())
            }),
        ),
        (
            // ffi.Map(k0, v0, k1, v1, ...)
            "ffi.Map",
            f(|args| {
                if args.len() % 2 != 0 {
                    return Err(Error::value_error(format!("ffi.Map takes key/value pairs, got {} arguments", args.len())));
                }
                let pairs = args.chunks(2).map(|kv| Ok((kv[0].to_owned()?, kv[1].to_owned()?))).collect::<Result<_, Error>>()?;
                Ok(Any::from_object(Map::new(pairs)?.into_object()))
            }),
        ),
        ("ffi.MapSize", f(|args| Ok(Any::from(Map::from_object(arg(args, 0, "map")?)?.len() as i64)))),
        (
            "ffi.MapGetItem",
            f(|args| {
                expect_args(args, 2, "ffi.MapGetItem")?;
                let key = args[1].to_owned()?;
                Map::from_object(arg(args, 0, "map")?)?
                    .get(&key)
                    .ok_or_else(|| Error::key_error(format!("key {:?} not in map", args[1])))
            }),
        ),
        (
            "ffi.MapContains",
            f(|args| {
                expect_args(args, 2, "ffi.MapContains")?;
                Ok(Any::from(Map::from_object(arg(args, 0, "map")?)?.get(&args[1].to_owned()?).is_some()))
            }),
        ),
        (
            // Flat [k0, v0, k1, v1, ...] Array, in insertion order.
            "ffi.MapItems",
            f(|args| {
                let m = Map::from_object(arg(args, 0, "map")?)?;
                let flat = m.items().flat_map(|(k, v)| [k.clone(), v.clone()]).collect();
                Ok(Any::from_object(Array::new(flat)?.into_object()))
            }),
        ),
        (
            "ffi.Shape",
            f(|args| {
                let dims = args.iter().enumerate().map(|(i, a)| a.get::<i64>().map_err(|e| Error::type_error(format!("dim {i}: {}", e.message())))).collect::<Result<Vec<_>, _>>()?;
                Ok(Any::from_object(Shape::new(&dims)?.into_object()))
            }),
        ),
        ("tether.dataclass.RegisterType", crate::dataclass::register_type_global()),
        ("testing.echo", f(|args| args.first().map_or(Ok(Any::none()), |a| a.to_owned()))),
        (
            "testing.object_use_count",
            f(|args| Ok(Any::from(arg::<ObjectRef>(args, 0, "obj")?.use_count() as i64 - 1))),
        ),
        (
            // testing.apply_n(callable, n, *args): call `callable(*args)` n times.
            "testing.apply_n",
            f(|args| {
                let func = Function::from_object(arg(args, 0, "callable")?)?;
                let n: i64 = arg(args, 1, "n")?;
                let mut last = Any::none();
                for _ in 0..n {
                    last = func.call_views(&args[2..])?;
                }
                Ok(last)
            }),
        ),
        (
            // testing.raise_error(kind, message)
            "testing.raise_error",
            f(|args| Err(Error::new(arg::<String>(args, 0, "kind")?, arg::<String>(args, 1, "message")?))),
        ),
    ]);
    all.extend(crate::structural::register_globals());
    all.extend(crate::serialization::register_globals());
    all
}
