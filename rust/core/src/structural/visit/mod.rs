//! Structural traversal (`ffi.StructuralWalk`, `ffi.StructuralVisit`) with
//! TVM-FFI's semantics, and the objects its callbacks see: the
//! `ffi.VisitInterrupt` signal (static type index 77) and the
//! `ffi.StructuralVisitor` that carries the traversal.
//!
//! * Every visitor speaks TVM-FFI's compiled-in protocol ([`protocol`]): a
//!   vtable `visit` and the def region at fixed offsets, so a visitor made
//!   here can be handed to code compiled against the headers and the other
//!   way round. Tether's visitors keep their callbacks after that prefix.
//! * A value's children are found by its *default visit*: the type's
//!   `__s_visit__` hook (a native pointer or an FFI Function, called as
//!   `hook(visitor, value)`; Array/List visit their elements and Map/Dict
//!   their values through builtin ones), else the reflected fields of other
//!   objects (skipping `SEqHashIgnore`; a field flagged
//!   `SEqHashDefSimple`/`SEqHashDefPattern` is visited inside that def
//!   region). PODs, strings and field-less objects have no children; None is
//!   never visited at all. An error leaving a value names it in the error's
//!   visit error context.
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
//! (`-1` matches everything), as TVM-FFI's Python layer passes them; an
//! `ffi.Error` a callback returns is its failure, as with TVM-FFI's
//! `CallExpected`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicI32;
use std::sync::OnceLock;

use crate::abi::{type_index as ti, TVMFFIAny};
use crate::values::any::{Any, AnyView};
use crate::values::error::Error;
use crate::values::function::{arg, panic_message, Function};
use crate::reflection::native_hook::call_expected;
use crate::object::{header_placeholder, ObjectPtr, ObjectRef, ObjectType};
use crate::reflection::TypeBuilder;

use super::trampoline::{self, Step};
use crate::containers::typed_args::{find_entry, Entry, Sig};
use super::visit_error_context::update_visit_error_context;
use super::{def_region, kind, Global};

pub mod interrupt;
pub mod protocol;
pub use interrupt::{interrupt_value, visit_interrupt, VisitInterruptObj, Visited};
use interrupt::optional_interrupt;
use protocol::{VisitorBase, VisitorPrefixCopy, VisitorRef, VisitorVTable};

#[derive(Clone)]
pub(crate) enum Engine {
    Walk {
        callbacks: Vec<Entry>,
        with_kind: Vec<Entry>,
        post_order: bool,
    },
    Visit {
        callbacks: Vec<Entry>,
    },
}

/// A visitor made by tether: upstream's prefix (header, vtable, def
/// region), then the engine's callbacks.
#[repr(C)]
pub struct StructuralVisitorObj {
    base: VisitorBase,
    engine: Engine,
}
object_type!(StructuralVisitorObj, "ffi.StructuralVisitor");

/// The vtable of tether's visitors.
static ENGINE_VTABLE: VisitorVTable = VisitorVTable { visit: engine_visit };

/// `visit` of tether's visitors: the callbacks, then the default descent,
/// run on an explicit work stack ([`trampoline`]). This is the re-entry
/// point of hooks and callbacks that visit children themselves, so it
/// checks the thread's stack first.
unsafe extern "C" fn engine_visit(p: *mut VisitorBase, value: TVMFFIAny) -> TVMFFIAny {
    let r = catch_unwind(AssertUnwindSafe(|| {
        let _run = trampoline::enter("structural visit")?;
        // SAFETY: this vtable is only installed on StructuralVisitorObj,
        // alive while it is being called.
        let visitor = unsafe { VisitorRef::from_raw(p) }?;
        // SAFETY: as above: tether's layout, kept alive by `visitor`.
        let engine = unsafe { &(*(p as *const StructuralVisitorObj)).engine };
        trampoline::run(engine.visit_step(&visitor, Any::from_view(&value)?))
    }));
    protocol::encode(r.unwrap_or_else(|p| Err(Error::runtime_error(format!("structural visit: internal panic: {}", panic_message(&*p))))))
}

/// The engine of `visitor` when tether made it (its children are then
/// visited on the same work stack instead of through the vtable).
pub(crate) fn engine_of(visitor: &VisitorRef) -> Option<&Engine> {
    if !std::ptr::eq(visitor.vtable(), &ENGINE_VTABLE) {
        return None;
    }
    // SAFETY: the vtable identifies tether's layout; `visitor` keeps the
    // object (and so its engine) alive for the borrow.
    Some(unsafe { &(*(visitor.as_object().as_ptr() as *const StructuralVisitorObj)).engine })
}

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

fn interrupt_any(v: Visited) -> Any {
    v.map_or_else(Any::none, Any::from_object)
}

impl Engine {
    /// Visit one value; an error leaving it names the value in its visit
    /// error context.
    pub(crate) fn visit_step<'a>(&'a self, visitor: &'a VisitorRef, value: Any) -> Step<'a, Visited> {
        if value.type_index() == ti::kTVMFFINone {
            return Step::ok(None);
        }
        let named = value.clone();
        self.visit_value_step(visitor, value)
            .then(move |r| Step::Done(r.map_err(|e| update_visit_error_context(e, named.as_raw()))))
    }

