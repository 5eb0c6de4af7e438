//! The process-wide table of global functions (`TVMFFIFunctionGetGlobal`
//! and friends) and the globals that read it.
//!
//! The table fills itself on first access with the builtin globals of every
//! layer. It must not name the layers that fill it: the crate root, which
//! knows every layer, defines [`tether_core_builtin_globals`], and the
//! declaration below is how the table reaches it, joined by the linker. So
//! the first lookup sees every builtin whoever makes it (Rust code, or C
//! code calling the C ABI first), and no user has an init call to make.

use std::collections::HashMap;
use std::sync::OnceLock;

use parking_lot::RwLock;

use crate::object::ObjectRef;
use crate::values::any::{Any, AnyView};
use crate::values::error::Error;
use crate::values::function::{arg, Function};

/// One builtin global: its name and the function (or why it could not be made).
pub type Builtin = (&'static str, Result<Function, Error>);

extern "Rust" {
    /// Every layer's builtin globals; defined in lib.rs.
    fn tether_core_builtin_globals() -> Vec<Builtin>;
}

fn builtin_globals() -> Vec<Builtin> {
    // SAFETY: the crate root defines the function with this exact signature
    // (same crate, same compiler); it takes no pointers.
    unsafe { tether_core_builtin_globals() }
}

impl Function {
    /// Look up a global function.
    pub fn get_global(name: &str) -> Option<Function> {
        globals().read().get(name).cloned().map(Function)
    }

    /// Register a global function; an existing name is an error unless
    /// `allow_override`.
    pub fn set_global(name: &str, f: Function, allow_override: bool) -> Result<(), Error> {
        if name.is_empty() {
            return Err(Error::value_error("global function name must not be empty"));
        }
        let mut g = globals().write();
        if !allow_override && g.contains_key(name) {
            return Err(Error::value_error(format!("global function {name} is already registered")));
        }
        g.insert(name.to_string(), f.0);
        Ok(())
    }

    /// Register a Rust closure as a global function.
    pub fn register_global<F>(name: &str, f: F) -> Result<(), Error>
    where
        F: Fn(&[AnyView<'_>]) -> Result<Any, Error> + Send + Sync + 'static,
    {
        Self::set_global(name, Self::from_closure(f)?, false)
    }

    /// Remove a global function; returns whether it existed.
    pub fn remove_global(name: &str) -> bool {
        globals().write().remove(name).is_some()
    }

    /// All registered global names, sorted.
    pub fn list_global_names() -> Vec<String> {
        let mut v: Vec<String> = globals().read().keys().cloned().collect();
        v.sort();
        v
    }
}

fn globals() -> &'static RwLock<HashMap<String, ObjectRef>> {
    static G: OnceLock<RwLock<HashMap<String, ObjectRef>>> = OnceLock::new();
    G.get_or_init(|| {
        let lock = RwLock::new(HashMap::new());
        {
            let mut g = lock.write();
            for (name, f) in builtin_globals() {
                g.insert(name.to_string(), f.expect("builtin function allocation").0);
            }
        }
        lock
    })
}

/// The globals of the table itself: listing and removing names.
pub(crate) fn globals_of_the_table() -> Vec<Builtin> {
    vec![
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
    ]
}

fn f<F>(body: F) -> Result<Function, Error>
where
    F: Fn(&[AnyView<'_>]) -> Result<Any, Error> + Send + Sync + 'static,
{
    Function::from_closure(body)
}
