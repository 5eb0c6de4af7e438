//! The wrapper every exported function runs its body in: an `Err` or a
//! panic becomes the thread's raised error and a nonzero return, because
//! neither may cross the C ABI.

use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::values::error::{self, Error};
use crate::values::function::panic_message;

/// Run `f`, turning `Err` and panics into a raised error and -1.
pub(crate) fn guard(name: &str, f: impl FnOnce() -> Result<(), Error>) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            error::set_raised(e);
            -1
        }
        Err(p) => {
            error::set_raised(match p.downcast::<Error>() {
                // An error thrown through code that cannot return it.
                Ok(e) => *e,
                Err(p) => Error::runtime_error(format!("{name}: internal panic: {}", panic_message(&*p))),
            });
            -1
        }
    }
}
