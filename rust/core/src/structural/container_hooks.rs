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
use crate::values::any::Any;
use crate::containers::{Array, List};
use crate::values::error::Error;
use crate::values::function::panic_message;
use crate::reflection::native_hook::pointer_value;
use crate::object::ObjectRef;

use super::mutate::protocol::{self as mprot, MutatorBase, MutatorRef};
use super::visit::protocol::{self as vprot, VisitorBase, VisitorRef};
use super::visit::Visited;
use super::MapLike;

fn caught<R>(what: &str, body: impl FnOnce() -> Result<R, Error>) -> Result<R, Error> {
    catch_unwind(AssertUnwindSafe(body))
        .unwrap_or_else(|p| Err(Error::runtime_error(format!("{what}: internal panic: {}", panic_message(&*p)))))
}

/// The elements of a sequence, or the values of a map, of `value`.
pub(crate) fn children(value: &TVMFFIAny) -> Result<Vec<Any>, Error> {
    let obj = Any::from_view(value)?.get::<ObjectRef>()?;
    Ok(match value.type_index {
        ti::kTVMFFIArray => Array::from_object(obj)?.iter().cloned().collect(),
        ti::kTVMFFIList => List::from_object(obj)?.to_vec(),
        _ => MapLike::from_object(obj)?.items().into_iter().map(|(_, v)| v).collect(),
    })
}

/// `__s_visit__` of Array, List, Map and Dict.
unsafe extern "C" fn visit_container(visitor: *mut VisitorBase, value: TVMFFIAny) -> TVMFFIAny {
    vprot::encode(caught("__s_visit__", || -> Result<Visited, Error> {
        // SAFETY: the caller passes a live visitor.
        let visitor = unsafe { VisitorRef::from_raw(visitor) }?;
        for item in children(&value)? {
            if let Some(interrupt) = visitor.visit(&item)? {
                return Ok(Some(interrupt));
            }
        }
        Ok(None)
    }))
}

/// Whether `hook` is the builtin `__s_visit__` of the containers (the
/// core's engines then visit the children on their own work stack).
pub(crate) fn is_builtin_visit(hook: usize) -> bool {
    hook == visit_container as *const () as usize
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

/// Which builtin mutate hook a native pointer is, if any.
pub(crate) enum BuiltinMutate {
    Leaf,
    Copy,
    InPlace,
}

/// The builtin mutate hook `hook` is (the core's engines then run it as
/// steps of their own work stack).
pub(crate) fn builtin_mutate(hook: usize) -> Option<BuiltinMutate> {
    if hook == mutate_leaf as *const () as usize {
        Some(BuiltinMutate::Leaf)
    } else if hook == mutate_container as *const () as usize {
        Some(BuiltinMutate::Copy)
    } else if hook == mutate_container_in_place as *const () as usize {
        Some(BuiltinMutate::InPlace)
    } else {
        None
    }
}

/// Register the hooks (at start-up).
pub(crate) fn register() -> Result<(), Error> {
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
