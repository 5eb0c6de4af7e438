//! The access path types' reflection: their fields, metadata and repr
//! hooks, and the methods frontends call (`_extend`, `_to_steps`, ...),
//! among them the structural comparison of steps and paths, which is why
//! this lives apart from the types themselves (`access_path`), above the
//! structural equality it uses.

use std::sync::OnceLock;

use crate::containers::Array;
use crate::object::{ObjectRef, ObjectType};
use crate::reflection::TypeBuilder;
use crate::values::any::{Any, AnyView};
use crate::values::error::Error;
use crate::values::function::{arg, Function};

use super::access_path::{call_repr, step_text, AccessPath, AccessPathObj, AccessStep, AccessStepObj};
use super::equal::structural_equal;

impl AccessStep {
    /// Same kind and key (keys compared structurally).
    pub fn step_equal(&self, other: &AccessStep) -> Result<bool, Error> {
        Ok(self.kind() == other.kind() && structural_equal(self.key(), other.key(), false, false)?)
    }
}

impl AccessPath {
    pub fn path_equal(&self, other: &AccessPath) -> Result<bool, Error> {
        let (a, b) = (self.steps(), other.steps());
        if a.len() != b.len() {
            return Ok(false);
        }
        for (x, y) in a.iter().zip(&b) {
            if !x.step_equal(y)? {
                return Ok(false);
            }
        }
        Ok(true)
    }
    /// Whether `other` starts with every step of this path.
    pub fn is_prefix_of(&self, other: &AccessPath) -> Result<bool, Error> {
        let (a, b) = (self.steps(), other.steps());
        if a.len() > b.len() {
            return Ok(false);
        }
        for (x, y) in a.iter().zip(&b) {
            if !x.step_equal(y)? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// Register fields, metadata, methods and repr hooks once.
pub(crate) fn ensure_reflection() {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    let r = DONE.get_or_init(|| register_reflection().map_err(|e| e.message().to_string()));
    if let Err(m) = r {
        panic!("registering access path reflection: {m}");
    }
}

fn method(f: impl Fn(&[AnyView<'_>]) -> Result<Any, Error> + Send + Sync + 'static) -> Result<Function, Error> {
    Function::from_closure(f)
}

fn register_reflection() -> Result<(), Error> {
    TypeBuilder::<AccessStepObj>::new()
        .readonly_field::<i32>("kind", std::mem::offset_of!(AccessStepObj, kind))?
        .readonly_field::<Any>("key", std::mem::offset_of!(AccessStepObj, key))?
        .metadata_with_creator(super::kind::CONST_TREE_NODE)?
        .shallow_copy()?
        .type_final(true)?;
    let step_repr = Function::from_closure(|args| {
        let step = AccessStep::from_object(arg(args, 0, "self")?)?;
        let fn_repr = Function::from_object(arg(args, 1, "fn_repr")?)?;
        Any::string(&step_text(&step, &mut |k| call_repr(&fn_repr, k))?)
    })?;
    crate::reflection::attr_columns::register_attr(AccessStepObj::type_index(), b"__ffi_repr__", Any::from_object(step_repr.into_object()).as_raw())?;

    let path = |args: &[AnyView<'_>]| AccessPath::from_object(arg(args, 0, "self")?);
    let extended = |p: AccessPath, s: Result<AccessStep, Error>| Ok(Any::from_object(p.extend(s?)?.into_object()));
    TypeBuilder::<AccessPathObj>::new()
        .readonly_field::<Option<ObjectRef>>("parent", std::mem::offset_of!(AccessPathObj, parent))?
        .readonly_field::<Option<ObjectRef>>("step", std::mem::offset_of!(AccessPathObj, step))?
        .readonly_field::<i32>("depth", std::mem::offset_of!(AccessPathObj, depth))?
        .static_method("_root", method(|_| Ok(Any::from_object(AccessPath::root()?.into_object())))?)?
        .method("_extend", method(move |a| extended(path(a)?, AccessStep::from_object(arg(a, 1, "step")?)))?)?
        .method("_attr", method(move |a| extended(path(a)?, AccessStep::attr(&arg::<String>(a, 1, "name")?)))?)?
        .method("_array_item", method(move |a| extended(path(a)?, AccessStep::array_item(arg(a, 1, "index")?)))?)?
        .method("_map_item", method(move |a| extended(path(a)?, AccessStep::map_item(arg(a, 1, "key")?)))?)?
        .method("_attr_missing", method(move |a| extended(path(a)?, AccessStep::attr_missing(&arg::<String>(a, 1, "name")?)))?)?
        .method(
            "_array_item_missing",
            method(move |a| extended(path(a)?, AccessStep::array_item_missing(arg(a, 1, "index")?)))?,
        )?
        .method("_map_item_missing", method(move |a| extended(path(a)?, AccessStep::map_item_missing(arg(a, 1, "key")?)))?)?
        .method(
            "_is_prefix_of",
            method(move |a| Ok(Any::from(path(a)?.is_prefix_of(&AccessPath::from_object(arg(a, 1, "other")?)?)?)))?,
        )?
        .method(
            "_to_steps",
            method(move |a| {
                let steps = path(a)?.steps().into_iter().map(|s| Any::from_object(s.into_object())).collect();
                Ok(Any::from_object(Array::new(steps)?.into_object()))
            })?,
        )?
        .method(
            "_path_equal",
            method(move |a| Ok(Any::from(path(a)?.path_equal(&AccessPath::from_object(arg(a, 1, "other")?)?)?)))?,
        )?
        .metadata_with_creator(super::kind::CONST_TREE_NODE)?
        .shallow_copy()?
        .type_final(true)?;
    let path_repr = Function::from_closure(|args| {
        let p = AccessPath::from_object(arg(args, 0, "self")?)?;
        let fn_repr = Function::from_object(arg(args, 1, "fn_repr")?)?;
        let mut text = String::from("<root>");
        for s in p.steps() {
            text.push_str(&call_repr(&fn_repr, &Any::from_object(s.into_object()))?);
        }
        Any::string(&text)
    })?;
    crate::reflection::attr_columns::register_attr(AccessPathObj::type_index(), b"__ffi_repr__", Any::from_object(path_repr.into_object()).as_raw())?;
    Ok(())
}
