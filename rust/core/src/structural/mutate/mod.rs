//! Structural rewriting (`ffi.StructuralMap`, `ffi.StructuralMutate`) with
//! TVM-FFI's semantics, and the `ffi.StructuralMutator` its callbacks see.
//!
//! * Results are *unchanged* or a replacement; a value whose children are
//!   all unchanged stays the same object. Changes are copy-on-write: a
//!   container or object with a changed child is copied (objects through
//!   their `__ffi_shallow_copy__` hook, or field by field for run-time
//!   dataclass types) and the copy gets the new children, so the input is
//!   left intact.
//! * In place: a List or Dict reached only through uniquely owned values
//!   from a root the caller gave away (`root._move()` in Python) is updated
//!   in place instead (`InplaceMode.ALLOW`). A type may add its own in-place
//!   hook `__s_maybe_inplace_mutate__`; `__s_mutate__` replaces the default
//!   descent altogether (both called as `hook(mutator, value)`).
//! * Default descent: PODs come back as they are; strings and bytes are
//!   unchanged; Array/List elements and Map/Dict values are mutated; other
//!   objects get their reflected fields mutated (skipping `SEqHashIgnore`,
//!   def regions as in [`super::visit`]). FreeVar and DAG nodes consult the
//!   variable remap first (a hit is the result); a FreeVar outside a def
//!   region is a use and stays unchanged; after descent a DAG node, a
//!   pattern definition or a changed simple definition records its result.
//! * `structural_map` calls the first matching callback (`f(value)`, then
//!   `f(value, def_region_kind)`) on each value before descent (pre-order:
//!   descent then runs on what it returned) or after it (post-order: on what
//!   descent produced). `structural_mutate` hands a matching value to its
//!   callback as `f(value, mutator[, inplace_mode])`, which owns the descent.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::OnceLock;

use parking_lot::Mutex;

use crate::abi::{field_flag, type_index as ti, TVMFFIAny, TVMFFIObject};
use crate::any::{Any, AnyView};
use crate::containers::{Array, Dict, List, Map};
use crate::dataclass;
use crate::error::Error;
use crate::function::Function;
use crate::object::{header_placeholder, ObjectPtr, ObjectRef, ObjectType};
use crate::reflection::TypeBuilder;
use crate::type_registry;

use super::typed_args::{find_entry, Entry, Sig};
use super::visit::declared_kind;
use super::{deep_stack, def_region, kind, Global};

mod globals;
pub(crate) use globals::globals;

/// A mutation result: `None` is "unchanged" (keep the original).
pub type Mutated = Option<Any>;

/// Whether the current path may be mutated in place (`InplaceMode`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum InplaceMode {
    Disallow = 0,
    Allow = 1,
}

enum Engine {
    Map {
        callbacks: Vec<Entry>,
        with_kind: Vec<Entry>,
        post_order: bool,
    },
    Mutate {
        callbacks: Vec<Entry>,
    },
}

/// An active rewrite: its callbacks, def region and variable remap.
#[repr(C)]
pub struct StructuralMutatorObj {
    header: TVMFFIObject,
    region: AtomicI32,
    engine: Engine,
    /// Keyed by the variable's address; the entry keeps the variable alive.
    remap: Mutex<HashMap<usize, (ObjectRef, Mutated)>>,
}
crate::object_type!(StructuralMutatorObj, "ffi.StructuralMutator");

/// A structural mutator (the object callbacks receive).
#[derive(Clone)]
pub struct StructuralMutator(ObjectPtr<StructuralMutatorObj>);

/// The raw form of "unchanged" (`kTVMFFIUnchanged`), for hooks that return it.
fn unchanged_marker() -> Any {
    let raw = TVMFFIAny {
        type_index: ti::kTVMFFIUnchanged,
        ..TVMFFIAny::NONE
    };
    // SAFETY: a POD type index with a zero payload owns nothing.
    unsafe { Any::from_raw_owned(raw) }
}

