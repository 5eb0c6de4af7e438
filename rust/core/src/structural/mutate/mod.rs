//! Structural rewriting (`ffi.StructuralMap`, `ffi.StructuralMutate`) with
//! TVM-FFI's semantics, and the `ffi.StructuralMutator` its callbacks see.
//!
//! * Results are *unchanged* or a replacement; a value whose children are
//!   all unchanged stays the same object. Changes are copy-on-write: a
//!   container or object with a changed child is copied (objects through
//!   their `__ffi_shallow_copy__` hook, or field by field for run-time
//!   dataclass types) and the copy gets the new children, so the input is
//!   left intact.
//! * Every mutator speaks TVM-FFI's compiled-in protocol ([`protocol`]): a
//!   vtable (`mutate`, `maybe_inplace_mutate`, `var_remap_get`,
//!   `var_remap_set`) and the def region at fixed offsets, so a mutator made
//!   here can be handed to code compiled against the headers and the other
//!   way round. Tether's mutators keep their callbacks and remap after that
//!   prefix.
//! * In place: with `InplaceMode.ALLOW` (a root the caller gave away,
//!   `root._move()` in Python), a value nobody else references goes through
//!   `maybe_inplace_mutate`, and containers rewrite their slots in place.
//!   A type's `__s_maybe_inplace_mutate__` hook handles it; `__s_mutate__`
//!   replaces the default descent altogether (both called as
//!   `hook(mutator, value)`, native pointers or Functions).
//! * Default descent: PODs come back as they are; strings, bytes and BigInts
//!   are unchanged and Array/List elements and Map/Dict values are mutated
//!   (builtin native hooks); other objects get their reflected fields
//!   mutated (skipping `SEqHashIgnore`, def regions as in [`super::visit`]).
//!   FreeVar and DAG nodes consult the variable remap first (a hit is the
//!   result); a FreeVar outside a def region is a use and stays unchanged;
//!   after descent a DAG node, a pattern definition or a changed simple
//!   definition records its result. An error leaving a value names it in the
//!   error's visit error context.
//! * `structural_map` calls the first matching callback (`f(value)`, then
//!   `f(value, def_region_kind)`) on each value before descent (pre-order:
//!   descent then runs on what it returned) or after it (post-order: on what
//!   descent produced). `structural_mutate` hands a matching value to its
//!   callback as `f(value, mutator[, inplace_mode])`, which owns the descent.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicI32;
use std::sync::OnceLock;

use parking_lot::Mutex;

use crate::abi::{type_index as ti, TVMFFIAny};
use crate::values::any::{Any, AnyView};
use crate::values::error::Error;
use crate::values::function::{arg, panic_message, Function};
use crate::reflection::native_hook::{call_expected, raw_error};
use crate::object::{header_placeholder, ObjectPtr, ObjectRef, ObjectType};
use crate::reflection::TypeBuilder;

use super::trampoline::{self, Step};
use crate::containers::typed_args::{find_entry, Entry, Sig};
use super::visit_error_context::update_visit_error_context;
use super::{def_region, kind, Global};

mod attempt;
mod container;
mod descent;
pub(crate) mod globals;
pub mod protocol;
use attempt::attempt;
pub use protocol::{InplaceMode, Mutated};
use protocol::{MutatorBase, MutatorPrefixCopy, MutatorRef, MutatorVTable};
pub(crate) use container::{mutate_container_copy, mutate_container_in_place};

#[derive(Clone)]
pub(crate) enum Engine {
    Map {
        callbacks: Vec<Entry>,
        with_kind: Vec<Entry>,
        post_order: bool,
    },
    Mutate {
        callbacks: Vec<Entry>,
    },
}

/// A rewrite made by tether: upstream's prefix (header, vtable, def
/// region), then the engine's callbacks and its variable remap.
#[repr(C)]
pub struct StructuralMutatorObj {
    base: MutatorBase,
    engine: Engine,
    /// Keyed by the variable's address; the entry keeps the variable alive.
    /// Values are what upstream records: a replacement or the unchanged
    /// marker.
    remap: Mutex<HashMap<usize, (ObjectRef, Any)>>,
}
object_type!(StructuralMutatorObj, "ffi.StructuralMutator");

