//! The visitor protocol TVM-FFI's headers compile in, for every
//! `ffi.StructuralVisitor` whoever made it.
//!
//! A visitor object starts with upstream's `StructuralVisitorObj` layout:
//! the object header, a pointer to an immutable vtable whose one entry is
//! `visit(visitor, value) -> TVMFFIAny`, and the current def region (a
//! 32-bit `TVMFFIDefRegionKind`). Code compiled against the headers builds
//! its own visitors (engine classes extending that layout) and calls
//! `visit` through the vtable of whatever visitor it is handed; tether's
//! engines put their state after the same prefix ([`super`]). So every
//! operation here goes through the prefix only: `visit` calls the vtable,
//! the default descent reads the type's `__s_visit__` column (a native
//! pointer called as `hook(visitor, value)`, or an `ffi.Function`) and
//! otherwise visits the reflected fields, as the headers' inline code does.
//!
//! Results cross as raw `Expected<Optional<VisitInterrupt>>` storage: None
//! to continue, a VisitInterrupt to stop, an `ffi.Error` on failure.

use std::ptr::NonNull;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::abi::{field_flag, type_index as ti, TVMFFIAny, TVMFFIObject};
use crate::values::any::Any;
use crate::values::error::Error;
use crate::reflection::native_hook::{call_expected, from_expected_raw, raw_error, Hook};
use crate::object::{ObjectRef, ObjectType};
use crate::types::type_registry;

use super::interrupt::{optional_interrupt, Visited};
use crate::structural::object_fields::declared_kind;
use crate::structural::active_path::{can_close_cycle, Descent};
use crate::structural::hook_identity;
use crate::structural::value_views::container_children;
use crate::structural::trampoline::{self, Step};
use crate::structural::{def_region, kind};

/// `StructuralVisitorVTable`.
#[repr(C)]
pub struct VisitorVTable {
    pub visit: unsafe extern "C" fn(*mut VisitorBase, TVMFFIAny) -> TVMFFIAny,
}

/// The prefix of every visitor object (upstream's `StructuralVisitorObj`).
#[repr(C)]
pub struct VisitorBase {
    pub(crate) header: TVMFFIObject,
    pub(crate) vtable: *const VisitorVTable,
    /// `def_region_mode_`; compiled code writes it without atomics.
    pub(crate) region: AtomicI32,
}

// SAFETY: the vtable is immutable and lives for the process; the region is
// atomic on tether's side (a visitor is not shared by overlapping
// traversals, as upstream requires).
unsafe impl Send for VisitorBase {}
// SAFETY: as above.
unsafe impl Sync for VisitorBase {}

/// Encode a traversal result as raw `Expected<Optional<VisitInterrupt>>`.
pub(crate) fn encode(r: Result<Visited, Error>) -> TVMFFIAny {
    match r {
        Ok(None) => TVMFFIAny::NONE,
        Ok(Some(interrupt)) => Any::from_object(interrupt).into_raw(),
        Err(e) => raw_error(e),
    }
}

/// Decode raw `Expected<Optional<VisitInterrupt>>` (owned).
///
/// # Safety
/// `raw` must be an owned value.
pub(crate) unsafe fn decode(raw: TVMFFIAny) -> Result<Visited, Error> {
    // SAFETY: per the caller.
    optional_interrupt(unsafe { from_expected_raw(raw) }?)
}

/// How tether's own engine visits a child of one of its visitors as a step
/// of the current work stack; `Err` gives the child back for any other
/// visitor. The engine (the parent module) installs it when it makes its
/// first visitor, so no visitor is the engine's before it is set.
pub(crate) type EngineChildStep = for<'a> fn(&'a VisitorRef, Any) -> Result<Step<'a, Visited>, Any>;

static ENGINE_CHILD_STEP: OnceLock<EngineChildStep> = OnceLock::new();

/// Install the engine's child step (once; later calls keep the first).
pub(crate) fn install_engine_child_step(step: EngineChildStep) {
    let _ = ENGINE_CHILD_STEP.set(step);
}

/// Any visitor, driven through its prefix.
#[derive(Clone)]
pub struct VisitorRef(ObjectRef);

impl VisitorRef {
    /// A visitor object of any layout (checked by type only).
    pub fn from_object(obj: ObjectRef) -> Result<VisitorRef, Error> {
        let expected = VisitorPrefixCopy::type_index();
        if !type_registry::is_instance(obj.type_index(), expected) {
            return Err(Error::type_error(format!(
                "Expected `ffi.StructuralVisitor` but got `{}`",
                type_registry::type_key_of(obj.type_index())
            )));
        }
        Ok(VisitorRef(obj))
    }

