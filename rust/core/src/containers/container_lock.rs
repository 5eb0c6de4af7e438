//! Locks for the mutable containers (List, Dict), kept outside the objects.
//!
//! TVM-FFI's `ListObj` and `DictObj` have no room for a lock, and C++ built
//! against its headers allocates them at exactly that size, so tether cannot
//! put one inside. Instead an object's address picks one of a fixed set of
//! mutexes. Two containers may share a mutex; that is harmless because no
//! code holds one of these locks while taking another or while running a
//! value's deleter (removed values are dropped after the lock is released).
//! C++ reading or writing a container inline does not take these locks —
//! the same contract as TVM-FFI, whose containers have no lock at all.

use parking_lot::{Mutex, MutexGuard};

const STRIPES: usize = 64;

#[allow(clippy::declare_interior_mutable_const)]
const UNLOCKED: Mutex<()> = parking_lot::const_mutex(());
static LOCKS: [Mutex<()>; STRIPES] = [UNLOCKED; STRIPES];

/// Lock the container at `addr` for the guard's lifetime.
pub fn lock_for(addr: *const u8) -> MutexGuard<'static, ()> {
    // Objects are at least 8-aligned; mix the higher bits in.
    let a = addr as usize >> 4;
    LOCKS[(a ^ (a >> 6) ^ (a >> 12)) % STRIPES].lock()
}
