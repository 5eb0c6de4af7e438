//! Buffers for per-call values (argument views, borrowed wrappers, values
//! on their way into a container): inline storage for the common arities,
//! a heap vector only past them, so a call with a few arguments allocates
//! nothing; and heap vectors a thread keeps between bulk calls ([`take_kept`],
//! [`keep`]), so a long argument list or sequence is written into memory
//! already touched (fresh pages, faulted in on first write, cost more than
//! the conversions) and the allocator does not trim and grow its heap
//! around every call. Each thread keeps only a small vector per kind
//! ([`LOCAL_MAX_BYTES`]); the large one is kept once for the process
//! ([`Shared`]), so idle threads hold little whatever they converted once.

use std::cell::Cell;
use std::thread::LocalKey;

use parking_lot::Mutex;

/// A thread's kept heap vector.
pub type Kept<T> = LocalKey<Cell<Option<Vec<T>>>>;

/// The process's kept large vector of one kind.
pub struct Shared<T>(Mutex<Option<Vec<T>>>);

// SAFETY: only emptied vectors are stored (`keep` clears them first), so
// what moves between threads is an allocation, never a value.
unsafe impl<T> Sync for Shared<T> {}

impl<T> Shared<T> {
    pub const fn new() -> Self {
        Shared(parking_lot::const_mutex(None))
    }
}

/// The largest vector a thread keeps, in bytes.
const LOCAL_MAX_BYTES: usize = 16 << 10;
/// The largest vector the process keeps, in bytes.
const SHARED_MAX_BYTES: usize = 2 << 20;

/// A kept vector (emptied), or a new one, with room for `n`: the thread's
/// own, or the process's large one when the thread's is too small and no
/// other thread holds it. A bulk call made while another runs on this
/// thread (from a callback or a conversion's Python code) finds none and
/// allocates its own.
pub fn take_kept<T: 'static>(local: &'static Kept<T>, shared: &'static Shared<T>, n: usize) -> Vec<T> {
    let mut v = local.with(|k| k.take()).unwrap_or_default();
    if v.capacity() < n {
        if let Some(mut big) = shared.0.try_lock() {
            if big.as_ref().is_some_and(|b| b.capacity() > v.capacity()) {
                let small = std::mem::replace(&mut v, big.take().expect("checked above"));
                // The thread's own small one stays its own.
                if small.capacity() > 0 {
                    let _ = local.try_with(|k| k.set(Some(small)));
                }
            }
        }
    }
    v.clear();
    v.reserve(n);
    v
}

/// Keep `v` (emptied) for the next bulk call: as the thread's own when it
/// is small, as the process's large one when it is larger than that one
/// and not larger than is worth holding on to.
pub fn keep<T: 'static>(local: &'static Kept<T>, shared: &'static Shared<T>, mut v: Vec<T>) {
    v.clear();
    let bytes = v.capacity().saturating_mul(std::mem::size_of::<T>().max(1));
    if v.capacity() == 0 {
        return;
    }
    if bytes <= LOCAL_MAX_BYTES {
        // A thread being torn down keeps nothing.
        let _ = local.try_with(|k| {
            let old = k.take();
            // Keep the larger of the two.
            k.set(Some(match old {
                Some(o) if o.capacity() > v.capacity() => o,
                _ => v,
            }));
        });
    } else if bytes <= SHARED_MAX_BYTES {
        if let Some(mut big) = shared.0.try_lock() {
            if big.as_ref().is_none_or(|b| b.capacity() < v.capacity()) {
                *big = Some(v);
            }
        }
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
