//! The default descent of a mutation, as steps of an explicit work stack
//! ([`crate::structural::trampoline`]): a mutator made by tether rewrites
//! nested values without nesting native frames, whatever their depth, and
//! hands a child to any other mutator through its vtable.
//!
//! What a descent does follows the protocol ([`super::protocol`]): the
//! type's `__s_maybe_inplace_mutate__` (in place) or `__s_mutate__` hook,
//! else a POD comes back as it is and an object has its reflected fields
//! rewritten on a shallow copy, FreeVar and DAG nodes going through the
//! variable remap. The builtin container and leaf hooks are recognised and
//! run here as steps ([`super::container`]); a custom hook is called
//! natively and visits its children by calling back into the mutator.

use std::sync::OnceLock;

use crate::abi::{field_flag, type_index as ti, TVMFFIAny, TVMFFIFieldInfo};
use crate::values::any::Any;
use crate::dataclass;
use crate::values::error::Error;
use crate::values::function::Function;
use crate::reflection::native_hook::{call_expected, Hook};
use crate::object::ObjectRef;
use crate::structural::active_path::{can_close_cycle, Descent};
use crate::structural::hook_identity::{self, BuiltinMutate};
use crate::structural::trampoline::Step;
use crate::structural::object_fields::declared_kind;
use crate::structural::visit_error_context::update_visit_error_context;
use crate::structural::{def_region, kind};
use crate::types::type_registry;

use super::attempt::attempt;
use super::container;
use super::protocol::{decode, from_value, keeps, InplaceMode, MutateFn, Mutated, MutatorRef, UNCHANGED};

/// The step of a mutator tether's engine drives (in place only when
/// allowed and nobody else references the value), `None` for any other
/// mutator. The engine sits above the descent it drives and fills this in
/// ([`set_engine_step`]) before it makes its first mutator.
pub(crate) type EngineStep = for<'a> fn(&'a MutatorRef, TVMFFIAny, InplaceMode) -> Option<Step<'a, Mutated>>;

static ENGINE_STEP: OnceLock<EngineStep> = OnceLock::new();

/// Install the engine's step (the first call wins; there is one engine).
pub(crate) fn set_engine_step(step: EngineStep) {
    let _ = ENGINE_STEP.set(step);
}

