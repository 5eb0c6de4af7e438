//! `ffi.VisitErrorContext` and `VisitErrorContext::FindAccessPaths`
//! (global `ffi.VisitErrorContext.FindAccessPaths`), as TVM-FFI defines
//! them.
//!
//! A recursive visit instrumented with TVM-FFI's `TVM_FFI_VISIT_*` macros
//! attaches this object to the error it throws: `reverse_visit_pattern`
//! lists the objects being visited, innermost first. Finding the access
//! paths turns that breadcrumb trail back into positions inside a root:
//! the walk descends through reflected fields, sequence items and map
//! values, matches the trail's entries (outermost first, by identity) in
//! order along the way, and records the path wherever the whole trail
//! matched — or, with `allow_prefix_match`, where a partly matched descent
//! ended without any deeper result. Consecutive duplicate entries count
//! once. As in TVM-FFI, only objects are matched (the root always is, a
//! container root is not descended into), objects whose type has no
//! metadata are not descended into, and None items and entries are skipped.
//!
//! Beyond TVM-FFI, cyclic graphs terminate: an object met again on the
//! current descent with no more of the trail matched since is not
//! descended into again (TVM-FFI recurses without end), and deep graphs
//! continue on a new stack segment of the calling thread ([`super::deep_stack`]).

use std::collections::HashSet;
use std::sync::OnceLock;

use crate::abi::{type_index as ti, TVMFFIAny, TVMFFIObject};
use crate::any::Any;
use crate::containers::{Array, List};
use crate::error::Error;
use crate::function::Function;
use crate::object::{header_placeholder, ObjectPtr, ObjectRef, ObjectType};
use crate::reflection::{DefaultObject, ShallowCopy, TypeBuilder};
use crate::type_registry;

use super::access_path::{AccessPath, AccessStep};
use super::typed_args::Sig;
use super::{deep_stack, Global, MapLike};

/// TVM-FFI's `VisitErrorContextObj` layout: the pattern (a `List`) and the
/// previous error context (an optional object), one pointer each.
#[repr(C)]
pub struct VisitErrorContextObj {
    header: TVMFFIObject,
    reverse_visit_pattern: Option<ObjectRef>,
    prev_error_context: Option<ObjectRef>,
}
crate::object_type!(VisitErrorContextObj, "ffi.VisitErrorContext");

/// A visit error context.
#[derive(Clone)]
pub struct VisitErrorContext(ObjectPtr<VisitErrorContextObj>);

impl VisitErrorContext {
    /// A context whose pattern holds `reverse_visit_pattern` (innermost
    /// first).
    pub fn new(reverse_visit_pattern: Vec<ObjectRef>, prev_error_context: Option<ObjectRef>) -> Result<VisitErrorContext, Error> {
        ensure_reflection();
        let list = List::new(reverse_visit_pattern.into_iter().map(Any::from_object).collect())?;
        Ok(VisitErrorContext(ObjectPtr::new(VisitErrorContextObj {
            header: header_placeholder(),
            reverse_visit_pattern: Some(list.into_object()),
            prev_error_context,
        })?))
    }
    pub fn from_object(obj: ObjectRef) -> Result<VisitErrorContext, Error> {
        ensure_reflection();
        obj.downcast::<VisitErrorContextObj>().map(VisitErrorContext)
    }
    pub fn into_object(self) -> ObjectRef {
        self.0.into_object_ref()
    }
    /// The recorded entries, innermost first (None entries as None).
    pub fn reverse_visit_pattern(&self) -> Result<Vec<Option<ObjectRef>>, Error> {
        let Some(list) = self.0.reverse_visit_pattern.clone() else { return Ok(Vec::new()) };
        List::from_object(list)?.to_vec().into_iter().map(|v| v.get::<Option<ObjectRef>>()).collect()
    }
    pub fn prev_error_context(&self) -> Option<ObjectRef> {
        self.0.prev_error_context.clone()
    }
}

impl DefaultObject for VisitErrorContextObj {
    /// An empty pattern (a List, as upstream's default member) and no
    /// previous context.
    fn default_object() -> Self {
        let list = List::new(Vec::new()).expect("allocating an empty List");
        VisitErrorContextObj { header: header_placeholder(), reverse_visit_pattern: Some(list.into_object()), prev_error_context: None }
    }
}

