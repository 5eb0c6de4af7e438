//! Buffers for per-call values (argument views, borrowed wrappers, values
//! on their way into a container): inline storage for the common arities,
//! a heap vector only past them, so a call with a few arguments allocates
//! nothing; and heap vectors a thread keeps between bulk calls ([`take_kept`],
//! [`keep`]), so a long argument list or sequence is written into memory
//! already touched (fresh pages, faulted in on first write, cost more than
//! the conversions) and the allocator does not trim and grow its heap
//! around every call.

use std::cell::Cell;
use std::thread::LocalKey;

/// A thread's kept heap vector.
pub type Kept<T> = LocalKey<Cell<Option<Vec<T>>>>;

/// The largest vector kept per thread, in elements.
const KEEP_MAX: usize = 1 << 17;

/// The vector `slot` keeps (emptied), or a new one, with room for `n`. A
/// bulk call made while another runs on this thread (from a callback or a
/// conversion's Python code) finds none and allocates its own.
pub fn take_kept<T: 'static>(slot: &'static Kept<T>, n: usize) -> Vec<T> {
    let mut v = slot.with(|k| k.take()).unwrap_or_default();
    v.clear();
    v.reserve(n);
    v
}

/// Keep `v` (emptied) in `slot` for the next bulk call, unless it is empty
/// or larger than is worth holding on to.
pub fn keep<T: 'static>(slot: &'static Kept<T>, mut v: Vec<T>) {
    v.clear();
    if v.capacity() > 0 && v.capacity() <= KEEP_MAX {
        // A thread being torn down keeps nothing.
        let _ = slot.try_with(|k| k.set(Some(v)));
    }
}

/// Up to `N` values inline, more on the heap.
pub struct StackVec<T: Copy, const N: usize> {
    inline: [T; N],
    len: usize,
    spill: Vec<T>,
}

impl<T: Copy, const N: usize> StackVec<T, N> {
    /// An empty buffer; `fill` initialises the inline slots (never read
    /// before being pushed over).
    #[inline]
    pub fn new(fill: T) -> Self {
        StackVec { inline: [fill; N], len: 0, spill: Vec::new() }
    }

    /// An empty buffer whose heap part starts as `spill` (emptied, its
    /// capacity kept): callers reuse one heap buffer across calls.
    pub fn with_spill(fill: T, mut spill: Vec<T>) -> Self {
        spill.clear();
        StackVec { inline: [fill; N], len: 0, spill }
    }

    /// The heap part, emptied, for reuse; the buffer is left empty.
    pub fn take_spill(&mut self) -> Vec<T> {
        self.len = 0;
        let mut spill = std::mem::take(&mut self.spill);
        spill.clear();
        spill
    }

    /// Room for `n` values in all, so a long argument list spills once
    /// instead of growing by doubling.
    pub fn reserve(&mut self, n: usize) {
        if n > N {
            self.spill.reserve(n.saturating_sub(self.spill.len()));
        }
    }

    #[inline]
    pub fn push(&mut self, v: T) {
        if self.len < N {
            self.inline[self.len] = v;
        } else {
            if self.len == N {
                self.spill.reserve(N * 2);
                self.spill.extend_from_slice(&self.inline);
            }
            self.spill.push(v);
        }
        self.len += 1;
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        if self.len <= N {
            &mut self.inline[..self.len]
        } else {
            &mut self.spill[..]
        }
    }

    #[inline]
    pub fn as_slice(&self) -> &[T] {
        if self.len <= N {
            &self.inline[..self.len]
        } else {
            &self.spill[..]
        }
    }
}