    fn visit_value_step<'a>(&'a self, visitor: &'a VisitorRef, owned: Any) -> Step<'a, Visited> {
        match self {
            Engine::Walk { callbacks, with_kind, post_order } => {
                if !*post_order {
                    match walk_callback(visitor, callbacks, with_kind, &owned) {
                        Err(e) => return Step::err(e),
                        Ok(WalkResult::Interrupt(i)) => return Step::ok(Some(i)),
                        Ok(WalkResult::Skip) => return Step::ok(None),
                        Ok(WalkResult::Advance) => {}
                    }
                    return visitor.default_visit_step(owned);
                }
                visitor.default_visit_step(owned.clone()).and_then(move |r| {
                    if r.is_some() {
                        return Step::ok(r);
                    }
                    Step::Done(walk_callback(visitor, callbacks, with_kind, &owned).map(|w| match w {
                        WalkResult::Interrupt(i) => Some(i),
                        _ => None,
                    }))
                })
            }
            // A matching callback owns the descent: it visits children by
            // calling back into the visitor (native nesting, bounded).
            Engine::Visit { callbacks } => match find_entry(callbacks, owned.type_index()) {
                Some(e) => Step::Done(call_expected(&e.callback, &[owned, visitor.as_any()]).and_then(optional_interrupt)),
                None => visitor.default_visit_step(owned),
            },
        }
    }
}

fn walk_callback(visitor: &VisitorRef, callbacks: &[Entry], with_kind: &[Entry], value: &Any) -> Result<WalkResult, Error> {
    if let Some(e) = find_entry(callbacks, value.type_index()) {
        return walk_result(call_expected(&e.callback, std::slice::from_ref(value))?);
    }
    if let Some(e) = find_entry(with_kind, value.type_index()) {
        return walk_result(call_expected(&e.callback, &[value.clone(), Any::from(visitor.def_region_kind() as i64)])?);
    }
    Ok(WalkResult::Advance)
}

/// A structural visitor (the object callbacks receive): any visitor,
/// driven through upstream's protocol.
pub type StructuralVisitor = VisitorRef;

/// The engine's child step for the protocol's descent: a child of one of
/// tether's visitors is visited on the current work stack.
fn engine_child_step<'a>(visitor: &'a VisitorRef, child: Any) -> Result<Step<'a, Visited>, Any> {
    match engine_of(visitor) {
        Some(engine) => Ok(Step::lazy(move || engine.visit_step(visitor, child))),
        None => Err(child),
    }
}

fn new_visitor(engine: Engine) -> Result<VisitorRef, Error> {
    ensure_reflection();
    protocol::install_engine_child_step(engine_child_step);
    let obj = ObjectPtr::new(StructuralVisitorObj {
        base: VisitorBase { header: header_placeholder(), vtable: &ENGINE_VTABLE, region: AtomicI32::new(def_region::NONE) },
        engine,
    })?;
    VisitorRef::from_object(obj.into_object_ref())
}

/// `__ffi_shallow_copy__` of visitors.
fn shallow_copy_visitor(v: &VisitorRef) -> Result<ObjectRef, Error> {
    let region = AtomicI32::new(v.def_region_kind());
    if std::ptr::eq(v.vtable(), &ENGINE_VTABLE) {
        // SAFETY: the vtable identifies tether's own layout.
        let engine = unsafe { &(*(v.as_object().as_ptr() as *const StructuralVisitorObj)).engine }.clone();
        let base = VisitorBase { header: header_placeholder(), vtable: &ENGINE_VTABLE, region };
        return Ok(ObjectPtr::new(StructuralVisitorObj { base, engine })?.into_object_ref());
    }
    let base = VisitorBase { header: header_placeholder(), vtable: v.vtable(), region };
    Ok(ObjectPtr::new(VisitorPrefixCopy { base })?.into_object_ref())
}

/// Walk `root`, calling the matching callbacks before (`post_order` false)
/// or after each value's children.
pub fn structural_walk(
    root: &Any,
    callbacks: Vec<Entry>,
    with_kind: Vec<Entry>,
    post_order: bool,
) -> Result<Visited, Error> {
    new_visitor(Engine::Walk { callbacks, with_kind, post_order })?.visit(root)
}

/// Visit `root`, letting matching callbacks own their descent.
pub fn structural_visit(root: &Any, callbacks: Vec<Entry>) -> Result<Visited, Error> {
    new_visitor(Engine::Visit { callbacks })?.visit(root)
}

pub(crate) fn ensure_reflection() {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    let r = DONE.get_or_init(|| {
        (|| -> Result<(), Error> {
            interrupt::ensure_reflection()?;
            let copy = Function::from_closure(|args| {
                Ok(Any::from_object(shallow_copy_visitor(&VisitorRef::from_object(arg(args, 0, "self")?)?)?))
            })?;
            TypeBuilder::<StructuralVisitorObj>::new()
                .metadata_sized(kind::UNSUPPORTED, std::mem::size_of::<VisitorBase>())?
                .fn_attr("__ffi_shallow_copy__", copy)?
                .type_final(false)?;
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

fn visitor_arg(sig: &Sig, args: &[AnyView<'_>]) -> Result<VisitorRef, Error> {
    ensure_reflection();
    VisitorRef::from_object(sig.object(args, 0, StructuralVisitorObj::type_index())?)
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
