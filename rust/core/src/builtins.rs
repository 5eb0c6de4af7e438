//! Global functions every process has: the registry's own helpers, the
//! container globals (`containers::globals`) and run-time type
//! registration. The `testing.*` globals live in the testing library
//! (rust/testing), loaded beside the core, never in it.

use crate::values::any::{Any, AnyView};
use crate::values::error::Error;
use crate::values::function::{arg, Function};

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
    all.extend(crate::values::function_metadata::builtins());
    all.extend(crate::module::globals::builtins());
    all.extend(crate::reflection::globals::globals());
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
    ]);
    all.extend(crate::dataclass::auto_init::globals());
    all.extend(crate::dataclass::py_class::globals());
    all.extend(crate::dataclass::py_class_fields::globals());
    all.extend(crate::dataclass::field_default::globals());
    all.extend(crate::structural::register_globals());
    all.extend(crate::serialization::register_globals());
    all
}
