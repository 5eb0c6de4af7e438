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
//! * the default descent reads the type's `__s_maybe_inplace_mutate__` (in
//!   place) or `__s_mutate__` column (a native pointer called as
//!   `hook(mutator, value)`, or an `ffi.Function`); without a hook a POD
//!   comes back as it is and an object has its reflected fields rewritten on
//!   a shallow copy, FreeVar and DAG nodes going through the variable remap;
//! * the container algorithms behind the builtin hooks
//!   ([`super::super::container_hooks`]).
//!
//! Results cross as raw `Expected<UnchangedOr<Any>>` storage: the
//! `kTVMFFIUnchanged` marker, a replacement, or an `ffi.Error`.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::abi::{field_flag, type_index as ti, TVMFFIAny, TVMFFIObject, TVMFFISeqCell};
use crate::any::Any;
use crate::containers::map_cell::{CellRef, MapCell};
use crate::containers::{Array, Dict, List, Map};
use crate::dataclass;
use crate::error::Error;
use crate::function::Function;
use crate::native_hook::{call_expected, from_expected_raw, raw_error, Hook};
use crate::object::{self, ObjectRef, ObjectType};
use crate::structural::visit::declared_kind;
use crate::structural::active_path::{can_close_cycle, Descent};
use crate::structural::visit_error_context::update_visit_error_context;
use crate::structural::{deep_stack, def_region, kind};
use crate::type_registry;

use super::{InplaceMode, Mutated, StructuralMutatorObj};

type MutateFn = unsafe extern "C" fn(*mut MutatorBase, TVMFFIAny) -> TVMFFIAny;

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
fn unique(value: &TVMFFIAny) -> bool {
    // SAFETY: a live object per the caller's view.
    value.type_index >= ti::kTVMFFIStaticObjectBegin && unsafe { object::strong_count(value.value.v_obj) } == 1
}

/// Any mutator, driven through its prefix.
#[derive(Clone)]
pub struct MutatorRef(ObjectRef);

