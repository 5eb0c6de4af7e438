//! The state of one structural-hashing run ([`super::hash`]): the memo,
//! counters, def region, path and type plans both the explicit-stack walk
//! and its fast path ([`super::hash_fast`]) read and update, the frames the
//! walk keeps, and the step that finishes an object the same way for both.

use crate::object::ObjectRef;
use crate::values::any::Any;

use super::active_path::{ActivePath, AddressMap};
use super::type_plan::{PlanId, TypePlans};
use super::{def_region, hash_combine, kind, SeqItems};

pub(super) struct Hasher {
    pub(super) region: i32,
    pub(super) skip_tensor_content: bool,
    pub(super) free_var_counter: u64,
    pub(super) graph_node_counter: u64,
    /// Hashes of objects seen so far, keyed by address (the entry keeps the
    /// object alive so the address is not reused).
    pub(super) memo: AddressMap<(ObjectRef, u64)>,
    /// Kinds, key hashes, hooks and fields by type, looked up once.
    pub(super) plans: TypePlans,
    /// The nodes being hashed (cycle detection).
    pub(super) path: ActivePath,
    /// The shallowest path depth a back-reference pointed to since the
    /// innermost entered node was entered (usize::MAX when none).
    pub(super) shallowest_reference: usize,
    /// Frames the fast path handed over (innermost first) and the child
    /// it stopped at, when it stopped before a value it does not walk.
    pub(super) handed_over: Vec<Frame>,
    pub(super) handed_over_value: Option<Any>,
}

/// Seed of a back-reference's hash (the bytes of "backref").
const BACK_REFERENCE_SEED: u64 = 0x6261_636b_7265_66;

impl Hasher {

    pub(super) fn new(map_free_vars: bool, skip_tensor_content: bool) -> Hasher {
        Hasher {
            region: if map_free_vars { def_region::PATTERN } else { def_region::NONE },
            skip_tensor_content,
            free_var_counter: 0,
            graph_node_counter: 0,
            // Allocated when first needed: unshared tree nodes never enter it.
            memo: AddressMap::default(),
            plans: TypePlans::new(b"__s_hash__"),
            path: ActivePath::default(),
            shallowest_reference: usize::MAX,
            handed_over: Vec::new(),
            handed_over_value: None,
        }
    }

    /// Whether the node entered at `depth` was hashed without pointing
    /// above itself, so its hash means the same wherever it is met.
    pub(super) fn self_contained(&self, depth: usize) -> bool {
        self.shallowest_reference >= depth
    }

    /// Enter a node that can close a cycle: `Ok` with what to leave later,
    /// or `Err` with the hash of the back-reference it closes.
    #[inline(always)]
    pub(super) fn enter_node(&mut self, addr: usize) -> Result<(usize, usize), u64> {
        if let Some(up) = self.path.enter_or_back_reference(addr) {
            let target = self.path.depth() - up;
            self.shallowest_reference = self.shallowest_reference.min(target);
            return Err(hash_combine(BACK_REFERENCE_SEED, up as u64));
        }
        let outer = std::mem::replace(&mut self.shallowest_reference, usize::MAX);
        Ok((addr, outer))
    }

    pub(super) fn leave(&mut self, cycle: Option<(usize, usize)>) {
        if let Some((addr, outer)) = cycle {
            self.path.leave(addr);
            self.shallowest_reference = self.shallowest_reference.min(outer);
        }
    }

    /// An object's hash from its fields' hash `fields` (its structural kind
    /// decides), memoised when it does not depend on where it was met.
    pub(super) fn finish_object(&mut self, obj: ObjectRef, k: i32, fields: u64) -> u64 {
        let addr = obj.as_ptr() as usize;
        let mut h = if k != kind::FREE_VAR {
            fields
        } else if self.region != def_region::NONE {
            let h = hash_combine(fields, self.free_var_counter);
            self.free_var_counter += 1;
            h
        } else {
            addr as u64
        };
        if k == kind::DAG_NODE {
            h = hash_combine(h, self.graph_node_counter);
            self.graph_node_counter += 1;
        }
        // The object itself is entered at the innermost depth.
        if self.self_contained(self.path.depth().saturating_sub(1)) {
            self.memo.insert(addr, (obj, h));
        }
        h
    }
}

/// The work left on one open container or object.
pub(super) enum Task {
    /// Nothing to descend (a leaf, a memoised object, a hook's result).
    Hashed(u64),
    Sequence { items: SeqItems, next: usize, h: u64 },
    /// Entries sorted by key hash; `next` is the next group of equal keys.
    Map { items: Vec<(u64, Any)>, next: usize, h: u64 },
    /// Reflected fields; `object_region` is the region the object was met
    /// in, `field_region` the one to restore after the current field.
    Fields {
        obj: ObjectRef,
        kind: i32,
        plan: PlanId,
        next: usize,
        h: u64,
        object_region: i32,
        field_region: Option<i32>,
    },
}

pub(super) struct Frame {
    pub(super) task: Task,
    /// The address entered on the path and the shallowest back-reference
    /// seen outside this frame, when it can close a cycle.
    pub(super) cycle: Option<(usize, usize)>,
}

