//! Structural traversal (`ffi.StructuralWalk`, `ffi.StructuralVisit`) with
//! TVM-FFI's semantics, and the objects its callbacks see: the
//! `ffi.VisitInterrupt` signal (static type index 77) and the
//! `ffi.StructuralVisitor` that carries the traversal.
//!
//! * A value's children are found by its *default visit*: the type's
//!   `__s_visit__` hook (an FFI Function called as `hook(visitor, value)`)
//!   when one is registered, else the elements of Array/List, the values of
//!   Map/Dict, and the reflected fields of other objects (skipping
//!   `SEqHashIgnore`; a field flagged `SEqHashDefSimple`/`SEqHashDefPattern`
//!   is visited inside that def region). PODs, strings and field-less objects
//!   have no children; None is never visited at all.
//! * Def regions: entering a region inside a pattern region has no effect;
//!   a FreeVar met inside a simple region has its own fields visited outside
//!   any region (its fields are uses, not definitions).
//! * A walk calls the first matching callback of `callbacks` (as
//!   `f(value)`), else of `callbacks_with_def_region_kind` (as
//!   `f(value, kind)`), before (pre-order) or after (post-order) the
//!   children. A callback returns None or 0 (advance), 1/True (skip the
//!   children, pre-order only) or a VisitInterrupt (stop everything; it is
//!   the walk's result). Every occurrence is visited: a shared node once per
//!   parent.
//! * A visit calls the first matching callback as `f(value, visitor)` and
//!   lets it own the descent (`ffi.StructuralVisitorVisit` for selected
//!   children, `ffi.StructuralVisitorDefaultVisit` for the default); an
//!   unmatched value gets the default visit.
//!
//! Callback tables are `Array<Tuple<int, ffi.Function>>` keyed by type index
//! (`-1` matches everything), as TVM-FFI's Python layer passes them.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::OnceLock;

use crate::abi::{field_flag, type_index as ti, TVMFFIObject};
use crate::any::{Any, AnyView};
use crate::containers::{Array, Dict, List, Map};
use crate::error::Error;
use crate::function::Function;
use crate::object::{header_placeholder, ObjectPtr, ObjectRef, ObjectType};
use crate::reflection::{DefaultObject, ShallowCopy, TypeBuilder};
use crate::type_registry;

use super::typed_args::{find_entry, Entry, Sig};
use super::{deep_stack, def_region, kind, Global};

/// The interrupt signal: stops a traversal and carries a payload.
#[repr(C)]
pub struct VisitInterruptObj {
    header: TVMFFIObject,
    value: Any,
}
crate::object_type!(VisitInterruptObj, "ffi.VisitInterrupt");

impl DefaultObject for VisitInterruptObj {
    fn default_object() -> Self {
        VisitInterruptObj { header: header_placeholder(), value: Any::none() }
    }
}

impl ShallowCopy for VisitInterruptObj {
    fn shallow_copy(&self) -> Self {
        VisitInterruptObj { header: header_placeholder(), value: self.value.clone() }
    }
}

/// Make a VisitInterrupt carrying `value`.
pub fn visit_interrupt(value: Any) -> Result<ObjectRef, Error> {
    ensure_reflection();
    Ok(ObjectPtr::new(VisitInterruptObj {
        header: header_placeholder(),
        value,
    })?
    .into_object_ref())
}

/// The payload of a VisitInterrupt.
pub fn interrupt_value(obj: &ObjectRef) -> Result<Any, Error> {
    Ok(obj.clone().downcast::<VisitInterruptObj>()?.value.clone())
}

/// A traversal's outcome: `None` to continue, or the interrupt.
pub type Visited = Option<ObjectRef>;

enum Engine {
    Walk {
        callbacks: Vec<Entry>,
        with_kind: Vec<Entry>,
        post_order: bool,
    },
    Visit {
        callbacks: Vec<Entry>,
    },
}

