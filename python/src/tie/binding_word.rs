//! The encoding of a binding word (see [`crate::tie::binding`] for the
//! states): the tag bits, the free-threaded lock bit, and the wait for an
//! unlocked word. Both homes of a binding (the allocation header of
//! [`crate::tie::py_allocator`] and the [`crate::tie::side_table`]) read
//! and write words in this encoding, so it sits below both of them.

use std::sync::atomic::{AtomicUsize, Ordering};

pub const INACTIVE: usize = 1;
pub const TRANSIT: usize = 2;
pub const MOVING: usize = 4;
pub const TAGS: usize = INACTIVE | TRANSIT | MOVING;
/// Set only while a transition holds the binding (free-threaded builds).
pub const LOCK: usize = 8;

/// A header word's state once no transition holds it: the native side's
/// compare-and-swap loops (`delete_space`, `settle_teardown`) start from this, so
/// their swap fails, and they wait, while the word is locked.
pub fn load_unlocked(w: &AtomicUsize) -> usize {
    let mut spins = 0u32;
    loop {
        let cur = w.load(Ordering::Acquire);
        if cur & LOCK == 0 {
            return cur;
        }
        crate::tie::tying_lock::spin_wait(&mut spins);
    }
}
