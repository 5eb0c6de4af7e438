//! The backtrace globals: `tether.backtrace.SymbolizedCount` (how many
//! frame addresses this process has symbolized, for tests that check
//! raising an error symbolizes nothing until its text is read) and
//! `tether.backtrace.Resolve` (a backtrace text with its native frames
//! resolved, as reading an error's backtrace gives it).

use crate::values::any::Any;
use crate::values::backtrace;
use crate::values::error::Error;
use crate::values::function::{arg, Function};

pub(crate) fn builtins() -> Vec<(&'static str, Result<Function, Error>)> {
    vec![
        (
            "tether.backtrace.SymbolizedCount",
            Function::from_closure(|_| Ok(Any::from(backtrace::symbolized_count() as i64))),
        ),
        (
            "tether.backtrace.Resolve",
            Function::from_closure(|args| Any::string(&backtrace::resolve(&arg::<String>(args, 0, "text")?))),
        ),
    ]
}