    /// The visitor a vtable or hook was called with (borrowed: a new
    /// reference is taken).
    ///
    /// # Safety
    /// `p` must be a live visitor object.
    pub(crate) unsafe fn from_raw(p: *mut VisitorBase) -> Result<VisitorRef, Error> {
        let p = NonNull::new(p as *mut TVMFFIObject).ok_or_else(|| Error::value_error("visitor is NULL"))?;
        // SAFETY: a live object per the caller.
        Ok(VisitorRef(unsafe { ObjectRef::from_raw_borrowed(p) }))
    }

    fn base(&self) -> &VisitorBase {
        // SAFETY: every object of this type starts with the prefix.
        unsafe { &*(self.0.as_ptr() as *const VisitorBase) }
    }

    fn base_ptr(&self) -> *mut VisitorBase {
        self.0.as_ptr() as *mut VisitorBase
    }

    pub fn as_object(&self) -> &ObjectRef {
        &self.0
    }

    pub(crate) fn as_any(&self) -> Any {
        Any::from_object(self.0.clone())
    }

    /// The vtable, when tether's engine made this visitor.
    pub(crate) fn vtable(&self) -> *const VisitorVTable {
        self.base().vtable
    }

    /// The active def region (`TVMFFIDefRegionKind`).
    pub fn def_region_kind(&self) -> i32 {
        self.base().region.load(Ordering::Relaxed)
    }

    /// Run `body` inside def region `kind` (no effect inside a pattern).
    pub fn with_def_region_kind<R>(&self, kind: i32, body: impl FnOnce() -> R) -> R {
        let old = self.def_region_kind();
        if old == def_region::PATTERN {
            return body();
        }
        self.base().region.store(kind, Ordering::Relaxed);
        let r = body();
        self.base().region.store(old, Ordering::Relaxed);
        r
    }

    /// Visit `value` through the visitor's vtable.
    pub fn visit_raw(&self, value: &TVMFFIAny) -> Result<Visited, Error> {
        let vt = self.vtable();
        if vt.is_null() {
            return Err(Error::value_error("the visitor has no dispatch table"));
        }
        // SAFETY: a constructed visitor's vtable outlives it; the callee
        // borrows the value and returns an owned result.
        unsafe { decode(((*vt).visit)(self.base_ptr(), *value)) }
    }

    pub fn visit(&self, value: &Any) -> Result<Visited, Error> {
        self.visit_raw(value.as_raw())
    }

    pub fn default_visit(&self, value: &Any) -> Result<Visited, Error> {
        self.default_visit_raw(value.as_raw())
    }

    /// The default descent into `value`: its type's `__s_visit__` hook, or
    /// its reflected fields (nothing for a POD), run on an explicit work
    /// stack. A List, Dict or object whose default descent by this visitor
    /// is already under way (a cycle) has no children the second time: the
    /// walk meets every node of a cyclic graph and ends.
    pub fn default_visit_raw(&self, value: &TVMFFIAny) -> Result<Visited, Error> {
        let _run = trampoline::enter("structural visit")?;
        trampoline::run(self.default_visit_step(Any::from_view(value)?))
    }