impl MutatorRef {
    /// A mutator object of any layout (checked by type only).
    pub fn from_object(obj: ObjectRef) -> Result<MutatorRef, Error> {
        if !type_registry::is_instance(obj.type_index(), StructuralMutatorObj::type_index()) {
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
    /// continued on a new stack segment of this thread when its stack runs
    /// low; an error leaving it names the value in its visit error context.
    /// A List, Dict or object whose default descent by this mutator is
    /// already under way (a cycle) is left unchanged the second time, so a
    /// rewrite of a cyclic graph ends (its copy points back at the original
    /// node where the cycle closed).
    pub fn default_mutate_raw(&self, value: &TVMFFIAny, mode: InplaceMode) -> Result<Mutated, Error> {
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
        deep_stack::guarded(|| self.default_mutate_here(value, mode)).map_err(|e| update_visit_error_context(e, value))
    }

    fn default_mutate_here(&self, value: &TVMFFIAny, mode: InplaceMode) -> Result<Mutated, Error> {
        let index = value.type_index;
        if mode == InplaceMode::Allow {
            if let Some(attr) = type_registry::attr_value(index, b"__s_maybe_inplace_mutate__") {
                match attr.type_index() {
                    ti::kTVMFFIOpaquePtr | ti::kTVMFFIFunction => return self.call_hook("__s_maybe_inplace_mutate__", &attr, value),
                    _ => {}
                }
            }
            return self.default_mutate_here(value, InplaceMode::Disallow);
        }
        if let Some(attr) = type_registry::attr_value(index, b"__s_mutate__") {
            return self.call_hook("__s_mutate__", &attr, value);
        }
        if index < ti::kTVMFFIStaticObjectBegin {
            return Ok(Some(Any::from_view(value)?));
        }
        self.mutate_object(value)
    }

    fn call_hook(&self, attr_name: &str, attr: &Any, value: &TVMFFIAny) -> Result<Mutated, Error> {
        match Hook::from_value(attr_name, attr) {
            Ok(Some(Hook::Native(f))) => {
                // SAFETY: a native mutate hook has the mutator ABI; it
                // borrows both arguments and returns an owned result.
                let f: MutateFn = unsafe { std::mem::transmute(f) };
                // SAFETY: as above.
                unsafe { decode(f(self.base_ptr(), *value)) }
            }
            Ok(Some(Hook::Packed(f))) => Ok(from_value(call_expected(&f, &[self.as_any(), Any::from_view(value)?])?)),
            Ok(None) => Ok(None),
            Err(_) => Err(Error::type_error(format!("{attr_name} must be a direct hook pointer or ffi.Function"))),
        }
    }

    /// An object without a mutate hook: FreeVar/DAG nodes through the
    /// remap, then its reflected fields on a shallow copy.
    fn mutate_object(&self, value: &TVMFFIAny) -> Result<Mutated, Error> {
        let k = declared_kind(index_of(value));
        let (is_var, is_dag) = (k == kind::FREE_VAR, k == kind::DAG_NODE);
        if is_var || is_dag {
            let hit = self.var_remap_get(value)?;
            if !hit.is_none() {
                return Ok(from_value(hit));
            }
        }
        if is_var && self.def_region_kind() == def_region::NONE {
            return Ok(None);
        }
        let obj = Any::from_view(value)?.get::<ObjectRef>()?;
        let result = self.mutate_fields(&obj)?;
        if (is_var || is_dag) && (is_dag || self.def_region_kind() == def_region::PATTERN || result.is_some()) {
            let recorded = match &result {
                Some(v) => *v.as_raw(),
                None => UNCHANGED,
            };
            self.var_remap_set(value, &recorded)?;
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
                let v = crate::structural::read_field(&copy, field)?;
                let mutate = || self.mutate_raw(v.as_raw(), InplaceMode::Disallow);
                let m = if field.flags & field_flag::kSEqHashDefSimple != 0 {
                    self.with_def_region_kind(def_region::SIMPLE, mutate)
                } else if field.flags & field_flag::kSEqHashDefPattern != 0 {
                    self.with_def_region_kind(def_region::PATTERN, mutate)
                } else {
                    mutate()
                }?;
                if keeps(&m, v.as_raw()) {
                    continue;
                }
                if field.setter.is_null() {
                    return Err(Error::type_error(format!(
                        "Cannot structurally mutate field `{}` of type `{}` because it does not define a setter",
                        crate::structural::field_name(field),
                        type_registry::type_key_of(index)
                    )));
                }
                dataclass::set_field(&copy, field, m.expect("changed").as_raw())?;
                changed = true;
            }
            Ok(changed)
        };
        let changed = if self.def_region_kind() == def_region::SIMPLE && declared_kind(index) == kind::FREE_VAR {
            self.with_def_region_kind(def_region::NONE, fields)?
        } else {
            fields()?
        };
        Ok(changed.then(|| Any::from_object(copy)))
    }
}

fn index_of(v: &TVMFFIAny) -> i32 {
    v.type_index
}

/// A distinct copy of `obj` through `__ffi_shallow_copy__` (run-time
/// dataclass types are copied field by field without one).
pub(crate) fn shallow_copy(obj: &ObjectRef) -> Result<ObjectRef, Error> {
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
        _ => return Err(Error::type_error("__ffi_shallow_copy__ must be an ffi.Function")),
    };
    match copy.as_object() {
        Some(c) if c.type_index() == index && !c.same_as(obj) => Ok(c),
        _ => Err(Error::type_error("Shallow copy callback must return a distinct object with the same type as its input")),
    }
}

/// The sequence cell of an Array or List object (it follows the header).
///
/// # Safety
/// `obj` must be a live Array or List.
unsafe fn seq_cell(obj: *mut TVMFFIObject) -> *mut TVMFFISeqCell {
    // SAFETY: pointer arithmetic inside the object, per the caller.
    unsafe { (obj as *mut u8).add(std::mem::size_of::<TVMFFIObject>()) as *mut TVMFFISeqCell }
}

/// The children of a container, borrowed in place (as TVM-FFI reads them,
/// so that a child the container alone holds is seen as unique): a
/// sequence's elements, a map's values with their keys.
///
/// # Safety
/// `value` must be a live Array, List, Map or Dict, not changed while the
/// views are used.
unsafe fn borrowed_children(value: &TVMFFIAny) -> Vec<(Option<TVMFFIAny>, TVMFFIAny)> {
    // SAFETY: a live container per the caller.
    let obj = unsafe { value.value.v_obj };
    match value.type_index {
        ti::kTVMFFIArray | ti::kTVMFFIList => {
            // SAFETY: as above; `size` elements are stored at `data`.
            unsafe {
                let cell = seq_cell(obj);
                let items = (*cell).data as *const TVMFFIAny;
                (0..(*cell).size.max(0) as usize).map(|i| (None, *items.add(i))).collect()
            }
        }
        // SAFETY: live pairs of the live map.
        _ => CellRef(obj as *mut MapCell).pairs().into_iter().map(|kv| unsafe { (Some((*kv).key), (*kv).value) }).collect(),
    }
}