/// A structural mutator (the object callbacks receive): any mutator,
/// driven through upstream's protocol.
pub type StructuralMutator = MutatorRef;

/// The vtable of tether's mutators.
static ENGINE_VTABLE: MutatorVTable = MutatorVTable {
    mutate: engine_mutate,
    maybe_inplace_mutate: engine_maybe_inplace_mutate,
    var_remap_get: engine_var_remap_get,
    var_remap_set: engine_var_remap_set,
};

/// Run `body` on the engine object behind a vtable call, catching panics.
///
/// # Safety
/// `p` must be a live `StructuralMutatorObj` (the only objects carrying
/// this vtable).
unsafe fn on_engine<R>(p: *mut MutatorBase, body: impl FnOnce(&MutatorRef, &StructuralMutatorObj) -> Result<R, Error>) -> Result<R, Error> {
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: per the caller.
        let m = unsafe { MutatorRef::from_raw(p) }?;
        // SAFETY: per the caller, the object is tether's layout.
        let this = unsafe { &*(p as *const StructuralMutatorObj) };
        body(&m, this)
    }))
    .unwrap_or_else(|p| Err(Error::runtime_error(format!("structural mutate: internal panic: {}", panic_message(&*p)))))
}

/// `mutate` / `maybe_inplace_mutate` of tether's mutators: the engine on an
/// explicit work stack. This is the re-entry point of hooks and callbacks
/// that mutate children themselves, so nested runs check the stack first.
fn run_engine(p: *mut MutatorBase, value: TVMFFIAny, mode: InplaceMode) -> TVMFFIAny {
    // SAFETY: installed only on StructuralMutatorObj.
    protocol::encode(unsafe {
        on_engine(p, |m, this| {
            let _run = trampoline::enter("structural mutate")?;
            trampoline::run(this.engine.mutate_step(m, value, mode))
        })
    })
}

unsafe extern "C" fn engine_mutate(p: *mut MutatorBase, value: TVMFFIAny) -> TVMFFIAny {
    run_engine(p, value, InplaceMode::Disallow)
}

unsafe extern "C" fn engine_maybe_inplace_mutate(p: *mut MutatorBase, value: TVMFFIAny) -> TVMFFIAny {
    run_engine(p, value, InplaceMode::Allow)
}

/// The engine of `m` when tether made it (its children are then mutated on
/// the same work stack instead of through the vtable).
fn engine_of(m: &MutatorRef) -> Option<&Engine> {
    if !std::ptr::eq(m.vtable(), &ENGINE_VTABLE) {
        return None;
    }
    // SAFETY: the vtable identifies tether's layout; `m` keeps the object
    // (and so its engine) alive for the borrow.
    Some(unsafe { &(*(m.as_object().as_ptr() as *const StructuralMutatorObj)).engine })
}

/// The descent's hook into the engine ([`descent::EngineStep`]): a child of
/// one of tether's mutators is mutated on the same work stack, in place
/// only when allowed and nobody else references it.
fn engine_step(m: &MutatorRef, value: TVMFFIAny, mode: InplaceMode) -> Option<Step<'_, Mutated>> {
    let engine = engine_of(m)?;
    let mode = if mode == InplaceMode::Allow && protocol::unique(&value) { InplaceMode::Allow } else { InplaceMode::Disallow };
    Some(Step::lazy(move || engine.mutate_step(m, value, mode)))
}

fn remap_key(var: &TVMFFIAny) -> Result<usize, Error> {
    if var.type_index < ti::kTVMFFIStaticObjectBegin {
        return Err(Error::type_error("Variable-remap key must be an object-backed value"));
    }
    // SAFETY: an object view carries its pointer.
    Ok(unsafe { var.value.v_obj } as usize)
}

