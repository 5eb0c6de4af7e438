//! How the library's modules register their globals: typed ([`def`],
//! [`def_with_meta`]) and packed ([`def_packed`]) functions, and the record
//! of registrations that failed ([`note`]). Load time has no caller to
//! report to, so a failure is written down and the next registration goes
//! on; `load` reads the first one back ([`first_failure`]).

use std::sync::Mutex;

use crate::ffi::{Any, AnyView, Error, Function};
use crate::sig::{function_schema, metadata, typed_function, Ty};

static FAILURES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Record a failed registration of `what` (Ok passes through): load goes
/// on with the next one.
pub fn note(what: &str, outcome: Result<(), Error>) -> Result<(), Error> {
    if let Err(e) = outcome {
        let mut failures = FAILURES.lock().unwrap_or_else(|p| p.into_inner());
        failures.push(format!("tether-testing: registering {what} failed: {}: {}", e.kind(), e.message()));
    }
    Ok(())
}

/// The first failure recorded, if any.
pub fn first_failure() -> Option<String> {
    FAILURES.lock().unwrap_or_else(|p| p.into_inner()).first().cloned()
}

/// Register `name` as a typed global (arguments checked and converted).
/// A failure is recorded (see [`note`]) and the next registration goes on.
pub fn def<F>(name: &'static str, params: Vec<Ty>, ret: Ty, body: F) -> Result<(), Error>
where
    F: Fn(Vec<Any>) -> Result<Any, Error> + Send + Sync + 'static,
{
    def_with_meta(name, params, ret, "", body)
}

/// [`def`] with more metadata members (`,"int_attr":1`).
pub fn def_with_meta<F>(name: &'static str, params: Vec<Ty>, ret: Ty, extra: &str, body: F) -> Result<(), Error>
where
    F: Fn(Vec<Any>) -> Result<Any, Error> + Send + Sync + 'static,
{
    let meta = metadata(&function_schema(&params, &ret), extra);
    let done = typed_function(name, params, &ret, body).and_then(|f| f.register_global(name, "", &meta, false));
    note(name, done)
}

/// Register `name` as a packed global (it sees the raw argument views).
pub fn def_packed<F>(name: &'static str, body: F) -> Result<(), Error>
where
    F: Fn(&[AnyView<'_>]) -> Result<Any, Error> + Send + Sync + 'static,
{
    let meta = metadata("{\"type\":\"ffi.Function\"}", "");
    note(name, Function::from_closure(body).and_then(|f| f.register_global(name, "", &meta, false)))
}
