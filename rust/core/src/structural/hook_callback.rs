//! Callbacks handed to custom hooks (`__s_equal__`, `__s_hash__`,
//! `__ffi_repr__`) that re-enter the running algorithm.
//!
//! A hook receives an FFI Function it may call while it runs; the function
//! must reach the algorithm's state, which lives on the caller's stack.
//! [`with_scoped_callback`] makes such a function for the duration of one
//! hook call: afterwards it refuses to run (a hook that kept it and calls
//! it later gets an error, not a dangling pointer).
//!
//! SAFETY invariants of this module: the state address in a live slot is a
//! `&mut S` that is not otherwise used while `use_fn` runs, and the slot is
//! cleared (under its lock) before `with_scoped_callback` returns.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::values::any::{Any, AnyView};
use crate::values::error::Error;
use crate::values::function::Function;

/// Run `use_fn` with a Function that calls `body(state, args)`.
pub fn with_scoped_callback<S: 'static, R>(
    state: &mut S,
    body: fn(&mut S, &[AnyView<'_>]) -> Result<Any, Error>,
    use_fn: impl FnOnce(&Function) -> Result<R, Error>,
) -> Result<R, Error> {
    let slot: Arc<Mutex<usize>> = Arc::new(Mutex::new(state as *mut S as usize));
    let inner = slot.clone();
    let func = Function::from_closure(move |args| {
        let guard = inner.try_lock().ok_or_else(|| {
            Error::runtime_error("a structural callback was re-entered while it was running")
        })?;
        let addr = *guard;
        if addr == 0 {
            return Err(Error::runtime_error("a structural callback was called after its hook returned"));
        }
        // SAFETY: module invariant: the slot is non-zero only while the
        // caller's `&mut S` is lent to this callback, and the lock makes the
        // borrow exclusive.
        let state = unsafe { &mut *(addr as *mut S) };
        body(state, args)
    })?;
    let result = use_fn(&func);
    *slot.lock() = 0;
    result
}
