//! Access paths: where inside a value something is, as TVM-FFI's
//! `ffi.reflection.AccessStep` / `ffi.reflection.AccessPath` objects
//! (first-mismatch reports of structural equality use them).
//!
//! A path is a parent-linked list of steps from the root; each step is an
//! attribute, an array index or a map key, or the "missing" form of each
//! (the other side has no such element). Field layouts match upstream's
//! (`kind` and `depth` are 32-bit, followed by padding that C++ code
//! constructing these objects leaves uninitialised and nothing reads), and
//! both types are ConstTreeNodes for structural equality, as upstream
//! declares them.

use std::sync::OnceLock;

use crate::abi::TVMFFIObject;
use crate::values::any::{Any, AnyView};
use crate::containers::Array;
use crate::values::error::Error;
use crate::values::function::{arg, Function};
use crate::object::{header_placeholder, ObjectPtr, ObjectRef, ObjectType};
use crate::reflection::{DefaultObject, ShallowCopy, TypeBuilder};

/// `AccessKind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum AccessKind {
    Attr = 0,
    ArrayItem = 1,
    MapItem = 2,
    AttrMissing = 3,
    ArrayItemMissing = 4,
    MapItemMissing = 5,
}

impl AccessKind {
    fn from_i32(v: i32) -> Result<AccessKind, Error> {
        Ok(match v {
            0 => AccessKind::Attr,
            1 => AccessKind::ArrayItem,
            2 => AccessKind::MapItem,
            3 => AccessKind::AttrMissing,
            4 => AccessKind::ArrayItemMissing,
            5 => AccessKind::MapItemMissing,
            _ => return Err(Error::value_error(format!("unknown access kind {v}"))),
        })
    }
}

#[repr(C)]
pub struct AccessStepObj {
    header: TVMFFIObject,
    kind: i32,
    _padding: u32,
    key: Any,
}
object_type!(AccessStepObj, "ffi.reflection.AccessStep");

#[repr(C)]
pub struct AccessPathObj {
    header: TVMFFIObject,
    parent: Option<ObjectRef>,
    step: Option<ObjectRef>,
    depth: i32,
    _padding: u32,
}
object_type!(AccessPathObj, "ffi.reflection.AccessPath");

impl DefaultObject for AccessStepObj {
    fn default_object() -> Self {
        AccessStepObj { header: header_placeholder(), kind: AccessKind::Attr as i32, _padding: 0, key: Any::none() }
    }
}

impl ShallowCopy for AccessStepObj {
    fn shallow_copy(&self) -> Self {
        AccessStepObj { header: header_placeholder(), kind: self.kind, _padding: 0, key: self.key.clone() }
    }
}

impl DefaultObject for AccessPathObj {
    fn default_object() -> Self {
        AccessPathObj { header: header_placeholder(), parent: None, step: None, depth: 0, _padding: 0 }
    }
}

impl ShallowCopy for AccessPathObj {
    fn shallow_copy(&self) -> Self {
        AccessPathObj {
            header: header_placeholder(),
            parent: self.parent.clone(),
            step: self.step.clone(),
            depth: self.depth,
            _padding: 0,
        }
    }
}

/// One step of a path.
#[derive(Clone)]
pub struct AccessStep(ObjectPtr<AccessStepObj>);

/// A path from the root.
#[derive(Clone)]
pub struct AccessPath(ObjectPtr<AccessPathObj>);

