//! Global functions every process has: the registry's own helpers, the
//! container globals (`containers::globals`), run-time type registration,
//! and the `testing.*` helpers.

use crate::any::{Any, AnyView};
use crate::error::Error;
use crate::function::{arg, Function};
use crate::object::ObjectRef;

type Builtin = (&'static str, Result<Function, Error>);

fn f<F>(body: F) -> Result<Function, Error>
where
    F: Fn(&[AnyView<'_>]) -> Result<Any, Error> + Send + Sync + 'static,
{
    Function::from_closure(body)
}

/// All builtin globals, registered when the registry is first touched.
pub(crate) fn all() -> Vec<Builtin> {
    let mut all = crate::containers::globals::builtins();
    all.extend(crate::tensor::builtins());
    all.extend(crate::function_metadata::builtins());
    all.extend(crate::module::globals::builtins());
    all.extend(crate::reflection_globals::globals());
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
    all.extend(crate::dataclass::auto_init::globals());
    all.extend(crate::dataclass::py_class::globals());
    all.extend(crate::structural::register_globals());
    all.extend(crate::serialization::register_globals());
    all
}
