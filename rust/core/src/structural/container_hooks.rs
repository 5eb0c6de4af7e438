//! The native structural hooks TVM-FFI registers for its builtin types:
//! `__s_visit__` for Array, List, Map and Dict (every element, or every
//! value, through the visitor's own vtable), and `__s_mutate__` /
//! `__s_maybe_inplace_mutate__` for the same containers (copy-on-write, or
//! in place when the caller found the container uniquely owned) and for the
//! immutable leaves String, Bytes and BigInt (always unchanged).
//!
//! They are opaque function pointers with the hook ABI
//! (`TVMFFIAny hook(visitor_or_mutator, AnyView value)`), so code compiled
//! against TVM-FFI's headers calls them inline whatever engine drives the
//! traversal, and tether's own engines reach them the same way.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::abi::{type_index as ti, TVMFFIAny};
use crate::values::error::Error;
use crate::values::function::panic_message;
use crate::reflection::native_hook::pointer_value;

use super::mutate::protocol::{self as mprot, MutatorBase, MutatorRef};
use super::visit::protocol::{self as vprot, VisitorBase, VisitorRef};
use super::visit::Visited;
use super::hook_identity;
use super::value_views::container_children;

fn caught<R>(what: &str, body: impl FnOnce() -> Result<R, Error>) -> Result<R, Error> {
    catch_unwind(AssertUnwindSafe(body))
        .unwrap_or_else(|p| Err(Error::runtime_error(format!("{what}: internal panic: {}", panic_message(&*p)))))
}

/// `__s_visit__` of Array, List, Map and Dict.
unsafe extern "C" fn visit_container(visitor: *mut VisitorBase, value: TVMFFIAny) -> TVMFFIAny {
    vprot::encode(caught("__s_visit__", || -> Result<Visited, Error> {
        // SAFETY: the caller passes a live visitor.
        let visitor = unsafe { VisitorRef::from_raw(visitor) }?;
        for item in container_children(&value)? {
            if let Some(interrupt) = visitor.visit(&item)? {
                return Ok(Some(interrupt));
            }
        }
        Ok(None)
    }))
}

/// `__s_mutate__` and `__s_maybe_inplace_mutate__` of String, Bytes and
/// BigInt: nothing inside to rewrite.
unsafe extern "C" fn mutate_leaf(_mutator: *mut MutatorBase, _value: TVMFFIAny) -> TVMFFIAny {
    mprot::UNCHANGED
}

/// `__s_mutate__` of Array, List, Map and Dict: copy-on-write.
unsafe extern "C" fn mutate_container(mutator: *mut MutatorBase, value: TVMFFIAny) -> TVMFFIAny {
    mprot::encode(caught("__s_mutate__", || {
        // SAFETY: the caller passes a live mutator and a live container.
        let mutator = unsafe { MutatorRef::from_raw(mutator) }?;
        unsafe { super::mutate::mutate_container_copy(&mutator, &value) }
    }))
}

/// `__s_maybe_inplace_mutate__` of Array, List, Map and Dict: the caller
/// found the container uniquely owned, so its slots are rewritten in place.
unsafe extern "C" fn mutate_container_in_place(mutator: *mut MutatorBase, value: TVMFFIAny) -> TVMFFIAny {
    mprot::encode(caught("__s_maybe_inplace_mutate__", || {
        // SAFETY: the caller passes a live mutator and a live container it
        // owns alone.
        let mutator = unsafe { MutatorRef::from_raw(mutator) }?;
        unsafe { super::mutate::mutate_container_in_place(&mutator, &value) }
    }))
}

/// Register the hooks (at start-up).
pub(crate) fn register() -> Result<(), Error> {
    hook_identity::record(
        visit_container as *const () as usize,
        [mutate_leaf as *const () as usize, mutate_container as *const () as usize, mutate_container_in_place as *const () as usize],
    );
    let visit = pointer_value(visit_container as *const _);
    let leaf = pointer_value(mutate_leaf as *const _);
    let copy = pointer_value(mutate_container as *const _);
    let in_place = pointer_value(mutate_container_in_place as *const _);
    for index in [ti::kTVMFFIArray, ti::kTVMFFIList, ti::kTVMFFIMap, ti::kTVMFFIDict] {
        crate::reflection::attr_columns::register_attr(index, b"__s_visit__", visit.as_raw())?;
        crate::reflection::attr_columns::register_attr(index, b"__s_mutate__", copy.as_raw())?;
        crate::reflection::attr_columns::register_attr(index, b"__s_maybe_inplace_mutate__", in_place.as_raw())?;
    }
    for index in [ti::kTVMFFIStr, ti::kTVMFFIBytes, ti::kTVMFFIBigInt] {
        crate::reflection::attr_columns::register_attr(index, b"__s_mutate__", leaf.as_raw())?;
        crate::reflection::attr_columns::register_attr(index, b"__s_maybe_inplace_mutate__", leaf.as_raw())?;
    }
    Ok(())
}
