//! The nodes a graph walk is currently inside, for terminating on cyclic
//! input. Lists, Dicts and reflected objects are mutable, so a value can
//! contain itself; a walk enters each such node before its children and
//! leaves it after, and meeting a node that is still entered is a cycle.
//! The answer is the back-reference distance (how many entered nodes up the
//! path it points), which is what the algorithms compare, hash or print in
//! place of descending again: two values are structurally equal only when
//! their cycles close at the same places, and then their hashes agree.
//!
//! Immutable containers (Array, Map) are not tracked: every cycle passes
//! through a mutable node, which is enough to stop it. The caller keeps each
//! entered node alive until it leaves it, so an address is not reused while
//! it is on the path.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use crate::abi::type_index as ti;

/// Hashes an object address (already unique; spread its bits).
#[derive(Default)]
pub(crate) struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        // Objects are at least 8-aligned: drop the constant low bits.
        self.0 = (self.0.rotate_left(29) ^ ((n as u64) >> 3)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

pub(crate) type AddressMap<V> = HashMap<usize, V, BuildHasherDefault<AddressHasher>>;

/// Whether values of type `index` can be part of a cycle by themselves
/// (mutable containers and reflected objects).
pub(crate) fn can_close_cycle(index: i32) -> bool {
    match index {
        ti::kTVMFFIList | ti::kTVMFFIDict => true,
        ti::kTVMFFIStr
        | ti::kTVMFFIBytes
        | ti::kTVMFFIBigInt
        | ti::kTVMFFIArray
        | ti::kTVMFFIMap
        | ti::kTVMFFIShape
        | ti::kTVMFFITensor
        | ti::kTVMFFIFunction
        | ti::kTVMFFIError
        | ti::kTVMFFIModule
        | ti::kTVMFFIOpaquePyObject => false,
        i => i >= ti::kTVMFFIStaticObjectBegin,
    }
}

/// Paths up to this depth are searched linearly; deeper ones through an
/// index. Most values are shallow (a tree of a thousand nodes is ten
/// deep), where scanning a few addresses beats hashing on every enter and
/// leave; a 10^6-deep chain still costs one probe per node.
const LINEAR_MAX: usize = 32;

/// Buckets of the presence filter (a power of two).
const BUCKETS: usize = 64;

/// The entered nodes, innermost last. Nodes are left in the reverse order
/// of entering (the walks are depth-first), which keeps `entered` a stack.
pub(crate) struct ActivePath {
    entered: Vec<usize>,
    /// Address → position in `entered`, kept only while the path is
    /// deeper than [`LINEAR_MAX`] (else empty).
    index: AddressMap<usize>,
    /// How many entered addresses fall in each bucket: most nodes a walk
    /// meets are not on its path, and an empty bucket says so without a
    /// search (each enter and leave of a node was a scan of the path).
    counts: [u32; BUCKETS],
}

impl Default for ActivePath {
    fn default() -> ActivePath {
        // Room for a shallow path up front (the common case never grows).
        ActivePath { entered: Vec::with_capacity(LINEAR_MAX), index: AddressMap::default(), counts: [0; BUCKETS] }
    }
}

#[inline(always)]
fn bucket(addr: usize) -> usize {
    // Objects are at least 16-aligned; fold higher bits in so that nodes
    // allocated a few blocks apart spread.
    ((addr >> 4) ^ (addr >> 10)) & (BUCKETS - 1)
}

impl ActivePath {
    /// Nodes currently entered.
    pub(crate) fn depth(&self) -> usize {
        self.entered.len()
    }

    #[inline]
    fn position(&self, addr: usize) -> Option<usize> {
        if self.counts[bucket(addr)] == 0 {
            return None;
        }
        if self.index.is_empty() {
            self.entered.iter().rposition(|&a| a == addr)
        } else {
            self.index.get(&addr).copied()
        }
    }

    /// How far up the path `addr` was entered (1 = the innermost entered
    /// node), or None when it is not on the path.
    #[cfg(test)]
    pub(crate) fn back_reference(&self, addr: usize) -> Option<usize> {
        self.position(addr).map(|pos| self.entered.len() - pos)
    }

    /// Enter `addr` (not on the path); returns its depth.
    #[cfg(test)]
    pub(crate) fn enter(&mut self, addr: usize) -> usize {
        let d = self.entered.len();
        self.push(addr);
        d
    }

    #[inline]
    fn push(&mut self, addr: usize) {
        let pos = self.entered.len();
        self.entered.push(addr);
        self.counts[bucket(addr)] += 1;
        if !self.index.is_empty() {
            self.index.insert(addr, pos);
        } else if self.entered.len() > LINEAR_MAX {
            self.index.extend(self.entered.iter().enumerate().map(|(i, &a)| (a, i)));
        }
    }

    /// Enter `addr` unless it is on the path already: None when it was
    /// entered now, else its back-reference distance (the path unchanged).
    #[inline(always)]
    pub(crate) fn enter_or_back_reference(&mut self, addr: usize) -> Option<usize> {
        // The common case: a shallow path searched by scanning (no index
        // to keep), and nothing entered in `addr`'s bucket (so not `addr`
        // itself).
        let b = bucket(addr);
        if self.counts[b] == 0 && self.index.is_empty() && self.entered.len() < LINEAR_MAX && self.entered.len() < self.entered.capacity() {
            self.counts[b] = 1;
            self.entered.push(addr);
            return None;
        }
        self.enter_or_back_reference_other(addr)
    }

    #[inline(never)]
    fn enter_or_back_reference_other(&mut self, addr: usize) -> Option<usize> {
        if let Some(pos) = self.position(addr) {
            return Some(self.entered.len() - pos);
        }
        self.push(addr);
        None
    }

    #[inline(always)]
    pub(crate) fn leave(&mut self, addr: usize) {
        if self.index.is_empty() && self.entered.last() == Some(&addr) {
            // The common case: the innermost node of a shallow path.
            self.entered.pop();
            self.counts[bucket(addr)] -= 1;
            return;
        }
        self.leave_other(addr);
    }

    #[inline(never)]
    fn leave_other(&mut self, addr: usize) {
        if self.entered.last() == Some(&addr) {
            self.entered.pop();
            self.counts[bucket(addr)] -= 1;
        } else if let Some(pos) = self.position(addr) {
            // Not the innermost (no walk does this today): drop it and
            // renumber what follows.
            self.entered.remove(pos);
            self.counts[bucket(addr)] -= 1;
            if !self.index.is_empty() {
                self.index.clear();
                self.index.extend(self.entered.iter().enumerate().map(|(i, &a)| (a, i)));
            }
            return;
        } else {
            return;
        }
        if !self.index.is_empty() {
            if self.entered.len() <= LINEAR_MAX / 2 {
                // Shallow again: back to scanning (halfway down, so a path
                // hovering at the limit does not rebuild the index each time).
                self.index = AddressMap::default();
            } else {
                self.index.remove(&addr);
            }
        }
    }
}

thread_local! {
    /// (walker, node) pairs whose default descent is under way on this
    /// thread. Visitors and mutators may be compiled elsewhere and carry no
    /// state of ours, so the core's descent keeps it here; a walk runs on
    /// its caller's thread (see [`super::deep_stack`]).
    static DESCENDING: RefCell<HashSet<(usize, usize), BuildHasherDefault<AddressHasher>>> =
        RefCell::new(HashSet::default());
}

/// A default descent into a node by a walker, left when dropped.
pub(crate) struct Descent {
    key: (usize, usize),
}

impl Descent {
    /// Start descending into `node` for `walker`, or None when that descent
    /// is already under way further up (the node is part of a cycle).
    pub(crate) fn enter(walker: usize, node: usize) -> Option<Descent> {
        let key = (walker, node);
        DESCENDING.with(|d| d.borrow_mut().insert(key)).then_some(Descent { key })
    }
}

impl Drop for Descent {
    fn drop(&mut self) {
        // A thread being torn down has nothing left to track.
        let _ = DESCENDING.try_with(|d| d.borrow_mut().remove(&self.key));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_references_count_up_the_path() {
        let mut p = ActivePath::default();
        assert_eq!(p.enter(0x1000), 0);
        assert_eq!(p.enter(0x2000), 1);
        assert_eq!(p.back_reference(0x2000), Some(1));
        assert_eq!(p.back_reference(0x1000), Some(2));
        assert_eq!(p.back_reference(0x3000), None);
        p.leave(0x2000);
        assert_eq!(p.back_reference(0x1000), Some(1));
        assert_eq!(p.depth(), 1);
        assert_eq!(p.enter_or_back_reference(0x1000), Some(1), "on the path: left as it is");
        assert_eq!(p.depth(), 1);
        assert_eq!(p.enter_or_back_reference(0x2000), None, "entered now");
        assert_eq!(p.back_reference(0x1000), Some(2));
    }

    #[test]
    fn deep_paths_switch_to_the_index_and_back() {
        let mut p = ActivePath::default();
        let addr = |i: usize| 0x1000 + 16 * i;
        for i in 0..(3 * LINEAR_MAX) {
            assert_eq!(p.enter_or_back_reference(addr(i)), None);
        }
        assert!(!p.index.is_empty());
        assert_eq!(p.back_reference(addr(0)), Some(3 * LINEAR_MAX));
        assert_eq!(p.enter_or_back_reference(addr(5)), Some(3 * LINEAR_MAX - 5));
        for i in (LINEAR_MAX / 2..3 * LINEAR_MAX).rev() {
            p.leave(addr(i));
            assert_eq!(p.back_reference(addr(i)), None);
            assert_eq!(p.back_reference(addr(0)), Some(i));
        }
        assert!(p.index.is_empty(), "shallow again: scanning");
        assert_eq!(p.depth(), LINEAR_MAX / 2);
        p.leave(addr(3));
        assert_eq!(p.back_reference(addr(4)), Some(LINEAR_MAX / 2 - 4), "later entries renumbered");
    }

    #[test]
    fn nodes_entered_while_the_index_is_kept_are_found() {
        // Back from deep to between half the limit and the limit the index
        // is kept: a node entered there must be found through it.
        let mut p = ActivePath::default();
        let addr = |i: usize| 0x1000 + 16 * i;
        for i in 0..(LINEAR_MAX + 4) {
            assert_eq!(p.enter_or_back_reference(addr(i)), None);
        }
        for i in (LINEAR_MAX - 4..LINEAR_MAX + 4).rev() {
            p.leave(addr(i));
        }
        assert!(!p.index.is_empty(), "still indexed");
        // In a bucket nothing on the path shares (the quick way in).
        let fresh = (0x9_0000..).step_by(16).find(|&a| p.counts[bucket(a)] == 0).expect("an empty bucket");
        assert_eq!(p.enter_or_back_reference(fresh), None);
        assert_eq!(p.enter_or_back_reference(fresh), Some(1), "a cycle closing on it");
        assert_eq!(p.back_reference(addr(0)), Some(LINEAR_MAX - 3));
    }

    #[test]
    fn a_descent_under_way_is_refused_until_left() {
        let outer = Descent::enter(1, 0x1000).expect("first descent");
        assert!(Descent::enter(1, 0x1000).is_none());
        assert!(Descent::enter(2, 0x1000).is_some(), "another walker descends on its own");
        drop(outer);
        assert!(Descent::enter(1, 0x1000).is_some());
    }
}
