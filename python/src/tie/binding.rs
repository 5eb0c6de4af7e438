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
//! On free-threaded CPython a fourth bit, [`LOCK`](super::binding_word::LOCK), makes the word its own
//! spin-lock: a transition takes it with compare-and-swap ([`Binding::lock`])
//! and releases it by publishing the next state ([`Locked::publish`]). The
//! native side (`delete_space`, the teardown's handshake) waits while it is
//! set. With the GIL, transitions never interleave, so taking the lock is a
//! plain load and both builds run the same transition code.
//!
//! Objects from the Python allocator keep the word in front of their block
//! ([`crate::tie::py_allocator`]), read and written atomically because the
//! block's `delete_space` may run on any thread. Objects allocated without
//! that header (code built against upstream's headers, plain `malloc`) keep
//! it in the [`crate::tie::side_table`], keyed by handle; Detached there means no
//! entry. [`Binding`] gives the state machine one interface over both.

use std::sync::atomic::{AtomicUsize, Ordering};

use tether_sys::abi::TVMFFIObject;

use super::{py_allocator, side_table};

// The word's encoding, for the transitions that name states through this module.
pub use super::binding_word::{load_unlocked, INACTIVE, MOVING, TAGS, TRANSIT};

/// The binding of one live handle.
pub enum Binding<'a> {
    /// The wrapper word in front of a block from the Python allocator.
    Word(&'a AtomicUsize),
    /// An entry of the side table (objects allocated without the header).
    Side(*mut TVMFFIObject),
}

impl<'a> Binding<'a> {
    /// The binding of `h`.
    ///
    /// # Safety
    /// `h` is live; the GIL is held when the binding may be a side-table entry.
    #[inline]
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

    #[inline]
    pub fn load(&self) -> usize {
        match self {
            Binding::Word(w) => w.load(Ordering::Acquire),
            Binding::Side(h) => side_table::get(*h),
        }
    }

    /// Replace `current` with `new`; `Err(actual)` when the word is not `current`.
    #[cfg_attr(not(Py_GIL_DISABLED), allow(dead_code))]
    #[inline]
    pub fn compare_exchange(&self, current: usize, new: usize) -> Result<usize, usize> {
        match self {
            Binding::Word(w) => w.compare_exchange(current, new, Ordering::AcqRel, Ordering::Acquire),
            // SAFETY: the handle is live (Binding::of's contract).
            Binding::Side(h) => unsafe { side_table::compare_exchange(*h, current, new) },
        }
    }

    #[inline]
    pub fn store(&self, new: usize) {
        match self {
            Binding::Word(w) => w.store(new, Ordering::Release),
            // SAFETY: as above.
            Binding::Side(h) => unsafe { side_table::set(*h, new) },
        }
    }

    #[inline]
    pub fn is_side(&self) -> bool {
        matches!(self, Binding::Side(_))
    }

    /// Hold the binding for one transition; the guard reads the state
    /// (without [`LOCK`](super::binding_word::LOCK)) and releases the binding unchanged when dropped.
    /// Nothing may call Python code or drop a handle reference while it is
    /// held (either may come back to this binding).
    #[inline]
    pub fn lock(&self) -> Locked<'_, 'a> {
        #[cfg(Py_GIL_DISABLED)]
        {
            let mut spins = 0u32;
            loop {
                let cur = self.load();
                if cur & super::binding_word::LOCK == 0 && self.compare_exchange(cur, cur | super::binding_word::LOCK).is_ok() {
                    return Locked { binding: self, word: cur, held: true };
                }
                crate::tie::tying_lock::spin_wait(&mut spins);
            }
        }
        #[cfg(not(Py_GIL_DISABLED))]
        {
            Locked { binding: self, word: self.load(), held: true }
        }
    }
}

/// A binding held by one transition (see [`Binding::lock`]).
pub struct Locked<'b, 'a> {
    binding: &'b Binding<'a>,
    word: usize,
    held: bool,
}

impl Locked<'_, '_> {
    /// The state when the binding was taken.
    #[inline]
    pub fn word(&self) -> usize {
        self.word
    }

    /// Store the next state and release the binding in one write.
    #[inline]
    pub fn publish(mut self, new: usize) {
        self.held = false;
        self.binding.store(new);
    }
}

impl Drop for Locked<'_, '_> {
    #[inline]
    fn drop(&mut self) {
        // With the GIL nothing was taken; free-threaded, restore the word.
        if cfg!(Py_GIL_DISABLED) && self.held {
            self.binding.store(self.word);
        }
    }
}