fn from_hook(v: Any) -> Mutated {
    (v.type_index() != ti::kTVMFFIUnchanged).then_some(v)
}

/// Whether `result` leaves `original` as it was (unchanged or the same value).
fn keeps(result: &Mutated, original: &Any) -> bool {
    match result {
        None => true,
        Some(v) => v.same_value(original),
    }
}

/// Whether `v`, of which the caller holds one of `owners` references, is
/// owned by nobody else.
fn unique(v: &Any, owners: u32) -> bool {
    // `as_object` hands out one more reference for the check itself.
    v.as_object().is_some_and(|o| o.use_count() == owners + 2)
}

impl StructuralMutator {
    fn new(engine: Engine) -> Result<StructuralMutator, Error> {
        ensure_reflection();
        Ok(StructuralMutator(ObjectPtr::new(StructuralMutatorObj {
            header: header_placeholder(),
            region: AtomicI32::new(def_region::NONE),
            engine,
            remap: Mutex::new(HashMap::new()),
        })?))
    }

    pub fn from_object(obj: ObjectRef) -> Result<StructuralMutator, Error> {
        obj.downcast::<StructuralMutatorObj>()
            .map(StructuralMutator)
    }

    fn as_any(&self) -> Any {
        Any::from_object(self.0.to_object_ref())
    }

    pub fn def_region_kind(&self) -> i32 {
        self.0.region.load(Ordering::Relaxed)
    }

    /// Run `body` inside def region `kind` (no effect inside a pattern).
    pub fn with_def_region_kind<R>(&self, kind: i32, body: impl FnOnce() -> R) -> R {
        let old = self.def_region_kind();
        if old == def_region::PATTERN {
            return body();
        }
        self.0.region.store(kind, Ordering::Relaxed);
        let r = body();
        self.0.region.store(old, Ordering::Relaxed);
        r
    }

    /// The replacement recorded for `var`: `Ok(None)` on a miss,
    /// `Ok(Some(None))` for a recorded "unchanged".
    pub fn var_remap_get(&self, var: &Any) -> Result<Option<Mutated>, Error> {
        let p = var.object_ptr().ok_or_else(|| {
            Error::type_error("Variable-remap key must be an object-backed value")
        })?;
        Ok(match self.0.remap.lock().get(&(p as usize)) {
            Some((_, Some(v))) if v.is_none() => None,
            Some((_, m)) => Some(m.clone()),
            None => None,
        })
    }

    pub fn var_remap_set(&self, var: &Any, mapped: Mutated) -> Result<(), Error> {
        let obj = var.as_object().ok_or_else(|| {
            Error::type_error("Variable-remap key must be an object-backed value")
        })?;
        self.0
            .remap
            .lock()
            .insert(obj.as_ptr() as usize, (obj, mapped));
        Ok(())
    }

    /// Mutate `value`, of which the caller holds `owners` references; in
    /// place only with `Allow` and no other owner.
    pub fn mutate(&self, value: &Any, mode: InplaceMode, owners: u32) -> Result<Mutated, Error> {
        let mode = if mode == InplaceMode::Allow && unique(value, owners) {
            InplaceMode::Allow
        } else {
            InplaceMode::Disallow
        };
        deep_stack::guarded(|| match &self.0.engine {
            Engine::Map {
                callbacks,
                with_kind,
                post_order,
            } => self.map_one(callbacks, with_kind, *post_order, value, mode),
            Engine::Mutate { callbacks } => match find_entry(callbacks, value.type_index()) {
                Some(e) => {
                    let mut args = vec![value.clone(), self.as_any()];
                    if e.takes_mode {
                        args.push(Any::from(mode as i64));
                    }
                    Ok(from_hook(e.callback.call(&args)?))
                }
                None => self.default_mutate(value, mode),
            },
        })
    }