/// An active traversal: its callbacks and the current def region.
#[repr(C)]
pub struct StructuralVisitorObj {
    header: TVMFFIObject,
    region: AtomicI32,
    engine: Engine,
}
crate::object_type!(StructuralVisitorObj, "ffi.StructuralVisitor");

/// A structural visitor (the object callbacks receive).
#[derive(Clone)]
pub struct StructuralVisitor(ObjectPtr<StructuralVisitorObj>);

/// The callback result of a walk.
enum WalkResult {
    Advance,
    Skip,
    Interrupt(ObjectRef),
}

fn walk_result(v: Any) -> Result<WalkResult, Error> {
    match v.type_index() {
        ti::kTVMFFINone => Ok(WalkResult::Advance),
        ti::kTVMFFIInt | ti::kTVMFFIBool => Ok(if v.get::<i64>()? as i32 == 1 {
            WalkResult::Skip
        } else {
            WalkResult::Advance
        }),
        ti::kTVMFFIVisitInterrupt => Ok(WalkResult::Interrupt(v.get::<ObjectRef>()?)),
        _ => Err(Error::type_error(format!(
            "CallExpected: result type mismatch, expected WalkResult, but got {}",
            v.type_key()
        ))),
    }
}

/// A callback's or hook's `Optional<VisitInterrupt>` result.
pub(crate) fn optional_interrupt(v: Any) -> Result<Visited, Error> {
    match v.type_index() {
        ti::kTVMFFINone => Ok(None),
        ti::kTVMFFIVisitInterrupt => Ok(Some(v.get::<ObjectRef>()?)),
        _ => Err(Error::type_error(format!(
            "CallExpected: result type mismatch, expected Optional<ffi.VisitInterrupt>, but got {}",
            v.type_key()
        ))),
    }
}

fn interrupt_any(v: Visited) -> Any {
    v.map_or_else(Any::none, Any::from_object)
}

impl StructuralVisitor {
    fn new(engine: Engine) -> Result<StructuralVisitor, Error> {
        ensure_reflection();
        Ok(StructuralVisitor(ObjectPtr::new(StructuralVisitorObj {
            header: header_placeholder(),
            region: AtomicI32::new(def_region::NONE),
            engine,
        })?))
    }

    pub fn from_object(obj: ObjectRef) -> Result<StructuralVisitor, Error> {
        obj.downcast::<StructuralVisitorObj>()
            .map(StructuralVisitor)
    }

    fn as_any(&self) -> Any {
        Any::from_object(self.0.to_object_ref())
    }

    /// The active def region (`TVMFFIDefRegionKind`).
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

    /// Visit `value` through this traversal's callbacks.
    pub fn visit(&self, value: &Any) -> Result<Visited, Error> {
        if value.is_none() {
            return Ok(None);
        }
        deep_stack::guarded(|| match &self.0.engine {
            Engine::Walk {
                callbacks,
                with_kind,
                post_order,
            } => {
                if !*post_order {
                    match self.walk_callback(callbacks, with_kind, value)? {
                        WalkResult::Interrupt(i) => return Ok(Some(i)),
                        WalkResult::Skip => return Ok(None),
                        WalkResult::Advance => {}
                    }
                }
                if let Some(i) = self.default_visit(value)? {
                    return Ok(Some(i));
                }
                if *post_order {
                    if let WalkResult::Interrupt(i) =
                        self.walk_callback(callbacks, with_kind, value)?
                    {
                        return Ok(Some(i));
                    }
                }
                Ok(None)
            }
            Engine::Visit { callbacks } => match find_entry(callbacks, value.type_index()) {
                Some(e) => optional_interrupt(e.callback.call(&[value.clone(), self.as_any()])?),
                None => self.default_visit(value),
            },
        })
    }

    fn walk_callback(
        &self,
        callbacks: &[Entry],
        with_kind: &[Entry],
        value: &Any,
    ) -> Result<WalkResult, Error> {
        if let Some(e) = find_entry(callbacks, value.type_index()) {
            return walk_result(e.callback.call(std::slice::from_ref(value))?);
        }
        if let Some(e) = find_entry(with_kind, value.type_index()) {
            return walk_result(
                e.callback
                    .call(&[value.clone(), Any::from(self.def_region_kind() as i64)])?,
            );
        }
        Ok(WalkResult::Advance)
    }

