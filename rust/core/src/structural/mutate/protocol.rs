//! The mutator protocol TVM-FFI's headers compile in, for every
//! `ffi.StructuralMutator` whoever made it.
//!
//! A mutator object starts with upstream's `StructuralMutatorObj` layout:
//! the object header, a pointer to an immutable vtable (`mutate`,
//! `maybe_inplace_mutate`, `var_remap_get`, `var_remap_set`) and the current
//! def region. Code compiled against the headers builds its own mutators
//! and calls through the vtable of whatever mutator it is handed; tether's
//! engines put their state after the same prefix ([`super`]). Everything
//! here goes through the prefix only:
//!
//! * `mutate(value, mode)` calls `maybe_inplace_mutate` when in-place
//!   mutation is allowed and the value is an object nobody else references,
//!   `mutate` otherwise;
//! * the default descent ([`super::descent`], on an explicit work stack)
//!   reads the type's `__s_maybe_inplace_mutate__` (in place) or
//!   `__s_mutate__` column (a native pointer called as
//!   `hook(mutator, value)`, or an `ffi.Function`); without a hook a POD
//!   comes back as it is and an object has its reflected fields rewritten on
//!   a shallow copy, FreeVar and DAG nodes going through the variable remap;
//! * the container algorithms behind the builtin hooks
//!   ([`super::container`]).
//!
//! Results cross as raw `Expected<UnchangedOr<Any>>` storage: the
//! `kTVMFFIUnchanged` marker, a replacement, or an `ffi.Error`.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::abi::{type_index as ti, TVMFFIAny, TVMFFIObject};
use crate::values::any::Any;
use crate::values::error::Error;
use crate::reflection::native_hook::{from_expected_raw, raw_error};
use crate::object::{self, ObjectRef, ObjectType};
use crate::structural::def_region;
use crate::structural::trampoline;
use crate::types::type_registry;


/// A mutation result: `None` is "unchanged" (keep the original).
pub type Mutated = Option<Any>;

/// Whether the current path may be mutated in place (`InplaceMode`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum InplaceMode {
    Disallow = 0,
    Allow = 1,
}

/// A mutator that holds only upstream's prefix: the shallow copy of a
/// mutator compiled code made (as upstream's copy, it keeps the vtable and
/// the region, not the engine's own state).
#[repr(C)]
pub(crate) struct MutatorPrefixCopy {
    pub(crate) base: MutatorBase,
}
object_type!(MutatorPrefixCopy, "ffi.StructuralMutator");

pub(crate) type MutateFn = unsafe extern "C" fn(*mut MutatorBase, TVMFFIAny) -> TVMFFIAny;

/// `StructuralMutatorVTable`.
#[repr(C)]
pub struct MutatorVTable {
    pub mutate: MutateFn,
    pub maybe_inplace_mutate: MutateFn,
    pub var_remap_get: MutateFn,
    pub var_remap_set: unsafe extern "C" fn(*mut MutatorBase, TVMFFIAny, TVMFFIAny) -> TVMFFIAny,
}

/// The prefix of every mutator object (upstream's `StructuralMutatorObj`).
#[repr(C)]
pub struct MutatorBase {
    pub(crate) header: TVMFFIObject,
    pub(crate) vtable: *const MutatorVTable,
    /// `def_region_mode_`; compiled code writes it without atomics.
    pub(crate) region: AtomicI32,
}

// SAFETY: the vtable is immutable and lives for the process; the region is
// atomic on tether's side (a mutator is not shared by overlapping
// traversals, as upstream requires).
unsafe impl Send for MutatorBase {}
// SAFETY: as above.
unsafe impl Sync for MutatorBase {}

/// The raw "unchanged" marker.
pub(crate) const UNCHANGED: TVMFFIAny = TVMFFIAny { type_index: ti::kTVMFFIUnchanged, ..TVMFFIAny::NONE };

/// Encode a mutation result as raw `Expected<UnchangedOr<Any>>`.
pub(crate) fn encode(r: Result<Mutated, Error>) -> TVMFFIAny {
    match r {
        Ok(None) => UNCHANGED,
        Ok(Some(v)) => v.into_raw(),
        Err(e) => raw_error(e),
    }
}

/// A replacement, or "unchanged" for the marker.
pub(crate) fn from_value(v: Any) -> Mutated {
    (v.type_index() != ti::kTVMFFIUnchanged).then_some(v)
}

/// Decode raw `Expected<UnchangedOr<Any>>` (owned).
///
/// # Safety
/// `raw` must be an owned value.
pub(crate) unsafe fn decode(raw: TVMFFIAny) -> Result<Mutated, Error> {
    // SAFETY: per the caller.
    Ok(from_value(unsafe { from_expected_raw(raw) }?))
}

