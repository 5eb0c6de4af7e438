//! Types for structural comparison and hashing: fields left out of
//! comparison (`testing.TestCompare`) or hashing (`testing.TestHash`), and
//! types whose `__ffi_hash__` / `__ffi_eq__` / `__ffi_compare__` hooks look
//! at their `key` only — including one with equality but no hash, which
//! hashing must refuse.

use tether_sys::abi::field_flag;

use super::construct;
use crate::ffi::{Any, AnyView, Error, Function};
use crate::reflect::{field, get_field, TypeDef};
use crate::sig::Ty;

/// The `key` field of the object in argument `i`.
fn key_of(args: &[AnyView<'_>], i: usize) -> Result<Any, Error> {
    let o = args.get(i).and_then(|a| a.object()).ok_or_else(|| Error::type_error(format!("hook argument #{i} must be an object")))?;
    get_field(&o, "key")
}

fn callback(args: &[AnyView<'_>], i: usize) -> Result<Function, Error> {
    args.get(i)
        .and_then(|a| a.object())
        .and_then(Function::from_object)
        .ok_or_else(|| Error::type_error(format!("hook argument #{i} must be a function")))
}

/// `__ffi_hash__(self, fn_hash)`: the hash of `key`.
fn hash_hook() -> Result<Any, Error> {
    Ok(Function::from_closure(|args| callback(args, 1)?.call(&[key_of(args, 0)?]))?.into_any())
}

/// `__ffi_eq__(lhs, rhs, fn_eq)`: whether the keys are equal.
fn eq_hook() -> Result<Any, Error> {
    Ok(Function::from_closure(|args| {
        let eq = callback(args, 2)?.call(&[key_of(args, 0)?, key_of(args, 1)?])?;
        Ok(Any::bool(eq.view().bool().unwrap_or(false)))
    })?
    .into_any())
}

/// `__ffi_compare__(lhs, rhs, fn_cmp)`: the keys' three-way order.
fn compare_hook() -> Result<Any, Error> {
    Ok(Function::from_closure(|args| {
        let order = callback(args, 2)?.call(&[key_of(args, 0)?, key_of(args, 1)?])?;
        Ok(Any::int(order.view().int().unwrap_or(0) as i32 as i64))
    })?
    .into_any())
}

fn key_label(key: &'static str) -> TypeDef {
    TypeDef::new(key)
        .final_type()
        .field(field("key", Ty::Int))
        .field(field("label", Ty::Str))
        .init(vec![Ty::Int, Ty::Str], "", |l, a| construct(l, &["key", "label"], a))
}

pub fn register() -> Result<(), Error> {
    TypeDef::new("testing.TestCompare")
        .final_type()
        .field(field("key", Ty::Int))
        .field(field("name", Ty::Str))
        .field(field("ignored_field", Ty::Int).flag(field_flag::kCompareOff))
        .init(vec![Ty::Int, Ty::Str, Ty::Int], "", |l, a| construct(l, &["key", "name", "ignored_field"], a))
        .register()?;
    TypeDef::new("testing.TestHash")
        .final_type()
        .field(field("key", Ty::Int))
        .field(field("name", Ty::Str))
        .field(field("hash_ignored", Ty::Int).flag(field_flag::kHashOff))
        .init(vec![Ty::Int, Ty::Str, Ty::Int], "", |l, a| construct(l, &["key", "name", "hash_ignored"], a))
        .register()?;
    key_label("testing.TestCustomHash").attr("__ffi_hash__", hash_hook()?).register()?;
    key_label("testing.TestCustomCompare")
        .attr("__ffi_hash__", hash_hook()?)
        .attr("__ffi_eq__", eq_hook()?)
        .attr("__ffi_compare__", compare_hook()?)
        .register()?;
    key_label("testing.TestEqWithoutHash").attr("__ffi_eq__", eq_hook()?).register()?;
    Ok(())
}