unsafe extern "C" fn engine_var_remap_get(p: *mut MutatorBase, var: TVMFFIAny) -> TVMFFIAny {
    // SAFETY: installed only on StructuralMutatorObj.
    let r = unsafe {
        on_engine(p, |_, this| {
            let key = remap_key(&var)?;
            Ok(this.remap.lock().get(&key).map_or_else(Any::none, |(_, v)| v.clone()))
        })
    };
    r.map_or_else(raw_error, Any::into_raw)
}

unsafe extern "C" fn engine_var_remap_set(p: *mut MutatorBase, var: TVMFFIAny, mapped: TVMFFIAny) -> TVMFFIAny {
    // SAFETY: installed only on StructuralMutatorObj.
    let r = unsafe {
        on_engine(p, |_, this| {
            let key = remap_key(&var)?;
            let var = Any::from_view(&var)?.get::<ObjectRef>()?;
            // "Unchanged" maps the variable to itself: a later lookup hands
            // out a value, never the marker (which no frontend can hold).
            let mapped = if mapped.type_index == ti::kTVMFFIUnchanged {
                Any::from_object(var.clone())
            } else {
                Any::from_view(&mapped)?
            };
            this.remap.lock().insert(key, (var, mapped));
            Ok(())
        })
    };
    r.map_or_else(raw_error, |()| TVMFFIAny::NONE)
}

impl Engine {
    /// One value (borrowed; its owner outlives the step) in the mode the
    /// vtable entry chose: the callbacks, with the default descent.
    pub(crate) fn mutate_step<'a>(&'a self, m: &'a MutatorRef, value: TVMFFIAny, mode: InplaceMode) -> Step<'a, Mutated> {
        match self {
            Engine::Map { callbacks, with_kind, post_order } => map_one(m, callbacks, with_kind, *post_order, value, mode),
            // A matching callback owns the descent: it mutates children by
            // calling back into the mutator (native nesting, bounded).
            Engine::Mutate { callbacks } => match find_entry(callbacks, value.type_index) {
                Some(e) => {
                    let mut args = vec![attempt!(Any::from_view(&value)), m.as_any()];
                    if e.takes_mode {
                        args.push(Any::from(mode as i64));
                    }
                    let r = call_expected(&e.callback, &args).map_err(|e| update_visit_error_context(e, &value));
                    Step::Done(r.map(protocol::from_value))
                }
                None => m.default_mutate_step(value, mode),
            },
        }
    }
}

fn map_link<'a>(callbacks: &'a [Entry], with_kind: &'a [Entry], index: i32) -> Option<(&'a Entry, bool)> {
    find_entry(callbacks, index).map(|e| (e, false)).or_else(|| find_entry(with_kind, index).map(|e| (e, true)))
}

fn call_link(m: &MutatorRef, link: (&Entry, bool), v: &Any) -> Result<Mutated, Error> {
    let r = if link.1 {
        call_expected(&link.0.callback, &[v.clone(), Any::from(m.def_region_kind() as i64)])?
    } else {
        call_expected(&link.0.callback, std::slice::from_ref(v))?
    };
    Ok(protocol::from_value(r))
}

