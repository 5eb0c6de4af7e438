//! The state of one structural-equality run ([`super::equal`]): the
//! bindings, def region, paths and type plans both the explicit-stack walk
//! and its fast path ([`super::equal_fast`]) read and update, the frames
//! the walk keeps, and the steps that finish an object pair the same way
//! for both.

use crate::object::ObjectRef;
use crate::values::any::Any;
use crate::values::error::Error;

use super::access_path::AccessStep;
use super::active_path::{ActivePath, AddressMap};
use super::map_equal::MapTask;
use super::type_plan::{PlanId, TypePlans};
use super::{def_region, kind, SeqItems};

pub(super) struct Equal {
    pub(super) region: i32,
    pub(super) skip_tensor_content: bool,
    pub(super) trace: bool,
    pub(super) lhs_rev: Vec<AccessStep>,
    pub(super) rhs_rev: Vec<AccessStep>,
    /// Bound pairs keyed by object address; the entries keep both alive so
    /// addresses are not reused during the comparison.
    pub(super) lhs_to_rhs: AddressMap<(ObjectRef, ObjectRef)>,
    pub(super) rhs_to_lhs: AddressMap<(ObjectRef, ObjectRef)>,
    /// Kinds, hooks and fields by type, looked up once.
    pub(super) plans: TypePlans,
    /// The pairs being compared, per side (cycle detection).
    pub(super) lhs_path: ActivePath,
    pub(super) rhs_path: ActivePath,
    /// Frames the fast path handed over (innermost first) and the pair it
    /// stopped at, when it stopped before a child pair it does not walk.
    pub(super) handed_over: Vec<Frame>,
    pub(super) handed_over_pair: Option<(Any, Any)>,
}

impl Equal {
    pub(super) fn new(map_free_vars: bool, skip_tensor_content: bool, trace: bool) -> Equal {
        Equal {
            region: if map_free_vars { def_region::PATTERN } else { def_region::NONE },
            skip_tensor_content,
            trace,
            lhs_rev: Vec::new(),
            rhs_rev: Vec::new(),
            lhs_to_rhs: AddressMap::default(),
            rhs_to_lhs: AddressMap::default(),
            plans: TypePlans::new(b"__s_equal__"),
            lhs_path: ActivePath::default(),
            rhs_path: ActivePath::default(),
            handed_over: Vec::new(),
            handed_over_pair: None,
        }
    }

    pub(super) fn push_steps(&mut self, l: Result<AccessStep, Error>, r: Result<AccessStep, Error>) -> Result<(), Error> {
        self.lhs_rev.push(l?);
        self.rhs_rev.push(r?);
        Ok(())
    }

    /// Enter a pair that can close a cycle on both paths: `Ok` with what
    /// to leave later, or `Err` with the pair's result when a side closes a
    /// cycle (equal when both point back equally far). One probe per side
    /// enters it; a side entered for a pair that closes a cycle is left.
    #[inline(always)]
    pub(super) fn enter_pair(&mut self, la: usize, ra: usize) -> Result<(usize, usize), bool> {
        match (self.lhs_path.enter_or_back_reference(la), self.rhs_path.enter_or_back_reference(ra)) {
            (None, None) => Ok((la, ra)),
            (l, r) => {
                if l.is_none() {
                    self.lhs_path.leave(la);
                }
                if r.is_none() {
                    self.rhs_path.leave(ra);
                }
                Err(l == r)
            }
        }
    }

    #[inline(always)]
    pub(super) fn leave_cycle(&mut self, cycle: Option<(usize, usize)>) {
        if let Some((la, ra)) = cycle {
            self.lhs_path.leave(la);
            self.rhs_path.leave(ra);
        }
    }

    /// An object pair's result from its fields' result `ok` and its
    /// structural kind (binding DAG nodes and free variables).
    pub(super) fn finish_object(&mut self, lhs: &ObjectRef, rhs: &ObjectRef, k: i32, ok: bool) -> bool {
        if k != kind::FREE_VAR {
            if ok && k == kind::DAG_NODE {
                self.bind(lhs, rhs);
            }
            return ok;
        }
        if !ok {
            return false;
        }
        if lhs.same_as(rhs) || self.region != def_region::NONE {
            self.bind(lhs, rhs);
            return true;
        }
        false
    }

    pub(super) fn map_through(&self, key: &Any, binding: bool) -> Any {
        let table = if binding { &self.lhs_to_rhs } else { &self.rhs_to_lhs };
        match key.object_ptr().and_then(|p| table.get(&(p as usize))) {
            Some((_, other)) => Any::from_object(other.clone()),
            None => key.clone(),
        }
    }

    pub(super) fn bind(&mut self, lhs: &ObjectRef, rhs: &ObjectRef) {
        self.lhs_to_rhs.insert(lhs.as_ptr() as usize, (lhs.clone(), rhs.clone()));
        self.rhs_to_lhs.insert(rhs.as_ptr() as usize, (rhs.clone(), lhs.clone()));
    }
}

/// The work left on one open pair.
pub(super) enum Task {
    Decided(bool),
    Sequence { a: SeqItems, b: SeqItems, next: usize },
    /// Boxed: a frame moves on every push and pop, and the map task is the
    /// largest.
    Map(Box<MapTask>),
    /// Reflected fields; `object_region` is the region the pair was met
    /// in, `field_region` the one to restore after the current field.
    Fields {
        lhs: ObjectRef,
        rhs: ObjectRef,
        kind: i32,
        plan: PlanId,
        next: usize,
        object_region: i32,
        field_region: Option<i32>,
    },
}

pub(super) struct Frame {
    pub(super) task: Task,
    /// The (lhs, rhs) addresses entered on the paths, when they can close
    /// a cycle.
    pub(super) cycle: Option<(usize, usize)>,
}

