//! `attempt!`: inside a function building a work-stack step
//! ([`crate::structural::trampoline::Step`]), the value of an `Ok`, or the
//! step ended at once with the error. The descent, the container steps
//! and the engine all build their steps with it.

macro_rules! attempt {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return $crate::structural::trampoline::Step::err(e),
        }
    };
}
pub(crate) use attempt;
