//! The fast path of structural hashing: the same hash as [`super::hash`]'s
//! explicit-stack walk, computed by native recursion over borrowed values
//! for reflected objects without a hook and for Arrays, a bounded number of
//! levels deep (see [`super::equal_fast`] for the same scheme applied to
//! equality).
//!
//! Besides the walk's frame per object, what it saves is the memo: the
//! walk records every object's hash by address (a table insert and a
//! reference per node), so a node met again is not hashed again. An object
//! whose only references are the one the walk came through and the one
//! held while it is hashed (strong count 2; a memo entry would hold a
//! third) can be met only there, so a tree or constant-tree node in that
//! state, met outside any def region, is hashed without a memo entry. What
//! its entry could have served does not arise: its parent is met once, or
//! memoised; it cannot be a Map key met later (the map would hold a second
//! reference); and a node hashed again under a parent left out of the memo
//! for a cycle hashes the same, as long as no free variable is numbered
//! below it — hence outside def regions only (a free variable that points
//! back up a cycle is not memoised, so meeting it again numbers it
//! afresh, where the walk would have replayed the node's memo entry).
//! Other objects go through the memo as in the walk.
//!
//! Invariant (every `unsafe` block below relies on it): the fast path
//! looks inside an object only while it holds a reference to it
//! ([`super::fast_path`]), so fields reassigned by another thread meanwhile
//! free nothing it reads. Of code outside the core it calls only field
//! getters, whose values it holds as it holds in-place reads (no
//! `__s_hash__` hook, no frontend): whatever would need more, and whatever
//! lies deeper than
//! [`FAST_DEPTH`], is handed back to the walk as ordinary frames holding
//! their own references.

use crate::abi::{type_index as ti, TVMFFIObject};
use crate::containers::array::ArrayObj;
use crate::dataclass::native_field::read_in_place;
use crate::object::strong_count;
use crate::values::any::Any;
use crate::values::error::Error;


use super::active_path::can_close_cycle;
use super::type_plan::{getter_result, read_by_getter, FieldRead};
use super::fast_path::{borrow_object, walks_fields, FAST_DEPTH, FAST_STACK};
use super::hash_state::{Frame, Hasher, Task};
use super::leaf_hash::leaf_hash;
use super::{def_region, hash_combine, kind, SeqItems};

/// What the fast path made of a value.
pub(super) enum FastHash {
    Hashed(u64),
    /// Not a value it walks; nothing was changed.
    NotWalked,
    /// Started, then handed over: the open levels are in
    /// `Hasher::handed_over` (innermost first), and the child to start next,
    /// if any, in `Hasher::handed_over_value`.
    HandedOver,
}

impl Hasher {
    /// Hash a value `leaf_hash` left (an object), when it is one the fast
    /// path walks.
    pub(super) fn fast_value(&mut self, value: &Any, depth: usize) -> Result<FastHash, Error> {
        let index = value.type_index();
        let array = index == ti::kTVMFFIArray;
        if !array && !walks_fields(index) {
            return Ok(FastHash::NotWalked);
        }
        let Some(p) = value.object_ptr() else { return Ok(FastHash::NotWalked) };
        if depth == 0 {
            return super::deep_stack::guarded_with(FAST_STACK, || self.fast_open(index, array, p, depth));
        }
        self.fast_open(index, array, p, depth)
    }

    fn fast_open(&mut self, index: i32, array: bool, p: *mut TVMFFIObject, depth: usize) -> Result<FastHash, Error> {
        // Cycles close exactly as in `start`.
        let cycle = if can_close_cycle(index) {
            match self.enter_node(p as usize) {
                Ok(entered) => Some(entered),
                Err(h) => return Ok(FastHash::Hashed(h)),
            }
        } else {
            None
        };
        if array {
            return self.fast_array(p, depth, cycle);
        }
        self.fast_object(p, depth, cycle)
    }

    /// A child at `depth`: hashed recursively, or (too deep, or not
    /// walked) handed back with its parent's levels.
    fn fast_child(&mut self, v: &Any, depth: usize) -> Result<FastHash, Error> {
        if depth >= FAST_DEPTH {
            return Ok(FastHash::NotWalked);
        }
        self.fast_value(v, depth)
    }

