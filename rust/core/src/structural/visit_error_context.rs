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
//! descended into again (TVM-FFI recurses without end), and deep graphs are
//! searched on an explicit stack of open nodes (depth costs heap, not
//! native stack).

use std::collections::HashSet;
use std::sync::OnceLock;

use crate::abi::{type_index as ti, TVMFFIAny, TVMFFIObject};
use crate::values::any::Any;
use crate::containers::{Array, List};
use crate::values::error::Error;
use crate::values::function::Function;
use crate::object::{header_placeholder, ObjectPtr, ObjectRef, ObjectType};
use crate::reflection::{DefaultObject, ShallowCopy, TypeBuilder};
use crate::types::type_registry;

use super::access_path::{AccessPath, AccessStep};
use crate::containers::typed_args::Sig;
use super::{Global, MapLike};

/// TVM-FFI's `VisitErrorContextObj` layout: the pattern (a `List`) and the
/// previous error context (an optional object), one pointer each.
#[repr(C)]
pub struct VisitErrorContextObj {
    header: TVMFFIObject,
    reverse_visit_pattern: Option<ObjectRef>,
    prev_error_context: Option<ObjectRef>,
}
object_type!(VisitErrorContextObj, "ffi.VisitErrorContext");

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
        obj.downcast::<VisitErrorContextObj>().map(VisitErrorContext).map_err(Error::from)
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
        let previous = crate::values::error::extra_context(&obj);
        if let Some(prev) = &previous {
            if let Ok(ctx) = prev.clone().downcast::<VisitErrorContextObj>() {
                if let Some(list) = ctx.reverse_visit_pattern.clone() {
                    List::from_object(list)?.push(node)?;
                    return Ok(Error::from_object(obj));
                }
            }
        }
        let ctx = VisitErrorContext::new(vec![node.get::<ObjectRef>()?], previous)?;
        crate::values::error::set_extra_context(&obj, ctx.into_object());
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
    super::access_path_reflection::ensure_reflection();
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
    finder.search(root)?;
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

/// A node whose children the search is going through.
struct Frame {
    children: Children,
    /// Whether a step was pushed to reach this node (popped when it is done).
    owns_step: bool,
}

enum Children {
    /// A container's items still to visit, each with its step.
    Items(std::vec::IntoIter<(Step, Any)>),
    /// An object's fields still to visit.
    Fields {
        node: ObjectRef,
        fields: std::vec::IntoIter<&'static crate::abi::TVMFFIFieldInfo>,
        /// Results found before this object's fields.
        before: usize,
        matched_step: bool,
        key: (usize, usize),
    },
}

impl Finder {
    /// Search from `root` on an explicit stack of open nodes (depth costs
    /// heap, not native stack). After an error the search is abandoned.
    fn search(&mut self, root: &ObjectRef) -> Result<(), Error> {
        let mut stack: Vec<Frame> = Vec::new();
        if let Some(children) = self.enter_object(root)? {
            stack.push(Frame { children, owns_step: false });
        }
        while let Some(top) = stack.last_mut() {
            let next = match &mut top.children {
                Children::Items(items) => items.next(),
                Children::Fields { node, fields, .. } => match fields.next() {
                    Some(field) => Some((Step::Attr(super::field_name(field)), super::read_field(node, field)?)),
                    None => None,
                },
            };
            match next {
                Some((step, child)) => {
                    self.steps.push(step);
                    match self.enter_any(child)? {
                        Some(children) => stack.push(Frame { children, owns_step: true }),
                        None => self.pop_step(),
                    }
                }
                None => {
                    let done = stack.pop().expect("the frame read above");
                    if let Children::Fields { before, matched_step, key, .. } = done.children {
                        self.finish_object(before, matched_step, key)?;
                    }
                    if done.owns_step {
                        self.pop_step();
                    }
                }
            }
        }
        Ok(())
    }

    /// The children of a value to go through, if any: a container's items
    /// (None items and entries skipped) or an object's fields.
    fn enter_any(&mut self, value: Any) -> Result<Option<Children>, Error> {
        Ok(match value.type_index() {
            index if !super::is_object_index(index) => None,
            ti::kTVMFFIArray | ti::kTVMFFIList => {
                let items = super::recursive_compare::sequence_items(value.as_object().expect("object index"))?;
                let items: Vec<(Step, Any)> = items
                    .into_iter()
                    .enumerate()
                    .filter(|(_, item)| !item.is_none())
                    .map(|(i, item)| (Step::ArrayItem(i as i64), item))
                    .collect();
                Some(Children::Items(items.into_iter()))
            }
            ti::kTVMFFIMap | ti::kTVMFFIDict => {
                let items: Vec<(Step, Any)> = MapLike::from_object(value.as_object().expect("object index"))?
                    .items()
                    .into_iter()
                    .filter(|(k, v)| !k.is_none() && !v.is_none())
                    .map(|(k, v)| (Step::MapItem(k), v))
                    .collect();
                Some(Children::Items(items.into_iter()))
            }
            _ => self.enter_object(&value.as_object().expect("object index"))?,
        })
    }

    /// Match `node` against the pattern: a full match records its path;
    /// otherwise its fields are searched (None for objects without
    /// metadata and for a node already on the path with as much matched).
    fn enter_object(&mut self, node: &ObjectRef) -> Result<Option<Children>, Error> {
        let Some(info) = type_registry::type_info(node.type_index()) else { return Ok(None) };
        if info.metadata.is_null() {
            return Ok(None);
        }
        let key = (node.as_ptr() as usize, self.matched);
        if !self.on_path.insert(key) {
            return Ok(None);
        }
        let n = self.records.len();
        let matched_step = self.matched < n && node.as_ptr() == self.records[n - 1 - self.matched].as_ptr();
        if matched_step && self.matched + 1 == n {
            let found = self.materialize().map(|p| self.results.push(p));
            self.on_path.remove(&key);
            return found.map(|()| None);
        }
        if matched_step {
            self.matched += 1;
        }
        let fields = type_registry::all_fields(node.type_index()).into_iter();
        Ok(Some(Children::Fields { node: node.clone(), fields, before: self.results.len(), matched_step, key }))
    }

    /// After an object's fields: with prefix matching, a partly matched
    /// descent that found nothing deeper records where it ended.
    fn finish_object(&mut self, before: usize, matched_step: bool, key: (usize, usize)) -> Result<(), Error> {
        if self.allow_prefix_match
            && self.matched > 0
            && self.matched < self.records.len()
            && !self.steps.is_empty()
            && self.results.len() == before
        {
            let p = self.materialize()?;
            self.results.push(p);
        }
        if matched_step {
            self.matched -= 1;
        }
        self.on_path.remove(&key);
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