    fn map_link<'a>(
        callbacks: &'a [Entry],
        with_kind: &'a [Entry],
        index: i32,
    ) -> Option<(&'a Entry, bool)> {
        find_entry(callbacks, index)
            .map(|e| (e, false))
            .or_else(|| find_entry(with_kind, index).map(|e| (e, true)))
    }

    fn call_link(&self, link: (&Entry, bool), v: &Any) -> Result<Mutated, Error> {
        let r = if link.1 {
            link.0
                .callback
                .call(&[v.clone(), Any::from(self.def_region_kind() as i64)])?
        } else {
            link.0.callback.call(std::slice::from_ref(v))?
        };
        Ok(from_hook(r))
    }

    fn map_one(
        &self,
        cbs: &[Entry],
        kinds: &[Entry],
        post: bool,
        value: &Any,
        mode: InplaceMode,
    ) -> Result<Mutated, Error> {
        if post {
            let out = self.default_mutate(value, mode)?;
            let view = out.as_ref().unwrap_or(value);
            let Some(link) = Self::map_link(cbs, kinds, view.type_index()) else {
                return Ok(out);
            };
            return Ok(self.call_link(link, view)?.or(out));
        }
        let Some(link) = Self::map_link(cbs, kinds, value.type_index()) else {
            return self.default_mutate(value, mode);
        };
        let mapped = self.call_link(link, value)?;
        let out = match &mapped {
            None => self.default_mutate(value, mode)?,
            Some(m) if m.same_value(value) => self.default_mutate(m, mode)?,
            // A fresh result nobody else holds may be changed in place.
            Some(m) => self.default_mutate(
                m,
                if mode == InplaceMode::Allow && unique(m, 0) {
                    mode
                } else {
                    InplaceMode::Disallow
                },
            )?,
        };
        Ok(out.or(mapped))
    }

    /// The default descent into `value`, bypassing the callbacks for it.
    pub fn default_mutate(&self, value: &Any, mode: InplaceMode) -> Result<Mutated, Error> {
        let index = value.type_index();
        if mode == InplaceMode::Allow {
            match hook(index, b"__s_maybe_inplace_mutate__")? {
                Some(h) => return Ok(from_hook(h.call(&[self.as_any(), value.clone()])?)),
                None => match index {
                    ti::kTVMFFIList => {
                        return self.list_in_place(&List::from_object(value.get()?)?)
                    }
                    ti::kTVMFFIDict => {
                        return self.dict_in_place(&Dict::from_object(value.get()?)?)
                    }
                    _ => {}
                },
            }
        }
        if let Some(h) = hook(index, b"__s_mutate__")? {
            return Ok(from_hook(h.call(&[self.as_any(), value.clone()])?));
        }
        if !super::is_object_index(index) {
            return Ok(Some(value.clone()));
        }
        let obj = value.as_object().expect("object index");
        match index {
            ti::kTVMFFIStr | ti::kTVMFFIBytes | ti::kTVMFFIBigInt => Ok(None),
            ti::kTVMFFIArray => {
                let items: Vec<Any> = Array::from_object(obj)?.iter().cloned().collect();
                Ok(self
                    .sequence(&items)?
                    .map(|v| Array::new(v).map(|a| Any::from_object(a.into_object())))
                    .transpose()?)
            }
            ti::kTVMFFIList => {
                let items = List::from_object(obj)?.to_vec();
                Ok(self
                    .sequence(&items)?
                    .map(|v| List::new(v).map(|a| Any::from_object(a.into_object())))
                    .transpose()?)
            }
            ti::kTVMFFIMap => {
                let pairs = Map::from_object(obj)?.items();
                Ok(self
                    .values(&pairs)?
                    .map(|p| Map::new(p).map(|m| Any::from_object(m.into_object())))
                    .transpose()?)
            }
            ti::kTVMFFIDict => {
                let pairs = Dict::from_object(obj)?.items();
                Ok(self
                    .values(&pairs)?
                    .map(|p| Dict::new(p).map(|m| Any::from_object(m.into_object())))
                    .transpose()?)
            }
            _ => self.mutate_object(value, &obj),
        }
    }

    /// Copy-on-write over elements: `None` when every element is kept.
    fn sequence(&self, items: &[Any]) -> Result<Option<Vec<Any>>, Error> {
        let mut out: Option<Vec<Any>> = None;
        for (i, it) in items.iter().enumerate() {
            let m = self.mutate(it, InplaceMode::Disallow, 1)?;
            match (&mut out, keeps(&m, it)) {
                (Some(v), _) => v.push(m.unwrap_or_else(|| it.clone())),
                (None, true) => {}
                (None, false) => {
                    let mut v: Vec<Any> = items[..i].to_vec();
                    v.push(m.expect("changed"));
                    out = Some(v);
                }
            }
        }
        Ok(out)
    }

    /// Copy-on-write over map values, keys kept.
    fn values(&self, pairs: &[(Any, Any)]) -> Result<Option<Vec<(Any, Any)>>, Error> {
        let mut out: Option<Vec<(Any, Any)>> = None;
        for (i, (k, v)) in pairs.iter().enumerate() {
            let m = self.mutate(v, InplaceMode::Disallow, 2)?;
            match (&mut out, keeps(&m, v)) {
                (Some(o), _) => o.push((k.clone(), m.unwrap_or_else(|| v.clone()))),
                (None, true) => {}
                (None, false) => {
                    let mut o: Vec<(Any, Any)> = pairs[..i].to_vec();
                    o.push((k.clone(), m.expect("changed")));
                    out = Some(o);
                }
            }
        }
        Ok(out)
    }

    fn list_in_place(&self, list: &List) -> Result<Mutated, Error> {
        let mut i = 0;
        while (i as usize) < list.len() {
            let item = list.get(i)?;
            let m = self.mutate(&item, InplaceMode::Allow, 1)?;
            if !keeps(&m, &item) {
                list.set(i, m.expect("changed"))?;
            }
            i += 1;
        }
        Ok(None)
    }

    fn dict_in_place(&self, dict: &Dict) -> Result<Mutated, Error> {
        // Each value has two owners here: the Dict and `items`.
        for (k, v) in dict.items() {
            let m = self.mutate(&v, InplaceMode::Allow, 2)?;
            if !keeps(&m, &v) {
                dict.set(k, m.expect("changed"))?;
            }
        }
        Ok(None)
    }

    fn mutate_object(&self, value: &Any, obj: &ObjectRef) -> Result<Mutated, Error> {
        let k = declared_kind(obj.type_index());
        let is_var = k == kind::FREE_VAR;
        let is_dag = k == kind::DAG_NODE;
        if is_var || is_dag {
            if let Some(hit) = self.var_remap_get(value)? {
                return Ok(hit);
            }
        }
        if is_var && self.def_region_kind() == def_region::NONE {
            return Ok(None);
        }
        let result = self.mutate_fields(obj)?;
        if (is_var || is_dag)
            && (is_dag || self.def_region_kind() == def_region::PATTERN || result.is_some())
        {
            self.var_remap_set(value, result.clone())?;
        }
        Ok(result)
    }

    fn mutate_fields(&self, obj: &ObjectRef) -> Result<Mutated, Error> {
        let copy = shallow_copy(obj)?;
        let index = copy.type_index();
        let fields = || -> Result<bool, Error> {
            let mut changed = false;
            for field in type_registry::all_fields(index) {
                if field.flags & field_flag::kSEqHashIgnore != 0 {
                    continue;
                }
                let v = super::read_field(&copy, field)?;
                let m = if field.flags & field_flag::kSEqHashDefSimple != 0 {
                    self.with_def_region_kind(def_region::SIMPLE, || {
                        self.mutate(&v, InplaceMode::Disallow, 1)
                    })
                } else if field.flags & field_flag::kSEqHashDefPattern != 0 {
                    self.with_def_region_kind(def_region::PATTERN, || {
                        self.mutate(&v, InplaceMode::Disallow, 1)
                    })
                } else {
                    self.mutate(&v, InplaceMode::Disallow, 1)
                }?;
                if keeps(&m, &v) {
                    continue;
                }
                if field.setter.is_null() {
                    return Err(Error::type_error(format!(
                        "Cannot structurally mutate field `{}` of type `{}` because it does not define a setter",
                        super::field_name(field),
                        type_registry::type_key_of(index)
                    )));
                }
                dataclass::set_field(&copy, field, m.expect("changed").as_raw())?;
                changed = true;
            }
            Ok(changed)
        };
        let changed = if self.def_region_kind() == def_region::SIMPLE
            && declared_kind(index) == kind::FREE_VAR
        {
            self.with_def_region_kind(def_region::NONE, fields)?
        } else {
            fields()?
        };
        Ok(changed.then(|| Any::from_object(copy)))
    }
}

