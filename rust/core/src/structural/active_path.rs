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

/// The entered nodes, each with its depth on the path.
#[derive(Default)]
pub(crate) struct ActivePath {
    entered: AddressMap<usize>,
}

impl ActivePath {
    /// Nodes currently entered.
    pub(crate) fn depth(&self) -> usize {
        self.entered.len()
    }

    /// How far up the path `addr` was entered (1 = the innermost entered
    /// node), or None when it is not on the path.
    #[cfg(test)]
    pub(crate) fn back_reference(&self, addr: usize) -> Option<usize> {
        self.entered.get(&addr).map(|d| self.entered.len() - d)
    }

    /// Enter `addr` (not on the path); returns its depth.
    #[cfg(test)]
    pub(crate) fn enter(&mut self, addr: usize) -> usize {
        let d = self.entered.len();
        self.entered.insert(addr, d);
        d
    }

    /// Enter `addr` unless it is on the path already, in one probe of the
    /// table: None when it was entered now, else its back-reference
    /// distance (the path unchanged).
    pub(crate) fn enter_or_back_reference(&mut self, addr: usize) -> Option<usize> {
        let d = self.entered.len();
        match self.entered.entry(addr) {
            std::collections::hash_map::Entry::Occupied(e) => Some(d - *e.get()),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(d);
                None
            }
        }
    }

    pub(crate) fn leave(&mut self, addr: usize) {
        self.entered.remove(&addr);
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
    fn a_descent_under_way_is_refused_until_left() {
        let outer = Descent::enter(1, 0x1000).expect("first descent");
        assert!(Descent::enter(1, 0x1000).is_none());
        assert!(Descent::enter(2, 0x1000).is_some(), "another walker descends on its own");
        drop(outer);
        assert!(Descent::enter(1, 0x1000).is_some());
    }
}