impl ShallowCopy for VisitErrorContextObj {
    fn shallow_copy(&self) -> Self {
        VisitErrorContextObj {
            header: header_placeholder(),
            reverse_visit_pattern: self.reverse_visit_pattern.clone(),
            prev_error_context: self.prev_error_context.clone(),
        }
    }
}

/// Register the type's fields and creator (once).
pub(crate) fn ensure_reflection() {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    let r = DONE.get_or_init(|| {
        (|| -> Result<(), Error> {
            TypeBuilder::<VisitErrorContextObj>::new()
                .readonly_field_of_type::<Option<ObjectRef>>(
                    "reverse_visit_pattern",
                    std::mem::offset_of!(VisitErrorContextObj, reverse_visit_pattern),
                    ti::kTVMFFIList,
                )?
                .readonly_field::<Option<ObjectRef>>("prev_error_context", std::mem::offset_of!(VisitErrorContextObj, prev_error_context))?
                .metadata_with_creator(super::kind::UNSUPPORTED)?
                .shallow_copy()?
                .type_final(true)?;
            Ok(())
        })()
        .map_err(|e| e.message().to_string())
    });
    if let Err(m) = r {
        panic!("registering ffi.VisitErrorContext reflection: {m}");
    }
}

/// Record that `err` propagated out of the visit of `node`, as TVM-FFI's
/// `UpdateVisitErrorContext` does: the node is appended to the error's
/// visit context (created, keeping any other context as its previous one,
/// when the error has none). Values that are not objects leave no trace.
pub fn update_visit_error_context(err: Error, node: &TVMFFIAny) -> Error {
    if node.type_index < ti::kTVMFFIStaticObjectBegin {
        return err;
    }
    let attach = || -> Result<Error, Error> {
        let node = Any::from_view(node)?;
        let obj = err.to_object()?;
        let previous = crate::error::extra_context(&obj);
        if let Some(prev) = &previous {
            if let Ok(ctx) = prev.clone().downcast::<VisitErrorContextObj>() {
                if let Some(list) = ctx.reverse_visit_pattern.clone() {
                    List::from_object(list)?.push(node)?;
                    return Ok(Error::from_object(obj));
                }
            }
        }
        let ctx = VisitErrorContext::new(vec![node.get::<ObjectRef>()?], previous)?;
        crate::error::set_extra_context(&obj, ctx.into_object());
        Ok(Error::from_object(obj))
    };
    match attach() {
        Ok(e) => e,
        Err(_) => err,
    }
}

/// The paths inside `root` at which `context`'s pattern matches.
pub fn find_access_paths(root: &ObjectRef, context: &VisitErrorContext, allow_prefix_match: bool) -> Result<Vec<AccessPath>, Error> {
    // Access paths made by C++ code alone have not registered their fields yet.
    super::access_path::ensure_reflection();
    let mut records: Vec<ObjectRef> = Vec::new();
    for entry in context.reverse_visit_pattern()?.into_iter().flatten() {
        if records.last().is_some_and(|last| last.as_ptr() == entry.as_ptr()) {
            continue;
        }
        records.push(entry);
    }
    let mut finder = Finder {
        records,
        allow_prefix_match,
        matched: 0,
        steps: Vec::new(),
        materialized: Vec::new(),
        results: Vec::new(),
        on_path: HashSet::new(),
    };
    finder.visit_object(root)?;
    Ok(finder.results)
}

enum Step {
    Attr(String),
    ArrayItem(i64),
    MapItem(Any),
}

struct Finder {
    /// The normalized pattern, innermost first.
    records: Vec<ObjectRef>,
    allow_prefix_match: bool,
    /// How many records (from the outermost) the current descent matched.
    matched: usize,
    steps: Vec<Step>,
    /// `materialized[k]` is the path of `steps[..=k]` (a prefix of them is
    /// built, on demand, so results sharing a prefix share its objects).
    materialized: Vec<AccessPath>,
    results: Vec<AccessPath>,
    /// (object address, records matched) on the current descent.
    on_path: HashSet<(usize, usize)>,
}