fn hook(index: i32, name: &[u8]) -> Result<Option<Function>, Error> {
    match type_registry::attr_value(index, name) {
        None => Ok(None),
        Some(a) if a.is_none() => Ok(None),
        Some(a) if a.type_index() == ti::kTVMFFIFunction => {
            Ok(Some(Function::from_object(a.get::<ObjectRef>()?)?))
        }
        Some(_) if name == b"__s_mutate__" => Err(Error::type_error(
            "__s_mutate__ must be a direct hook pointer or ffi.Function",
        )),
        Some(_) => Err(Error::type_error(format!(
            "{} must be a direct hook pointer or ffi.Function",
            String::from_utf8_lossy(name)
        ))),
    }
}

/// A distinct copy of `obj` through `__ffi_shallow_copy__` (run-time
/// dataclass types are copied field by field without one).
fn shallow_copy(obj: &ObjectRef) -> Result<ObjectRef, Error> {
    let index = obj.type_index();
    let copy = match type_registry::attr_value(index, b"__ffi_shallow_copy__") {
        Some(h) if h.type_index() == ti::kTVMFFIFunction => {
            Function::from_object(h.get::<ObjectRef>()?)?.call(&[Any::from_object(obj.clone())])?
        }
        _ if dataclass::is_dataclass(index) => {
            let copy = dataclass::new_instance(index)?;
            for f in type_registry::all_fields(index) {
                dataclass::set_field(&copy, f, dataclass::get_field(obj, f)?.as_raw())?;
            }
            Any::from_object(copy)
        }
        _ => {
            return Err(Error::type_error(
                "__ffi_shallow_copy__ must be an ffi.Function",
            ))
        }
    };
    match copy.as_object() {
        Some(c) if c.type_index() == index && !c.same_as(obj) => Ok(c),
        _ => Err(Error::type_error(
            "Shallow copy callback must return a distinct object with the same type as its input",
        )),
    }
}

/// `root` with the callbacks applied (see the module documentation).
/// `root` is held here and by `others` other owners; with none, its
/// unique parts are changed in place.
pub fn structural_map(
    root: Any,
    callbacks: Vec<Entry>,
    with_kind: Vec<Entry>,
    post_order: bool,
) -> Result<Any, Error> {
    let m = StructuralMutator::new(Engine::Map {
        callbacks,
        with_kind,
        post_order,
    })?;
    Ok(m.mutate(&root, InplaceMode::Allow, 0)?.unwrap_or(root))
}

/// `root` rewritten by callbacks that own their descent.
pub fn structural_mutate(root: Any, callbacks: Vec<Entry>) -> Result<Any, Error> {
    let m = StructuralMutator::new(Engine::Mutate { callbacks })?;
    Ok(m.mutate(&root, InplaceMode::Allow, 0)?.unwrap_or(root))
}

pub(crate) fn ensure_reflection() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        TypeBuilder::<StructuralMutatorObj>::new();
    });
}