/// Whether `result` leaves `original` as it was.
pub(crate) fn keeps(result: &Mutated, original: &TVMFFIAny) -> bool {
    match result {
        None => true,
        Some(v) => {
            let r = v.as_raw();
            // SAFETY: every payload is 8 readable bytes.
            r.type_index == original.type_index && unsafe { r.value.v_uint64 == original.value.v_uint64 }
        }
    }
}

/// Whether `value` is an object nobody else references.
pub(crate) fn unique(value: &TVMFFIAny) -> bool {
    // SAFETY: a live object per the caller's view.
    value.type_index >= ti::kTVMFFIStaticObjectBegin && unsafe { object::strong_count(value.value.v_obj) } == 1
}

/// Any mutator, driven through its prefix.
#[derive(Clone)]
pub struct MutatorRef(ObjectRef);

impl MutatorRef {
    /// A mutator object of any layout (checked by type only).
    pub fn from_object(obj: ObjectRef) -> Result<MutatorRef, Error> {
        if !type_registry::is_instance(obj.type_index(), MutatorPrefixCopy::type_index()) {
            return Err(Error::type_error(format!(
                "Expected `ffi.StructuralMutator` but got `{}`",
                type_registry::type_key_of(obj.type_index())
            )));
        }
        Ok(MutatorRef(obj))
    }

    /// The mutator a vtable or hook was called with (a new reference).
    ///
    /// # Safety
    /// `p` must be a live mutator object.
    pub(crate) unsafe fn from_raw(p: *mut MutatorBase) -> Result<MutatorRef, Error> {
        let p = NonNull::new(p as *mut TVMFFIObject).ok_or_else(|| Error::value_error("mutator is NULL"))?;
        // SAFETY: a live object per the caller.
        Ok(MutatorRef(unsafe { ObjectRef::from_raw_borrowed(p) }))
    }

    fn base(&self) -> &MutatorBase {
        // SAFETY: every object of this type starts with the prefix.
        unsafe { &*(self.0.as_ptr() as *const MutatorBase) }
    }

    fn base_ptr(&self) -> *mut MutatorBase {
        self.0.as_ptr() as *mut MutatorBase
    }

    fn table(&self) -> Result<&MutatorVTable, Error> {
        // SAFETY: a constructed mutator's vtable outlives it.
        unsafe { self.base().vtable.as_ref() }.ok_or_else(|| Error::value_error("the mutator has no dispatch table"))
    }

    pub(crate) fn vtable(&self) -> *const MutatorVTable {
        self.base().vtable
    }

    pub fn as_object(&self) -> &ObjectRef {
        &self.0
    }

    pub(crate) fn as_any(&self) -> Any {
        Any::from_object(self.0.clone())
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

    /// Mutate a borrowed value through the vtable: in place only when
    /// allowed and nobody else references it.
    pub fn mutate_raw(&self, value: &TVMFFIAny, mode: InplaceMode) -> Result<Mutated, Error> {
        let t = self.table()?;
        let f = if mode == InplaceMode::Allow && unique(value) { t.maybe_inplace_mutate } else { t.mutate };
        // SAFETY: the callee borrows both and returns an owned result.
        unsafe { decode(f(self.base_ptr(), *value)) }
    }

    /// The replacement recorded for `var` (None on a miss, the unchanged
    /// marker for a recorded "unchanged").
    pub fn var_remap_get(&self, var: &TVMFFIAny) -> Result<Any, Error> {
        // SAFETY: as for mutate_raw.
        unsafe { from_expected_raw((self.table()?.var_remap_get)(self.base_ptr(), *var)) }
    }

    pub fn var_remap_set(&self, var: &TVMFFIAny, mapped: &TVMFFIAny) -> Result<(), Error> {
        // SAFETY: as for mutate_raw.
        unsafe { from_expected_raw((self.table()?.var_remap_set)(self.base_ptr(), *var, *mapped)) }.map(|_| ())
    }

    /// The default descent into `value` (see the module documentation),
    /// run on an explicit work stack ([`super::descent`]); an error leaving
    /// it names the value in its visit error context.
    pub fn default_mutate_raw(&self, value: &TVMFFIAny, mode: InplaceMode) -> Result<Mutated, Error> {
        let _run = trampoline::enter("structural mutate")?;
        trampoline::run(self.default_mutate_step(*value, mode))
    }

    pub(crate) fn base_ptr_for_descent(&self) -> *mut MutatorBase {
        self.base_ptr()
    }

    pub(crate) fn set_region(&self, kind: i32) {
        self.base().region.store(kind, Ordering::Relaxed);
    }
}