/// Copy-on-write over a container's elements (or a map's values): the
/// container itself when every child is kept, else a new one.
///
/// # Safety
/// `value` must be a live Array, List, Map or Dict.
pub(crate) unsafe fn mutate_container_copy(m: &MutatorRef, value: &TVMFFIAny) -> Result<Mutated, Error> {
    // Hold the container while its children are borrowed.
    let _keep = Any::from_view(value)?;
    // SAFETY: per the caller.
    let children = unsafe { borrowed_children(value) };
    let mut out: Option<Vec<(Option<Any>, Any)>> = None;
    let owned = |(k, v): &(Option<TVMFFIAny>, TVMFFIAny)| -> Result<(Option<Any>, Any), Error> {
        Ok((k.as_ref().map(Any::from_view).transpose()?, Any::from_view(v)?))
    };
    for (i, child) in children.iter().enumerate() {
        let r = m.mutate_raw(&child.1, InplaceMode::Disallow)?;
        let kept = keeps(&r, &child.1);
        match &mut out {
            Some(o) => {
                let (k, v) = owned(child)?;
                o.push((k, r.unwrap_or(v)));
            }
            None if kept => {}
            None => {
                let mut o = children[..i].iter().map(owned).collect::<Result<Vec<_>, Error>>()?;
                o.push((owned(child)?.0, r.expect("changed")));
                out = Some(o);
            }
        }
    }
    let Some(items) = out else { return Ok(None) };
    let values = || items.iter().map(|(_, v)| v.clone()).collect::<Vec<Any>>();
    let pairs = || items.iter().map(|(k, v)| (k.clone().unwrap_or_default(), v.clone())).collect::<Vec<(Any, Any)>>();
    Ok(Some(match value.type_index {
        ti::kTVMFFIArray => Any::from_object(Array::new(values())?.into_object()),
        ti::kTVMFFIList => Any::from_object(List::new(values())?.into_object()),
        ti::kTVMFFIMap => Any::from_object(Map::new(pairs())?.into_object()),
        _ => Any::from_object(Dict::new(pairs())?.into_object()),
    }))
}

/// Replace a stored value in place, releasing the old one.
///
/// # Safety
/// `slot` must hold an owned value of an object nobody else is using.
unsafe fn replace_slot(slot: *mut TVMFFIAny, v: Any) {
    // SAFETY: per the caller; the old value's reference moves to `old`.
    let old = unsafe { std::ptr::replace(slot, v.into_raw()) };
    // SAFETY: as above.
    drop(unsafe { Any::from_raw_owned(old) });
}

/// Rewrite a uniquely owned container's children in place (each child in
/// place too when it is itself unique); always "unchanged".
///
/// # Safety
/// `value` must be a live Array, List, Map or Dict that nobody else
/// references.
pub(crate) unsafe fn mutate_container_in_place(m: &MutatorRef, value: &TVMFFIAny) -> Result<Mutated, Error> {
    // SAFETY: a live container per the caller.
    let obj = unsafe { value.value.v_obj };
    match value.type_index {
        ti::kTVMFFIArray | ti::kTVMFFIList => {
            // The cell is re-read for every element, as a callback may have
            // changed the sequence.
            // SAFETY: a live Array or List per the caller.
            let cell = unsafe { seq_cell(obj) };
            // SAFETY (every block below): the container is live and
            // unshared per the caller, and `i` is checked against the
            // current size before its slot is read or written.
            let size = || unsafe { (*cell).size };
            let slot = |i: i64| unsafe { ((*cell).data as *mut TVMFFIAny).add(i as usize) };
            let mut i = 0;
            while i < size() {
                let item = unsafe { *slot(i) };
                let r = m.mutate_raw(&item, InplaceMode::Allow)?;
                if !keeps(&r, &item) && i < size() {
                    unsafe { replace_slot(slot(i), r.expect("changed")) };
                }
                i += 1;
            }
        }
        _ => {
            let map = CellRef(obj as *mut MapCell);
            for kv in map.pairs() {
                // SAFETY: live pairs of the uniquely owned map.
                let item = unsafe { (*kv).value };
                let r = m.mutate_raw(&item, InplaceMode::Allow)?;
                if !keeps(&r, &item) {
                    // SAFETY: as above.
                    unsafe { replace_slot(&mut (*kv).value, r.expect("changed")) };
                }
            }
        }
    }
    Ok(None)
}