    /// Visit the children of `value` (its hook, container items or
    /// reflected fields), bypassing the callbacks for `value` itself.
    pub fn default_visit(&self, value: &Any) -> Result<Visited, Error> {
        let index = value.type_index();
        if let Some(hook) = type_registry::attr_value(index, b"__s_visit__") {
            match hook.type_index() {
                ti::kTVMFFINone => {}
                ti::kTVMFFIFunction => {
                    let f = Function::from_object(hook.get::<ObjectRef>()?)?;
                    return optional_interrupt(f.call(&[self.as_any(), value.clone()])?);
                }
                _ => {
                    return Err(Error::type_error(
                        "__s_visit__ must be an opaque function pointer or ffi.Function",
                    ))
                }
            }
        }
        if !super::is_object_index(index) {
            return Ok(None);
        }
        let obj = value.as_object().expect("object index");
        match index {
            ti::kTVMFFIArray => self.visit_all(Array::from_object(obj)?.iter()),
            ti::kTVMFFIList => self.visit_all(List::from_object(obj)?.to_vec().iter()),
            ti::kTVMFFIMap => self.visit_all(Map::from_object(obj)?.items().iter().map(|(_, v)| v)),
            ti::kTVMFFIDict => {
                self.visit_all(Dict::from_object(obj)?.items().iter().map(|(_, v)| v))
            }
            _ => self.visit_fields(&obj),
        }
    }

