//! The fast path of structural equality: the same comparison as
//! [`super::equal`]'s explicit-stack walk, run by native recursion over
//! borrowed values for the shapes most values have (reflected objects
//! without a hook, and Arrays), a bounded number of levels deep.
//!
//! The walk's frames cost what comparing a small object costs: a frame
//! moved onto and off the stack, and a reference count taken and dropped
//! on each child. Here a child is compared where it lies, in a native
//! frame, and no count changes. The decisions are the walk's own, made in
//! the same order (cycles closing on the paths, DAG and free-variable
//! bindings, def regions), so the result, the bindings recorded and any
//! error are those of the walk.
//!
//! Invariant (every `unsafe` block below relies on it): the fast path
//! looks inside an object only while it holds a reference to it
//! ([`super::fast_path`]), so fields reassigned by another thread meanwhile
//! free nothing it reads. Of code outside the core it calls only field
//! getters, whose values it holds as it holds in-place reads (no
//! `__s_equal__` hook, no Map task, no frontend): whatever would need more,
//! and whatever lies deeper than
//! [`FAST_DEPTH`], is handed back to the walk: each open level becomes an
//! ordinary frame holding its own references ("handed over"), and the walk
//! continues from there.

use crate::abi::{type_index as ti, TVMFFIObject};
use crate::containers::array::ArrayObj;
use crate::dataclass::native_field::read_in_place;
use crate::object::ObjectRef;
use crate::values::any::Any;
use crate::values::error::Error;


use super::active_path::can_close_cycle;
use super::fast_path::{borrow_object, walks_fields, FAST_DEPTH, FAST_STACK};
use super::type_plan::{getter_result, read_by_getter, FieldRead};
use super::equal_state::{Equal, Frame, Task};
use super::leaf_equal::leaf_equal;
use super::{def_region, kind, SeqItems};

/// What the fast path made of a pair.
pub(super) enum Fast {
    /// Compared: the pair's result.
    Equal(bool),
    /// Not a pair it walks; nothing was changed.
    NotWalked,
    /// Started, then handed over: the open levels are in
    /// `Equal::handed_over` (innermost first), and the child pair to start
    /// next, if any, in `Equal::handed_over_pair`.
    HandedOver,
}

impl Equal {
    /// Compare a pair `leaf_equal` left open (two objects of one type),
    /// when it is one the fast path walks.
    pub(super) fn fast_pair(&mut self, lhs: &Any, rhs: &Any, depth: usize) -> Result<Fast, Error> {
        let index = lhs.type_index();
        let array = index == ti::kTVMFFIArray;
        if !array && !walks_fields(index) {
            return Ok(Fast::NotWalked);
        }
        let (Some(lp), Some(rp)) = (lhs.object_ptr(), rhs.object_ptr()) else { return Ok(Fast::NotWalked) };
        if depth == 0 {
            return super::deep_stack::guarded_with(FAST_STACK, || self.fast_open(index, array, lp, rp, depth));
        }
        self.fast_open(index, array, lp, rp, depth)
    }

    fn fast_open(&mut self, index: i32, array: bool, lp: *mut TVMFFIObject, rp: *mut TVMFFIObject, depth: usize) -> Result<Fast, Error> {
        // Cycles close exactly as in `start`.
        let cycle = if can_close_cycle(index) {
            match self.enter_pair(lp as usize, rp as usize) {
                Ok(entered) => Some(entered),
                Err(ok) => return Ok(Fast::Equal(ok)),
            }
        } else {
            None
        };
        if array {
            return self.fast_array(lp, rp, depth, cycle);
        }
        self.fast_object(lp, rp, depth, cycle)
    }

    /// A child pair at `depth`: decided in place, compared recursively, or
    /// (too deep, or not walked) handed back with its parent's levels.
    #[inline(always)]
    fn fast_child(&mut self, l: &Any, r: &Any, depth: usize) -> Result<Fast, Error> {
        if depth >= FAST_DEPTH {
            return Ok(Fast::NotWalked);
        }
        self.fast_pair(l, r, depth)
    }

    fn fast_array(&mut self, lp: *mut TVMFFIObject, rp: *mut TVMFFIObject, depth: usize, cycle: Option<(usize, usize)>) -> Result<Fast, Error> {
        // SAFETY: both are live Arrays (their type index says so), held by
        // the caller and so unchanged (module invariant).
        let (a, b) = unsafe { ((*(lp as *const ArrayObj)).as_slice(), (*(rp as *const ArrayObj)).as_slice()) };
        let mut ok = a.len() == b.len();
        let mut i = 0;
        while ok && i < a.len() {
            let (l, r) = (&a[i], &b[i]);
            i += 1;
            match leaf_equal(l, r) {
                Some(same) => ok = same,
                None => match self.fast_child(l, r, depth + 1) {
                    Ok(Fast::Equal(same)) => ok = same,
                    Ok(handed) => {
                        if let Fast::NotWalked = handed {
                            self.handed_over_pair = Some((l.clone(), r.clone()));
                        }
                        let (lo, ro) = (borrow_object(lp), borrow_object(rp));
                        // The type index was checked: taking them as Arrays cannot fail.
                        let items = |o: &ObjectRef| SeqItems::of(ti::kTVMFFIArray, o.clone()).expect("an Array's type index");
                        let task = Task::Sequence { a: items(&lo), b: items(&ro), next: i };
                        self.handed_over.push(Frame { task, cycle });
                        return Ok(Fast::HandedOver);
                    }
                    Err(e) => {
                        self.leave_cycle(cycle);
                        return Err(e);
                    }
                },
            }
        }
        self.leave_cycle(cycle);
        Ok(Fast::Equal(ok))
    }