impl Finder {
    fn visit_any(&mut self, value: Any) -> Result<(), Error> {
        match value.type_index() {
            index if !super::is_object_index(index) => Ok(()),
            ti::kTVMFFIArray | ti::kTVMFFIList => {
                let items = super::recursive_compare::sequence_items(value.as_object().expect("object index"))?;
                for (i, item) in items.into_iter().enumerate() {
                    if item.is_none() {
                        continue;
                    }
                    self.steps.push(Step::ArrayItem(i as i64));
                    let r = self.visit_any(item);
                    self.pop_step();
                    r?;
                }
                Ok(())
            }
            ti::kTVMFFIMap | ti::kTVMFFIDict => {
                for (k, v) in MapLike::from_object(value.as_object().expect("object index"))?.items() {
                    if k.is_none() || v.is_none() {
                        continue;
                    }
                    self.steps.push(Step::MapItem(k));
                    let r = self.visit_any(v);
                    self.pop_step();
                    r?;
                }
                Ok(())
            }
            _ => self.visit_object(&value.as_object().expect("object index")),
        }
    }

    fn visit_object(&mut self, node: &ObjectRef) -> Result<(), Error> {
        let Some(info) = type_registry::type_info(node.type_index()) else { return Ok(()) };
        if info.metadata.is_null() {
            return Ok(());
        }
        let key = (node.as_ptr() as usize, self.matched);
        if !self.on_path.insert(key) {
            return Ok(());
        }
        let n = self.records.len();
        let matched_step = self.matched < n && node.as_ptr() == self.records[n - 1 - self.matched].as_ptr();
        let result = if matched_step && self.matched + 1 == n {
            self.materialize().map(|p| self.results.push(p))
        } else {
            if matched_step {
                self.matched += 1;
            }
            let r = deep_stack::guarded(|| self.visit_fields(node));
            if matched_step {
                self.matched -= 1;
            }
            r
        };
        self.on_path.remove(&key);
        result
    }

    fn visit_fields(&mut self, node: &ObjectRef) -> Result<(), Error> {
        let before = self.results.len();
        for field in type_registry::all_fields(node.type_index()) {
            let child = super::read_field(node, field)?;
            self.steps.push(Step::Attr(super::field_name(field)));
            let r = self.visit_any(child);
            self.pop_step();
            r?;
        }
        if self.allow_prefix_match
            && self.matched > 0
            && self.matched < self.records.len()
            && !self.steps.is_empty()
            && self.results.len() == before
        {
            let p = self.materialize()?;
            self.results.push(p);
        }
        Ok(())
    }

    fn pop_step(&mut self) {
        self.steps.pop();
        self.materialized.truncate(self.steps.len());
    }

    fn materialize(&mut self) -> Result<AccessPath, Error> {
        if self.steps.is_empty() {
            return AccessPath::root();
        }
        for i in self.materialized.len()..self.steps.len() {
            let parent = if i == 0 { AccessPath::root()? } else { self.materialized[i - 1].clone() };
            let step = match &self.steps[i] {
                Step::Attr(name) => AccessStep::attr(name)?,
                Step::ArrayItem(index) => AccessStep::array_item(*index)?,
                Step::MapItem(key) => AccessStep::map_item(key.clone())?,
            };
            self.materialized.push(parent.extend(step)?);
        }
        Ok(self.materialized.last().expect("non-empty").clone())
    }
}

/// `ffi.VisitErrorContext.FindAccessPaths(root, context, allow_prefix_match)`.
pub(crate) fn globals() -> Vec<Global> {
    ensure_reflection();
    let sig = Sig {
        name: "ffi.VisitErrorContext.FindAccessPaths",
        params: &["ffi.Object", "ffi.VisitErrorContext", "bool"],
        ret: "Array<ffi.reflection.AccessPath>",
    };
    vec![(
        "ffi.VisitErrorContext.FindAccessPaths",
        Function::from_closure(move |args| {
            sig.check_count(args)?;
            let root = sig.object(args, 0, ti::kTVMFFIObject)?;
            let context = VisitErrorContext::from_object(sig.object(args, 1, VisitErrorContextObj::type_index())?)?;
            if !matches!(args[2].type_index(), ti::kTVMFFIBool | ti::kTVMFFIInt) {
                return Err(sig.mismatch(args, 2));
            }
            let paths = find_access_paths(&root, &context, args[2].get::<bool>()?)?;
            Ok(Any::from_object(Array::new(paths.into_iter().map(|p| Any::from_object(p.into_object())).collect())?.into_object()))
        }),
    )]
}