impl MutatorRef {
    /// Mutate `value` (borrowed; its owner outlives the step) from a
    /// descent: on this work stack when tether's engine drives the mutator,
    /// else through its vtable. In place only when allowed and nobody else
    /// references the value.
    pub(crate) fn mutate_step<'a>(&'a self, value: TVMFFIAny, mode: InplaceMode) -> Step<'a, Mutated> {
        match ENGINE_STEP.get().and_then(|step| step(self, value, mode)) {
            Some(step) => step,
            None => Step::Done(self.mutate_raw(&value, mode)),
        }
    }

    /// The default descent into `value` as a step. A List, Dict or object
    /// whose default descent by this mutator is already under way (a cycle)
    /// is left unchanged the second time, so a rewrite of a cyclic graph
    /// ends (its copy points back at the original node where the cycle
    /// closed).
    pub(crate) fn default_mutate_step<'a>(&'a self, value: TVMFFIAny, mode: InplaceMode) -> Step<'a, Mutated> {
        let descent = if can_close_cycle(value.type_index) {
            // SAFETY: an object index's payload is its object pointer.
            let node = unsafe { value.value.v_obj } as usize;
            match Descent::enter(self.base_ptr_for_descent() as usize, node) {
                Some(d) => Some(d),
                None => return Step::ok(None),
            }
        } else {
            None
        };
        self.default_mutate_here(value, mode).then(move |r| {
            drop(descent);
            Step::Done(r.map_err(|e| update_visit_error_context(e, &value)))
        })
    }

    fn default_mutate_here<'a>(&'a self, value: TVMFFIAny, mode: InplaceMode) -> Step<'a, Mutated> {
        let index = value.type_index;
        if mode == InplaceMode::Allow {
            if let Some(attr) = crate::reflection::attr_columns::attr_value(index, b"__s_maybe_inplace_mutate__") {
                if matches!(attr.type_index(), ti::kTVMFFIOpaquePtr | ti::kTVMFFIFunction) {
                    return self.hook_step("__s_maybe_inplace_mutate__", &attr, value);
                }
            }
            return self.default_mutate_here(value, InplaceMode::Disallow);
        }
        if let Some(attr) = crate::reflection::attr_columns::attr_value(index, b"__s_mutate__") {
            return self.hook_step("__s_mutate__", &attr, value);
        }
        if index < ti::kTVMFFIStaticObjectBegin {
            return Step::Done(Any::from_view(&value).map(Some));
        }
        self.mutate_object_step(value)
    }

    /// A mutate hook: the builtin ones as steps, others called natively.
    fn hook_step<'a>(&'a self, attr_name: &str, attr: &Any, value: TVMFFIAny) -> Step<'a, Mutated> {
        match Hook::from_value(attr_name, attr) {
            Ok(Some(Hook::Native(f))) => match hook_identity::builtin_mutate(f as usize) {
                Some(BuiltinMutate::Leaf) => Step::ok(None),
                // SAFETY: the builtin container hooks are registered only
                // for Array, List, Map and Dict, so `value` is one (live,
                // held by its owner); the in-place one is reached only for
                // a value nobody else references.
                Some(BuiltinMutate::Copy) => unsafe { container::copy_step(self, value) },
                // SAFETY: as above.
                Some(BuiltinMutate::InPlace) => unsafe { container::in_place_step(self, value) },
                None => {
                    // SAFETY: a native mutate hook has the mutator ABI; it
                    // borrows both arguments and returns an owned result.
                    let f: MutateFn = unsafe { std::mem::transmute(f) };
                    // SAFETY: as above.
                    Step::Done(unsafe { decode(f(self.base_ptr_for_descent(), value)) })
                }
            },
            Ok(Some(Hook::Packed(f))) => {
                let v = attempt!(Any::from_view(&value));
                Step::Done(call_expected(&f, &[self.as_any(), v]).map(from_value))
            }
            Ok(None) => Step::ok(None),
            Err(_) => Step::err(Error::type_error(format!("{attr_name} must be a direct hook pointer or ffi.Function"))),
        }
    }

    /// An object without a mutate hook: FreeVar/DAG nodes through the
    /// remap, then its reflected fields on a shallow copy.
    fn mutate_object_step<'a>(&'a self, value: TVMFFIAny) -> Step<'a, Mutated> {
        let k = declared_kind(value.type_index);
        let (is_var, is_dag) = (k == kind::FREE_VAR, k == kind::DAG_NODE);
        if is_var || is_dag {
            let hit = attempt!(self.var_remap_get(&value));
            if !hit.is_none() {
                return Step::ok(from_value(hit));
            }
        }
        if is_var && self.def_region_kind() == def_region::NONE {
            return Step::ok(None);
        }
        let obj = attempt!(Any::from_view(&value).and_then(|v| v.get::<ObjectRef>()));
        self.mutate_fields_step(&obj).and_then(move |result| {
            if (is_var || is_dag) && (is_dag || self.def_region_kind() == def_region::PATTERN || result.is_some()) {
                let recorded = match &result {
                    Some(v) => *v.as_raw(),
                    None => UNCHANGED,
                };
                attempt!(self.var_remap_set(&value, &recorded));
            }
            Step::ok(result)
        })
    }

    fn mutate_fields_step<'a>(&'a self, obj: &ObjectRef) -> Step<'a, Mutated> {
        let copy = attempt!(shallow_copy(obj));
        let index = copy.type_index();
        let fields: Vec<_> = type_registry::all_fields(index)
            .into_iter()
            .filter(|f| f.flags & field_flag::kSEqHashIgnore == 0)
            .collect();
        let outer = self.def_region_kind();
        // A FreeVar's own fields inside a simple region are uses.
        if outer == def_region::SIMPLE && declared_kind(index) == kind::FREE_VAR {
            self.set_region(def_region::NONE);
            return self.field_step(copy, fields.into_iter(), false).then(move |r| {
                self.set_region(outer);
                Step::Done(r)
            });
        }
        self.field_step(copy, fields.into_iter(), false)
    }

    /// The next field of `copy`: mutated inside the def region it declares,
    /// written back when changed; the copy is the result when any was.
    fn field_step<'a>(&'a self, copy: ObjectRef, mut fields: std::vec::IntoIter<&'static TVMFFIFieldInfo>, changed: bool) -> Step<'a, Mutated> {
        let Some(field) = fields.next() else {
            return Step::ok(changed.then(|| Any::from_object(copy)));
        };
        let v = attempt!(crate::structural::read_field(&copy, field));
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
        self.mutate_step(*v.as_raw(), InplaceMode::Disallow).then(move |r| {
            if let Some(old) = restore {
                self.set_region(old);
            }
            let m = attempt!(r);
            if keeps(&m, v.as_raw()) {
                return self.field_step(copy, fields, changed);
            }
            if field.setter.is_null() {
                return Step::err(Error::type_error(format!(
                    "Cannot structurally mutate field `{}` of type `{}` because it does not define a setter",
                    crate::structural::field_name(field),
                    type_registry::type_key_of(copy.type_index())
                )));
            }
            attempt!(dataclass::set_field(&copy, field, m.expect("changed").as_raw()));
            self.field_step(copy, fields, true)
        })
    }
}

/// A distinct copy of `obj` through `__ffi_shallow_copy__` (run-time
/// dataclass types are copied field by field without one).
pub(crate) fn shallow_copy(obj: &ObjectRef) -> Result<ObjectRef, Error> {
    let index = obj.type_index();
    let copy = match crate::reflection::attr_columns::attr_value(index, b"__ffi_shallow_copy__") {
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