    /// Two objects of one reflected type: `open_object`, the field loop of
    /// `next_pair` and `finish`, in one native frame.
    fn fast_object(&mut self, lp: *mut TVMFFIObject, rp: *mut TVMFFIObject, depth: usize, cycle: Option<(usize, usize)>) -> Result<Fast, Error> {
        let (lo, ro) = (borrow_object(lp), borrow_object(rp));
        let plan_id = match self.plans.of(&lo) {
            Ok(id) => id,
            Err(e) => {
                self.leave_cycle(cycle);
                return Err(e);
            }
        };
        let plan = self.plans.get(plan_id);
        let k = plan.kind;
        let reads: *const [FieldRead] = plan.reads.as_slice();
        // SAFETY: a run's plans are only ever added to (`TypePlans` keeps
        // each one, behind its Arc, until the run ends), so the slice stays
        // where it is while the loop below calls back into `self`.
        let reads = unsafe { &*reads };
        if plan.hook.is_some() {
            self.leave_cycle(cycle);
            return Ok(Fast::NotWalked);
        }
        let decided = if k == kind::UNIQUE_INSTANCE {
            Some(lo.same_as(&ro))
        } else if k == kind::CONST_TREE_NODE && lo.same_as(&ro) {
            Some(true)
        } else if k == kind::DAG_NODE || k == kind::FREE_VAR {
            match self.lhs_to_rhs.get(&(lp as usize)) {
                Some((_, bound)) => Some(bound.same_as(&ro)),
                None if self.rhs_to_lhs.contains_key(&(rp as usize)) => Some(false),
                None => None,
            }
        } else {
            None
        };
        if let Some(ok) = decided {
            self.leave_cycle(cycle);
            return Ok(Fast::Equal(ok));
        }
        let object_region = self.region;
        if k == kind::FREE_VAR && self.region == def_region::SIMPLE {
            self.region = def_region::NONE;
        }
        let mut ok = true;
        let mut next = 0;
        while let Some(&read) = reads.get(next) {
            next += 1;
            // SAFETY: the field belongs to the objects' type, and both are
            // held (module invariant); each read takes a reference (in place
            // under the field's lock, or from the getter) before anything
            // looks inside the values.
            let (l, r) = match read.in_place {
                // SAFETY: as above.
                Some(kind) => unsafe { (read_in_place(kind, (lp as *const u8).add(read.offset)), read_in_place(kind, (rp as *const u8).add(read.offset))) },
                // SAFETY: as above.
                None => match self.plans.field(plan_id, next - 1).map(|f| unsafe { (getter_result(read_by_getter(f, lp)), getter_result(read_by_getter(f, rp))) }).expect("a planned field") {
                    (Ok(l), Ok(r)) => (l, r),
                    (Err(e), _) | (_, Err(e)) => {
                        self.region = object_region;
                        self.leave_cycle(cycle);
                        return Err(e);
                    }
                },
            };
            match leaf_equal(&l, &r) {
                Some(true) => continue,
                Some(false) => {
                    ok = false;
                    break;
                }
                None => {}
            }
            let field_region = super::region_for_field(read.flags, self.region).map(|region| std::mem::replace(&mut self.region, region));
            match self.fast_child(&l, &r, depth + 1) {
                Ok(Fast::Equal(same)) => {
                    if let Some(saved) = field_region {
                        self.region = saved;
                    }
                    if !same {
                        ok = false;
                        break;
                    }
                }
                Ok(handed) => {
                    if let Fast::NotWalked = handed {
                        self.handed_over_pair = Some((l, r));
                    }
                    let task = Task::Fields { lhs: (*lo).clone(), rhs: (*ro).clone(), kind: k, plan: plan_id, next, object_region, field_region };
                    self.handed_over.push(Frame { task, cycle });
                    return Ok(Fast::HandedOver);
                }
                Err(e) => {
                    self.region = object_region;
                    self.leave_cycle(cycle);
                    return Err(e);
                }
            }
        }
        self.region = object_region;
        // Tree nodes bind nothing: no call for the commonest kind.
        let ok = if k == kind::TREE_NODE { ok } else { self.finish_object(&lo, &ro, k, ok) };
        self.leave_cycle(cycle);
        Ok(Fast::Equal(ok))
    }
}