    fn fast_array(&mut self, p: *mut TVMFFIObject, depth: usize, cycle: Option<(usize, usize)>) -> Result<FastHash, Error> {
        // SAFETY: a live Array (its type index says so), held by the
        // caller and so unchanged (module invariant).
        let items = unsafe { (*(p as *const ArrayObj)).as_slice() };
        let mut h = hash_combine(super::type_index_key_hash(ti::kTVMFFIArray), items.len() as u64);
        for (i, item) in items.iter().enumerate() {
            if let Some(lh) = leaf_hash(item) {
                h = hash_combine(h, lh);
                continue;
            }
            match self.fast_child(item, depth + 1) {
                Ok(FastHash::Hashed(ch)) => h = hash_combine(h, ch),
                Ok(handed) => {
                    if let FastHash::NotWalked = handed {
                        self.handed_over_value = Some(item.clone());
                    }
                    // The type index was checked: taking it as an Array cannot fail.
                    let items = SeqItems::of(ti::kTVMFFIArray, (*borrow_object(p)).clone()).expect("an Array's type index");
                    self.handed_over.push(Frame { task: Task::Sequence { items, next: i + 1, h }, cycle });
                    return Ok(FastHash::HandedOver);
                }
                Err(e) => {
                    self.leave(cycle);
                    return Err(e);
                }
            }
        }
        self.leave(cycle);
        Ok(FastHash::Hashed(h))
    }

    /// An object of a reflected type: `open_object`, the field loop of
    /// `next_child` and `finish`, in one native frame.
    fn fast_object(&mut self, p: *mut TVMFFIObject, depth: usize, cycle: Option<(usize, usize)>) -> Result<FastHash, Error> {
        let obj = borrow_object(p);
        let plan_id = match self.plans.of(&obj) {
            Ok(id) => id,
            Err(e) => {
                self.leave(cycle);
                return Err(e);
            }
        };
        let plan = self.plans.get(plan_id);
        let (k, key_hash) = (plan.kind, plan.key_hash);
        if plan.hook.is_some() {
            self.leave(cycle);
            return Ok(FastHash::NotWalked);
        }
        let reads: *const [FieldRead] = plan.reads.as_slice();
        // SAFETY: a run's plans are only ever added to (`TypePlans` keeps
        // each one, behind its Arc, until the run ends), so the slice stays
        // where it is while the loop below calls back into `self`.
        let reads = unsafe { &*reads };
        // Outside def regions only: inside one, free variables are numbered
        // in the order they are met, and a node met again under a parent
        // left out of the memo (for a cycle) would number them afresh where
        // the walk's memo entry replays the first numbering.
        // SAFETY: a live object, held by the caller (module invariant):
        // its parent's reference and that one.
        let unshared = self.region == def_region::NONE && matches!(k, kind::TREE_NODE | kind::CONST_TREE_NODE) && unsafe { strong_count(p) } == 2;
        if !unshared {
            if let Some((_, h)) = self.memo.get(&(p as usize)) {
                let h = *h;
                self.leave(cycle);
                return Ok(FastHash::Hashed(h));
            }
        }
        let object_region = self.region;
        if k == kind::FREE_VAR && self.region == def_region::SIMPLE {
            self.region = def_region::NONE;
        }
        let mut h = key_hash;
        let mut next = 0;
        while let Some(&read) = reads.get(next) {
            next += 1;
            // SAFETY: the field belongs to the object's type, and the
            // object is held (module invariant); the read takes a reference
            // (in place under the field's lock, or from the getter) before
            // anything looks inside the value.
            let v = match read.in_place {
                // SAFETY: as above.
                Some(kind) => unsafe { read_in_place(kind, (p as *const u8).add(read.offset)) },
                // SAFETY: as above.
                None => match self.plans.field(plan_id, next - 1).map(|f| getter_result(unsafe { read_by_getter(f, p) })).expect("a planned field") {
                    Ok(v) => v,
                    Err(e) => {
                        self.region = object_region;
                        self.leave(cycle);
                        return Err(e);
                    }
                },
            };
            if let Some(lh) = leaf_hash(&v) {
                h = hash_combine(h, lh);
                continue;
            }
            let field_region = super::region_for_field(read.flags, self.region).map(|region| std::mem::replace(&mut self.region, region));
            match self.fast_child(&v, depth + 1) {
                Ok(FastHash::Hashed(ch)) => {
                    if let Some(saved) = field_region {
                        self.region = saved;
                    }
                    h = hash_combine(h, ch);
                }
                Ok(handed) => {
                    if let FastHash::NotWalked = handed {
                        self.handed_over_value = Some(v);
                    }
                    let task = Task::Fields { obj: (*obj).clone(), kind: k, plan: plan_id, next, h, object_region, field_region };
                    self.handed_over.push(Frame { task, cycle });
                    return Ok(FastHash::HandedOver);
                }
                Err(e) => {
                    self.region = object_region;
                    self.leave(cycle);
                    return Err(e);
                }
            }
        }
        self.region = object_region;
        let h = if unshared { h } else { self.finish_object((*obj).clone(), k, h) };
        self.leave(cycle);
        Ok(FastHash::Hashed(h))
    }
}