    /// [`Self::default_visit_raw`] as a step of a running traversal.
    pub(crate) fn default_visit_step<'a>(&'a self, value: Any) -> Step<'a, Visited> {
        if !can_close_cycle(value.type_index()) {
            return self.default_visit_here(value);
        }
        // SAFETY: an object index's payload is its object pointer.
        let node = unsafe { value.as_raw().value.v_obj } as usize;
        match Descent::enter(self.base_ptr() as usize, node) {
            // Left once the children are done (or failed).
            Some(descent) => self.default_visit_here(value).then(move |r| {
                drop(descent);
                Step::Done(r)
            }),
            None => Step::ok(None),
        }
    }

    /// Visit `child` from a descent: on this work stack when tether's
    /// engine drives the visitor, else through its vtable.
    fn child_step<'a>(&'a self, child: Any) -> Step<'a, Visited> {
        match ENGINE_CHILD_STEP.get() {
            Some(engine_step) => engine_step(self, child).unwrap_or_else(|child| Step::Done(self.visit(&child))),
            None => Step::Done(self.visit(&child)),
        }
    }

    /// Visit `items` in order, stopping at the first interrupt or error.
    fn each_step<'a>(&'a self, mut items: std::vec::IntoIter<Any>) -> Step<'a, Visited> {
        match items.next() {
            None => Step::ok(None),
            Some(item) => self.child_step(item).and_then(move |r| match r {
                None => self.each_step(items),
                interrupt => Step::ok(interrupt),
            }),
        }
    }

    fn default_visit_here<'a>(&'a self, value: Any) -> Step<'a, Visited> {
        let index = value.type_index();
        if let Some(attr) = crate::reflection::attr_columns::attr_value(index, b"__s_visit__") {
            match Hook::from_value("__s_visit__", &attr) {
                Err(e) => return Step::err(e),
                // The builtin container hook visits every element (value):
                // the same, without nesting a native frame.
                Ok(Some(Hook::Native(f))) if hook_identity::is_builtin_visit(f as usize) => {
                    return match container_children(value.as_raw()) {
                        Ok(items) => self.each_step(items.into_iter()),
                        Err(e) => Step::err(e),
                    };
                }
                // A custom hook visits children by calling back into the
                // visitor (native nesting, bounded at re-entry).
                Ok(Some(Hook::Native(f))) => {
                    // SAFETY: a native `__s_visit__` pointer has the
                    // visitor ABI; it borrows both arguments.
                    let f: unsafe extern "C" fn(*mut VisitorBase, TVMFFIAny) -> TVMFFIAny =
                        unsafe { std::mem::transmute(f) };
                    // SAFETY: the hook returns an owned result.
                    return Step::Done(unsafe { decode(f(self.base_ptr(), *value.as_raw())) });
                }
                Ok(Some(Hook::Packed(f))) => {
                    return Step::Done(call_expected(&f, &[self.as_any(), value]).and_then(optional_interrupt));
                }
                Ok(None) => {}
            }
        }
        if index < ti::kTVMFFIStaticObjectBegin {
            return Step::ok(None);
        }
        match value.get::<ObjectRef>() {
            Ok(obj) => self.visit_fields_step(obj),
            Err(e) => Step::err(e),
        }
    }

    /// Visit the reflected fields (skipping `SEqHashIgnore`, entering the
    /// def regions fields declare; a FreeVar's own fields inside a simple
    /// region are uses).
    fn visit_fields_step<'a>(&'a self, obj: ObjectRef) -> Step<'a, Visited> {
        let fields: Vec<_> = type_registry::all_fields(obj.type_index())
            .into_iter()
            .filter(|f| f.flags & field_flag::kSEqHashIgnore == 0)
            .collect();
        let outer = self.def_region_kind();
        if outer == def_region::SIMPLE && declared_kind(obj.type_index()) == kind::FREE_VAR {
            self.set_region(def_region::NONE);
            return self.field_step(obj, fields.into_iter()).then(move |r| {
                self.set_region(outer);
                Step::Done(r)
            });
        }
        self.field_step(obj, fields.into_iter())
    }

    fn field_step<'a>(
        &'a self,
        obj: ObjectRef,
        mut fields: std::vec::IntoIter<&'static crate::abi::TVMFFIFieldInfo>,
    ) -> Step<'a, Visited> {
        let Some(field) = fields.next() else { return Step::ok(None) };
        let v = match crate::structural::read_field(&obj, field) {
            Ok(v) => v,
            Err(e) => return Step::err(e),
        };
        let region = if field.flags & field_flag::kSEqHashDefSimple != 0 {
            Some(def_region::SIMPLE)
        } else if field.flags & field_flag::kSEqHashDefPattern != 0 {
            Some(def_region::PATTERN)
        } else {
            None
        };
        // As `with_def_region_kind`: no effect inside a pattern region.
        let restore = match region {
            Some(k) if self.def_region_kind() != def_region::PATTERN => {
                let old = self.def_region_kind();
                self.set_region(k);
                Some(old)
            }
            _ => None,
        };
        self.child_step(v).then(move |r| {
            if let Some(old) = restore {
                self.set_region(old);
            }
            match r {
                Ok(None) => self.field_step(obj, fields),
                other => Step::Done(other),
            }
        })
    }

    fn set_region(&self, kind: i32) {
        self.base().region.store(kind, Ordering::Relaxed);
    }
}

/// A visitor that holds only upstream's prefix: the shallow copy of a
/// visitor compiled code made (as upstream's copy, it keeps the vtable and
/// the region, not the engine's own state).
#[repr(C)]
pub(crate) struct VisitorPrefixCopy {
    pub(crate) base: VisitorBase,
}
object_type!(VisitorPrefixCopy, "ffi.StructuralVisitor");
