//! Deep recursion without stack overflow: the structural algorithms recurse
//! once per nesting level, and object graphs can be nested millions deep.
//! [`guarded`] runs a step directly while the current thread has stack to
//! spare, and otherwise continues the recursion on a fresh thread with a
//! large stack (joined before returning), so depth is bounded by memory,
//! not by the calling thread's stack.
//!
//! The continuation thread may call frontend callbacks (custom hooks); a
//! frontend that holds a global lock for the whole native call (e.g. a
//! Python extension that does not release the GIL) would then deadlock on a
//! very deep input, so frontends release their lock around native calls, as
//! tether's Python extension does.
//!
//! SAFETY invariants of this module: the stack grows downwards, and the
//! thread-local limit is either 0 (not yet known) or an address inside the
//! current thread's stack at least `RESERVE` bytes above its lowest usable
//! byte.

use std::cell::Cell;

/// Stack of each continuation thread. Only touched pages are committed.
const SPILL_STACK: usize = 256 << 20;
/// Bytes kept free below the limit for callbacks and the runtime.
const RESERVE: usize = 512 << 10;
/// Used when the thread's stack bounds cannot be queried.
const FALLBACK_BUDGET: usize = 64 << 10;

thread_local! {
    static LIMIT: Cell<usize> = const { Cell::new(0) };
}

#[inline(never)]
fn stack_position() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

#[cfg(target_os = "linux")]
fn lowest_stack_address() -> Option<usize> {
    // SAFETY: pthread_getattr_np fills `attr` for the calling thread; it is
    // destroyed on every path after a successful init.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let rc = libc::pthread_attr_getstack(&attr, &mut addr, &mut size);
        libc::pthread_attr_destroy(&mut attr);
        (rc == 0 && !addr.is_null()).then_some(addr as usize)
    }
}

#[cfg(not(target_os = "linux"))]
fn lowest_stack_address() -> Option<usize> {
    None
}

fn current_limit(here: usize) -> usize {
    LIMIT.with(|l| {
        if l.get() == 0 {
            let limit = match lowest_stack_address() {
                Some(low) => low.saturating_add(RESERVE),
                None => here.saturating_sub(FALLBACK_BUDGET),
            };
            l.set(limit.max(1));
        }
        l.get()
    })
}

/// Run `step` here if the stack allows, else on a continuation thread.
pub fn guarded<R: Send>(step: impl FnOnce() -> R + Send) -> R {
    let here = stack_position();
    if here > current_limit(here) {
        return step();
    }
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("tether-deep-recursion".into())
            .stack_size(SPILL_STACK)
            .spawn_scoped(scope, move || {
                let start = stack_position();
                LIMIT.with(|l| l.set(start.saturating_sub(SPILL_STACK - RESERVE)));
                step()
            })
            .expect("spawning a continuation thread for deep recursion");
        match handle.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}