impl AccessStep {
    pub fn new(kind: AccessKind, key: Any) -> Result<AccessStep, Error> {
        ensure_reflection();
        Ok(AccessStep(ObjectPtr::new(AccessStepObj { header: header_placeholder(), kind: kind as i32, _padding: 0, key })?))
    }
    pub fn attr(name: &str) -> Result<AccessStep, Error> {
        AccessStep::new(AccessKind::Attr, Any::string(name)?)
    }
    pub fn array_item(i: i64) -> Result<AccessStep, Error> {
        AccessStep::new(AccessKind::ArrayItem, Any::from(i))
    }
    pub fn map_item(key: Any) -> Result<AccessStep, Error> {
        AccessStep::new(AccessKind::MapItem, key)
    }
    pub fn attr_missing(name: &str) -> Result<AccessStep, Error> {
        AccessStep::new(AccessKind::AttrMissing, Any::string(name)?)
    }
    pub fn array_item_missing(i: i64) -> Result<AccessStep, Error> {
        AccessStep::new(AccessKind::ArrayItemMissing, Any::from(i))
    }
    pub fn map_item_missing(key: Any) -> Result<AccessStep, Error> {
        AccessStep::new(AccessKind::MapItemMissing, key)
    }
    pub fn kind(&self) -> AccessKind {
        AccessKind::from_i32(self.0.kind).unwrap_or(AccessKind::Attr)
    }
    pub fn key(&self) -> &Any {
        &self.0.key
    }
    pub fn from_object(obj: ObjectRef) -> Result<AccessStep, Error> {
        obj.downcast::<AccessStepObj>().map(AccessStep).map_err(Error::from)
    }
    pub fn into_object(self) -> ObjectRef {
        self.0.into_object_ref()
    }
    /// Same kind and key (keys compared structurally).
    pub fn step_equal(&self, other: &AccessStep) -> Result<bool, Error> {
        Ok(self.0.kind == other.0.kind && super::equal::structural_equal(&self.0.key, &other.0.key, false, false)?)
    }
}

impl AccessPath {
    pub fn root() -> Result<AccessPath, Error> {
        ensure_reflection();
        Ok(AccessPath(ObjectPtr::new(AccessPathObj { header: header_placeholder(), parent: None, step: None, depth: 0, _padding: 0 })?))
    }
    pub fn from_steps(steps: impl IntoIterator<Item = AccessStep>) -> Result<AccessPath, Error> {
        let mut p = AccessPath::root()?;
        for s in steps {
            p = p.extend(s)?;
        }
        Ok(p)
    }
    pub fn extend(&self, step: AccessStep) -> Result<AccessPath, Error> {
        Ok(AccessPath(ObjectPtr::new(AccessPathObj {
            header: header_placeholder(),
            parent: Some(self.0.to_object_ref()),
            step: Some(step.into_object()),
            depth: self.0.depth + 1,
            _padding: 0,
        })?))
    }
    pub fn depth(&self) -> i64 {
        self.0.depth as i64
    }
    /// The steps from the root, in order.
    pub fn steps(&self) -> Vec<AccessStep> {
        let mut out = Vec::with_capacity(self.0.depth.max(0) as usize);
        let mut cur = self.clone();
        while let (Some(step), Some(parent)) = (cur.0.step.clone(), cur.0.parent.clone()) {
            match (AccessStep::from_object(step), parent.downcast::<AccessPathObj>()) {
                (Ok(s), Ok(p)) => {
                    out.push(s);
                    cur = AccessPath(p);
                }
                _ => break,
            }
        }
        out.reverse();
        out
    }
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
    pub fn from_object(obj: ObjectRef) -> Result<AccessPath, Error> {
        obj.downcast::<AccessPathObj>().map(AccessPath).map_err(Error::from)
    }
    pub fn into_object(self) -> ObjectRef {
        self.0.into_object_ref()
    }
}

/// The text of one step, given a repr for keys (upstream's `__ffi_repr__`).
pub fn step_text(step: &AccessStep, repr: &mut dyn FnMut(&Any) -> Result<String, Error>) -> Result<String, Error> {
    let key = step.key();
    Ok(match step.kind() {
        AccessKind::Attr => format!(".{}", key.get::<String>()?),
        AccessKind::ArrayItem => format!("[{}]", key.get::<i64>()?),
        AccessKind::MapItem => format!("[{}]", repr(key)?),
        AccessKind::AttrMissing | AccessKind::MapItemMissing => format!("[<missing:{}>]", repr(key)?),
        AccessKind::ArrayItemMissing => format!("[<missing:{}>]", key.get::<i64>()?),
    })
}

fn call_repr(fn_repr: &Function, v: &Any) -> Result<String, Error> {
    fn_repr.call(std::slice::from_ref(v))?.get::<String>()
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