/// One value of a map: pre-order, the callback first and then descent
/// into what it returned (in place when that is unique); post-order,
/// descent first and then the callback on the result.
fn map_one<'a>(m: &'a MutatorRef, cbs: &'a [Entry], kinds: &'a [Entry], post: bool, value: TVMFFIAny, mode: InplaceMode) -> Step<'a, Mutated> {
    if post {
        return m.default_mutate_step(value, mode).and_then(move |out| {
            let view = match &out {
                Some(v) => v.clone(),
                None => attempt!(Any::from_view(&value)),
            };
            let Some(link) = map_link(cbs, kinds, view.type_index()) else { return Step::ok(out) };
            let mapped = attempt!(call_link(m, link, &view).map_err(|e| update_visit_error_context(e, view.as_raw())));
            Step::ok(mapped.or(out))
        });
    }
    let Some(link) = map_link(cbs, kinds, value.type_index) else {
        return m.default_mutate_step(value, mode);
    };
    let original = attempt!(Any::from_view(&value));
    let mapped = attempt!(call_link(m, link, &original).map_err(|e| update_visit_error_context(e, &value)));
    drop(original);
    // The callback saw the value and may have kept it: in place only if it
    // is still nobody else's.
    let kept_mode = if mode == InplaceMode::Allow && protocol::unique(&value) { mode } else { InplaceMode::Disallow };
    let descent = match &mapped {
        None => m.default_mutate_step(value, kept_mode),
        Some(r) if protocol::keeps(&mapped, &value) => m.default_mutate_step(*r.as_raw(), kept_mode),
        // A fresh result nobody else holds may be changed in place.
        Some(r) => {
            // SAFETY: an object view of a live value.
            let unique = r.type_index() >= ti::kTVMFFIStaticObjectBegin
                && unsafe { crate::object::strong_count(r.as_raw().value.v_obj) } == 1;
            let mode = if mode == InplaceMode::Allow && unique { mode } else { InplaceMode::Disallow };
            m.default_mutate_step(*r.as_raw(), mode)
        }
    };
    // `mapped` holds what the descent borrows until it is done.
    descent.and_then(move |out| Step::ok(out.or(mapped)))
}

fn new_mutator(engine: Engine) -> Result<MutatorRef, Error> {
    ensure_reflection();
    descent::set_engine_step(engine_step);
    let obj = ObjectPtr::new(StructuralMutatorObj {
        base: MutatorBase { header: header_placeholder(), vtable: &ENGINE_VTABLE, region: AtomicI32::new(def_region::NONE) },
        engine,
        remap: Mutex::new(HashMap::new()),
    })?;
    MutatorRef::from_object(obj.into_object_ref())
}

/// `__ffi_shallow_copy__` of mutators.
fn shallow_copy_mutator(m: &MutatorRef) -> Result<ObjectRef, Error> {
    let region = AtomicI32::new(m.def_region_kind());
    if std::ptr::eq(m.vtable(), &ENGINE_VTABLE) {
        // SAFETY: the vtable identifies tether's own layout.
        let this = unsafe { &*(m.as_object().as_ptr() as *const StructuralMutatorObj) };
        let base = MutatorBase { header: header_placeholder(), vtable: &ENGINE_VTABLE, region };
        let remap = Mutex::new(this.remap.lock().clone());
        return Ok(ObjectPtr::new(StructuralMutatorObj { base, engine: this.engine.clone(), remap })?.into_object_ref());
    }
    let base = MutatorBase { header: header_placeholder(), vtable: m.vtable(), region };
    Ok(ObjectPtr::new(MutatorPrefixCopy { base })?.into_object_ref())
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
    let m = new_mutator(Engine::Map { callbacks, with_kind, post_order })?;
    Ok(m.mutate_raw(root.as_raw(), InplaceMode::Allow)?.unwrap_or(root))
}

/// `root` rewritten by callbacks that own their descent.
pub fn structural_mutate(root: Any, callbacks: Vec<Entry>) -> Result<Any, Error> {
    let m = new_mutator(Engine::Mutate { callbacks })?;
    Ok(m.mutate_raw(root.as_raw(), InplaceMode::Allow)?.unwrap_or(root))
}

pub(crate) fn ensure_reflection() {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    let r = DONE.get_or_init(|| {
        (|| -> Result<(), Error> {
            let copy = Function::from_closure(|args| {
                Ok(Any::from_object(shallow_copy_mutator(&MutatorRef::from_object(arg(args, 0, "self")?)?)?))
            })?;
            TypeBuilder::<StructuralMutatorObj>::new()
                .metadata_sized(kind::UNSUPPORTED, std::mem::size_of::<MutatorBase>())?
                .fn_attr("__ffi_shallow_copy__", copy)?
                .type_final(false)?;
            Ok(())
        })()
        .map_err(|e| e.message().to_string())
    });
    if let Err(m) = r {
        panic!("registering structural mutate reflection: {m}");
    }
}
