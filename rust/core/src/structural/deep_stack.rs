//! Deep native recursion on the caller's thread. The core's algorithms keep
//! their own work on explicit stacks (structural walk, visit, map and
//! mutate on [`super::trampoline`], the access-path search of visit error
//! contexts on its own); what still nests natively here is what the core
//! does not control: custom hooks (`__s_equal__`, `__s_hash__`,
//! `__ffi_repr__`, `__ffi_eq__`, `__ffi_hash__`) re-entering through their
//! callbacks.
//! [`guarded`] runs such a step directly while the current thread has stack
//! to spare, and otherwise continues it on a fresh stack segment of the
//! same thread (the `stacker` crate's segmented stacks, as rustc uses),
//! freed when the step returns. Everything a step does — frontend callbacks
//! included — runs on the calling thread: its thread-locals, the frontend's
//! context variables and any lock it holds (a Python extension's GIL) stay
//! valid, so a callback at depth 10^6 sees what one at depth 1 sees.
//!
//! Memory is linear in the depth reached: one segment per [`SEGMENT`] bytes
//! of frames, each mapped lazily and unmapped on the way back up.

/// Bytes that must remain on the current stack (segment) before a step
/// runs there: room for the step's own frame plus a frontend callback
/// (an interpreter entering a Python function) or a native hook.
const RED_ZONE: usize = 1 << 20;
/// Size of each further segment. Only touched pages are committed.
const SEGMENT: usize = 16 << 20;

/// Run `step` on the current stack if it has [`RED_ZONE`] bytes to spare,
/// else on a new segment of this thread's stack.
#[inline]
pub fn guarded<R>(step: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, step)
}

/// Run `step` on the current stack if it has `room` bytes to spare, else
/// on a new segment (for native recursion of a known, bounded depth).
#[inline]
pub fn guarded_with<R>(room: usize, step: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(room, SEGMENT, step)
}

/// Bytes of stack left on the current segment, when known (for tests and
/// diagnostics).
pub fn remaining() -> Option<usize> {
    stacker::remaining_stack()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        // A frame big enough that 10^5 levels exceed any default stack.
        let pad = std::hint::black_box([0u8; 256]);
        guarded(|| depth(n - 1)) + u64::from(pad[0] == 0)
    }

    #[test]
    fn recursion_deeper_than_the_thread_stack_stays_on_the_thread() {
        let id = std::thread::current().id();
        assert_eq!(depth(100_000), 100_000);
        let seen = guarded(|| std::thread::current().id());
        assert_eq!(seen, id);
    }
}
