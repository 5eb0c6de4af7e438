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
use std::sync::atomic::{AtomicI32, Ordering};

use crate::abi::{field_flag, type_index as ti, TVMFFIAny, TVMFFIObject};
use crate::any::Any;
use crate::error::Error;
use crate::native_hook::{call_expected, from_expected_raw, raw_error, Hook};
use crate::object::{ObjectRef, ObjectType};
use crate::type_registry;

use super::{declared_kind, optional_interrupt, StructuralVisitorObj, Visited};
use crate::structural::active_path::{can_close_cycle, Descent};
use crate::structural::{def_region, deep_stack, kind};

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

/// Any visitor, driven through its prefix.
#[derive(Clone)]
pub struct VisitorRef(ObjectRef);

impl VisitorRef {
    /// A visitor object of any layout (checked by type only).
    pub fn from_object(obj: ObjectRef) -> Result<VisitorRef, Error> {
        let expected = StructuralVisitorObj::type_index();
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
    /// its reflected fields (nothing for a POD); continued on a new stack
    /// segment of this thread when its stack runs low. A List, Dict or
    /// object whose default descent by this visitor is already under way
    /// (a cycle) has no children the second time: the walk meets every
    /// node of a cyclic graph and ends.
    pub fn default_visit_raw(&self, value: &TVMFFIAny) -> Result<Visited, Error> {
        let _descent = if can_close_cycle(value.type_index) {
            // SAFETY: an object index's payload is its object pointer.
            let node = unsafe { value.value.v_obj } as usize;
            match Descent::enter(self.base_ptr() as usize, node) {
                Some(d) => Some(d),
                None => return Ok(None),
            }
        } else {
            None
        };
        deep_stack::guarded(|| self.default_visit_here(value))
    }

    fn default_visit_here(&self, value: &TVMFFIAny) -> Result<Visited, Error> {
        let index = value.type_index;
        if let Some(attr) = type_registry::attr_value(index, b"__s_visit__") {
            match Hook::from_value("__s_visit__", &attr)? {
                Some(Hook::Native(f)) => {
                    // SAFETY: a native `__s_visit__` pointer has the
                    // visitor ABI; it borrows both arguments.
                    let f: unsafe extern "C" fn(*mut VisitorBase, TVMFFIAny) -> TVMFFIAny =
                        unsafe { std::mem::transmute(f) };
                    // SAFETY: the hook returns an owned result.
                    return unsafe { decode(f(self.base_ptr(), *value)) };
                }
                Some(Hook::Packed(f)) => {
                    let v = Any::from_view(value)?;
                    return optional_interrupt(call_expected(&f, &[self.as_any(), v])?);
                }
                None => {}
            }
        }
        if index < ti::kTVMFFIStaticObjectBegin {
            return Ok(None);
        }
        let obj = Any::from_view(value)?.get::<ObjectRef>()?;
        self.visit_fields(&obj)
    }

    /// Visit the reflected fields (skipping `SEqHashIgnore`, entering the
    /// def regions fields declare; a FreeVar's own fields inside a simple
    /// region are uses).
    fn visit_fields(&self, obj: &ObjectRef) -> Result<Visited, Error> {
        let fields = || -> Result<Visited, Error> {
            for field in type_registry::all_fields(obj.type_index()) {
                if field.flags & field_flag::kSEqHashIgnore != 0 {
                    continue;
                }
                let v = crate::structural::read_field(obj, field)?;
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
        if self.def_region_kind() == def_region::SIMPLE && declared_kind(obj.type_index()) == kind::FREE_VAR {
            return self.with_def_region_kind(def_region::NONE, fields);
        }
        fields()
    }
}
