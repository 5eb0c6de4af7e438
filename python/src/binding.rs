//! Where a handle's tying state lives, and how it is encoded.
//!
//! A handle's *binding* is one word: a wrapper pointer `W` (16-byte aligned)
//! plus tag bits.
//!
//! | state     | word          |
//! |-----------|---------------|
//! | Detached  | 0             |
//! | Active    | W             |
//! | Inactive  | W \| 1        |
//! | InTransit | W \| 1 \| 2   |
//! | Moving    | W \| 4        |
//!
//! Objects from the Python allocator keep the word in front of their block
//! ([`crate::py_allocator`]), read and written atomically because the
//! block's `delete_space` may run on any thread. Objects allocated without
//! that header (code built against upstream's headers, plain `malloc`) keep
//! it in the [`crate::side_table`], keyed by handle; Detached there means no
//! entry. [`Binding`] gives the state machine one interface over both.

use std::sync::atomic::{AtomicUsize, Ordering};

use tether_sys::abi::TVMFFIObject;

use crate::{py_allocator, side_table};

pub const INACTIVE: usize = 1;
pub const TRANSIT: usize = 2;
pub const MOVING: usize = 4;
pub const TAGS: usize = INACTIVE | TRANSIT | MOVING;

/// The binding of one live handle.
pub enum Binding<'a> {
    /// The wrapper word in front of a block from the Python allocator.
    Word(&'a AtomicUsize),
    /// An entry of the side table (objects allocated without the header).
    Side(*mut TVMFFIObject),
}

impl Binding<'_> {
    /// The binding of `h`.
    ///
    /// # Safety
    /// `h` is live; the GIL is held when the binding may be a side-table entry.
    pub unsafe fn of(h: *mut TVMFFIObject) -> Self {
        // SAFETY: per the caller; `is_ours` reads the header only when the
        // core's marker says there is one.
        unsafe {
            if py_allocator::is_ours(h) {
                Binding::Word(py_allocator::word(h))
            } else {
                Binding::Side(h)
            }
        }
    }

    pub fn load(&self) -> usize {
        match self {
            Binding::Word(w) => w.load(Ordering::Acquire),
            Binding::Side(h) => side_table::get(*h),
        }
    }

    /// Replace `current` with `new`; `Err(actual)` when the word is not `current`.
    pub fn compare_exchange(&self, current: usize, new: usize) -> Result<usize, usize> {
        match self {
            Binding::Word(w) => w.compare_exchange(current, new, Ordering::AcqRel, Ordering::Acquire),
            // SAFETY: the handle is live (Binding::of's contract).
            Binding::Side(h) => unsafe { side_table::compare_exchange(*h, current, new) },
        }
    }

    pub fn store(&self, new: usize) {
        match self {
            Binding::Word(w) => w.store(new, Ordering::Release),
            // SAFETY: as above.
            Binding::Side(h) => unsafe { side_table::set(*h, new) },
        }
    }

    pub fn is_side(&self) -> bool {
        matches!(self, Binding::Side(_))
    }
}