    fn visit_all<'a>(&self, items: impl Iterator<Item = &'a Any>) -> Result<Visited, Error> {
        for it in items {
            if let Some(i) = self.visit(it)? {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }

    fn visit_fields(&self, obj: &ObjectRef) -> Result<Visited, Error> {
        let fields = || -> Result<Visited, Error> {
            for field in type_registry::all_fields(obj.type_index()) {
                if field.flags & field_flag::kSEqHashIgnore != 0 {
                    continue;
                }
                let v = super::read_field(obj, field)?;
                let r = if field.flags & field_flag::kSEqHashDefSimple != 0 {
                    self.with_def_region_kind(def_region::SIMPLE, || self.visit(&v))
                } else if field.flags & field_flag::kSEqHashDefPattern != 0 {
                    self.with_def_region_kind(def_region::PATTERN, || self.visit(&v))
                } else {
                    self.visit(&v)
                }?;
                if r.is_some() {
                    return Ok(r);
                }
            }
            Ok(None)
        };
        if self.def_region_kind() == def_region::SIMPLE
            && declared_kind(obj.type_index()) == kind::FREE_VAR
        {
            return self.with_def_region_kind(def_region::NONE, fields);
        }
        fields()
    }
}

/// The structural kind a type declares (Unsupported when it has none).
pub(crate) fn declared_kind(index: i32) -> i32 {
    match type_registry::type_info(index) {
        // SAFETY: non-NULL metadata records live for the process.
        Some(info) if !info.metadata.is_null() => unsafe {
            (*info.metadata).structural_eq_hash_kind
        },
        _ => kind::UNSUPPORTED,
    }
}

/// Walk `root`, calling the matching callbacks before (`post_order` false)
/// or after each value's children.
pub fn structural_walk(
    root: &Any,
    callbacks: Vec<Entry>,
    with_kind: Vec<Entry>,
    post_order: bool,
) -> Result<Visited, Error> {
    StructuralVisitor::new(Engine::Walk {
        callbacks,
        with_kind,
        post_order,
    })?
    .visit(root)
}

/// Visit `root`, letting matching callbacks own their descent.
pub fn structural_visit(root: &Any, callbacks: Vec<Entry>) -> Result<Visited, Error> {
    StructuralVisitor::new(Engine::Visit { callbacks })?.visit(root)
}

pub(crate) fn ensure_reflection() {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    let r = DONE.get_or_init(|| {
        (|| -> Result<(), Error> {
            TypeBuilder::<VisitInterruptObj>::new()
                .readonly_field_default_none::<Any>("value", std::mem::offset_of!(VisitInterruptObj, value))?
                .metadata_with_creator(kind::UNSUPPORTED)?
                .shallow_copy()?
                .type_final(true)?;
            TypeBuilder::<StructuralVisitorObj>::new();
            Ok(())
        })()
        .map_err(|e| e.message().to_string())
    });
    if let Err(m) = r {
        panic!("registering structural visit reflection: {m}");
    }
}

const ENTRIES: &str = "Array<Tuple<int, ffi.Function>>";
const OPT_INTERRUPT: &str = "Optional<ffi.VisitInterrupt>";

/// A global with a typed signature (see [`Sig::into_global`]).
fn typed(sig: Sig, body: fn(&Sig, &[AnyView<'_>]) -> Result<Any, Error>) -> (&'static str, Result<Function, Error>) {
    sig.into_global(body)
}

fn visitor_arg(sig: &Sig, args: &[AnyView<'_>]) -> Result<StructuralVisitor, Error> {
    ensure_reflection();
    StructuralVisitor::from_object(sig.object(args, 0, StructuralVisitorObj::type_index())?)
}

pub(crate) fn globals() -> Vec<Global> {
    vec![
        typed(
            Sig {
                name: "ffi.VisitInterrupt",
                params: &["Any"],
                ret: "ffi.VisitInterrupt",
            },
            |_, a| Ok(Any::from_object(visit_interrupt(a[0].to_owned()?)?)),
        ),
        typed(
            Sig {
                name: "ffi.StructuralWalk",
                params: &["AnyView", ENTRIES, ENTRIES, "int"],
                ret: OPT_INTERRUPT,
            },
            |s, a| {
                let (callbacks, with_kind) = (s.entries(a, 1, false)?, s.entries(a, 2, false)?);
                let order = s.int(a, 3)?;
                Ok(interrupt_any(structural_walk(
                    &a[0].to_owned()?,
                    callbacks,
                    with_kind,
                    order != 0,
                )?))
            },
        ),
        typed(
            Sig {
                name: "ffi.StructuralVisit",
                params: &["AnyView", ENTRIES],
                ret: OPT_INTERRUPT,
            },
            |s, a| {
                let callbacks = s.entries(a, 1, false)?;
                Ok(interrupt_any(structural_visit(
                    &a[0].to_owned()?,
                    callbacks,
                )?))
            },
        ),
        typed(
            Sig {
                name: "ffi.StructuralVisitorVisit",
                params: &["ffi.StructuralVisitor", "AnyView"],
                ret: OPT_INTERRUPT,
            },
            |s, a| Ok(interrupt_any(visitor_arg(s, a)?.visit(&a[1].to_owned()?)?)),
        ),
        typed(
            Sig {
                name: "ffi.StructuralVisitorDefaultVisit",
                params: &["ffi.StructuralVisitor", "AnyView"],
                ret: OPT_INTERRUPT,
            },
            |s, a| {
                Ok(interrupt_any(
                    visitor_arg(s, a)?.default_visit(&a[1].to_owned()?)?,
                ))
            },
        ),
        typed(
            Sig {
                name: "ffi.StructuralVisitorDefRegionKind",
                params: &["ffi.StructuralVisitor"],
                ret: "int",
            },
            |s, a| Ok(Any::from(visitor_arg(s, a)?.def_region_kind() as i64)),
        ),
        typed(
            Sig {
                name: "ffi.StructuralVisitorWithDefRegionKind",
                params: &["ffi.StructuralVisitor", "int", "ffi.Function"],
                ret: "Any",
            },
            |s, a| {
                let v = visitor_arg(s, a)?;
                let (k, f) = (s.int(a, 1)? as i32, s.function(a, 2)?);
                v.with_def_region_kind(k, || f.call(&[]))
            },
        ),
    ]
}
