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


use crate::abi::TVMFFIObject;
use crate::values::any::Any;
use crate::values::error::Error;
use crate::values::function::Function;
use crate::object::{header_placeholder, ObjectPtr, ObjectRef};
use crate::reflection::{DefaultObject, ShallowCopy};

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
    pub(crate) kind: i32,
    _padding: u32,
    pub(crate) key: Any,
}
object_type!(AccessStepObj, "ffi.reflection.AccessStep");

#[repr(C)]
pub struct AccessPathObj {
    header: TVMFFIObject,
    pub(crate) parent: Option<ObjectRef>,
    pub(crate) step: Option<ObjectRef>,
    pub(crate) depth: i32,
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
        crate::types::start_up::ensure();
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
}

impl AccessPath {
    pub fn root() -> Result<AccessPath, Error> {
        crate::types::start_up::ensure();
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

pub(crate) fn call_repr(fn_repr: &Function, v: &Any) -> Result<String, Error> {
    fn_repr.call(std::slice::from_ref(v))?.get::<String>()
}
