//! Taking a backtrace: the return addresses of the calling thread's frames,
//! with no symbol lookup, up to the FFI boundary and the frame limit.
//!
//! The boundary is a frame whose function is registered as an entry from
//! another language into native code: `TVMFFIFunctionCall` (registered by
//! the C ABI layer) and the functions a frontend registers with
//! `TetherFFIBacktraceAddBoundary` (the Python extension's call paths,
//! which call a function's `safe_call` directly). Frames are matched by
//! the start address of their function, which the unwinder reports from
//! the same tables it unwinds with, so nothing is symbolized here.
//!
//! Invariants: the registered boundary addresses only grow (an append-only
//! array of atomics, read without a lock), and unwinding never calls back
//! into code outside this module and the unwinder.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Room for the core's own entry and a handful of frontends.
const MAX_BOUNDARY_FUNCTIONS: usize = 32;
static BOUNDARY: [AtomicUsize; MAX_BOUNDARY_FUNCTIONS] = [const { AtomicUsize::new(0) }; MAX_BOUNDARY_FUNCTIONS];
static BOUNDARY_LEN: AtomicUsize = AtomicUsize::new(0);
static BOUNDARY_LOCK: parking_lot::Mutex<()> = parking_lot::const_mutex(());

/// Upstream's default when `TVM_TRACEBACK_LIMIT` is unset.
const DEFAULT_FRAME_LIMIT: usize = 512;

/// The frame limit: `TVM_TRACEBACK_LIMIT` as the process started (read
/// once; a value that is not a non-negative integer keeps the default).
pub fn frame_limit() -> usize {
    static LIMIT: OnceLock<usize> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        std::env::var("TVM_TRACEBACK_LIMIT").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(DEFAULT_FRAME_LIMIT)
    })
}

/// Mark the function starting at `function` as an FFI boundary: a
/// backtrace taken below it stops at its frame. Registering an address
/// twice is harmless. Fails when the table is full.
pub fn add_boundary_function(function: usize) -> Result<(), String> {
    if function == 0 {
        return Err("a boundary function's address is null".into());
    }
    let _g = BOUNDARY_LOCK.lock();
    let n = BOUNDARY_LEN.load(Ordering::Acquire);
    if BOUNDARY[..n].iter().any(|a| a.load(Ordering::Relaxed) == function) {
        return Ok(());
    }
    if n == MAX_BOUNDARY_FUNCTIONS {
        return Err(format!("at most {MAX_BOUNDARY_FUNCTIONS} boundary functions can be registered"));
    }
    BOUNDARY[n].store(function, Ordering::Relaxed);
    BOUNDARY_LEN.store(n + 1, Ordering::Release);
    Ok(())
}

fn is_boundary(function: usize) -> bool {
    let n = BOUNDARY_LEN.load(Ordering::Acquire);
    BOUNDARY[..n].iter().any(|a| a.load(Ordering::Relaxed) == function)
}

/// Return addresses of the calling thread's frames, innermost first: the
/// frames up to and including the one of `entry` (the function taking
/// the backtrace) are left out, then `skip` more; at most `limit` are kept,
/// and with `stop_at_boundary` none from the first boundary frame out.
/// When `entry`'s frame is not found (an unwinder without function
/// starts), nothing is left out.
pub fn frame_addresses(entry: usize, skip: usize, limit: usize, stop_at_boundary: bool) -> Vec<usize> {
    let mut ips = Vec::with_capacity(32);
    let mut before_entry: Vec<usize> = Vec::new();
    let mut found_entry = false;
    let mut to_skip = skip;
    let budget = limit.saturating_add(skip).saturating_add(64);
    let mut seen = 0usize;
    let mut visit = |frame: &backtrace::Frame| -> bool {
        seen += 1;
        if seen > budget {
            return false;
        }
        let ip = frame.ip() as usize;
        if ip == 0 {
            // The end of the stack.
            return false;
        }
        let function = frame.symbol_address() as usize;
        if !found_entry {
            if function == entry {
                found_entry = true;
            } else {
                before_entry.push(ip);
            }
            return true;
        }
        if stop_at_boundary && is_boundary(function) {
            return false;
        }
        if to_skip > 0 {
            to_skip -= 1;
            return true;
        }
        if ips.len() >= limit {
            return false;
        }
        ips.push(ip);
        true
    };
    walk(&mut visit);
    if !found_entry {
        before_entry.truncate(limit);
        return before_entry;
    }
    ips
}

#[cfg(unix)]
fn walk(visit: &mut dyn FnMut(&backtrace::Frame) -> bool) {
    // SAFETY: on Unix the unwinder (libgcc's or libunwind's
    // _Unwind_Backtrace) is thread-safe; the crate's lock only serializes
    // Windows' dbghelp. The callback calls nothing outside this module.
    unsafe { backtrace::trace_unsynchronized(visit) }
}

#[cfg(not(unix))]
fn walk(visit: &mut dyn FnMut(&backtrace::Frame) -> bool) {
    backtrace::trace(visit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn take(skip: usize, limit: usize, stop: bool) -> Vec<usize> {
        let v = frame_addresses(take as *const () as usize, skip, limit, stop);
        std::hint::black_box(v)
    }

    #[inline(never)]
    fn boundary_then_take() -> Vec<usize> {
        let v = take(0, 512, true);
        std::hint::black_box(v)
    }

    #[test]
    fn limit_and_skip_bound_the_frames() {
        let all = take(0, 512, false);
        assert!(all.len() >= 3, "{all:x?}");
        assert_eq!(take(0, 2, false).len(), 2);
        assert_eq!(take(1, 512, false)[..], all[1..]);
        assert!(take(0, 0, false).is_empty());
    }

    #[test]
    fn a_registered_function_stops_the_walk() {
        let free = boundary_then_take();
        add_boundary_function(boundary_then_take as *const () as usize).unwrap();
        add_boundary_function(boundary_then_take as *const () as usize).unwrap();
        let stopped = boundary_then_take();
        // Only take's caller frame, boundary_then_take, is at the boundary:
        // nothing is kept.
        assert!(stopped.is_empty(), "{stopped:x?}");
        assert!(!free.is_empty());
        assert!(add_boundary_function(0).is_err());
    }
}
