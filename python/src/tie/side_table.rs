//! Tying for objects allocated without the allocation header.
//!
//! Code built against upstream's headers (or plain C) allocates objects with
//! `new`/`malloc`: no `TVMFFIObjectAllocHeader`, no wrapper word, no core
//! marker, and nobody may read memory before their body. Their bindings live
//! here instead, in a table keyed by handle address, with the same states as
//! the word (Detached = no entry; see [`crate::tie::binding`]) and the same single
//! return path, so they get live identity and revival in place like every
//! other object.
//!
//! Each entry holds a weak reference on its handle ([`crate::tie::handle_pin`]):
//! the object's storage, and so its address, cannot be reused by another
//! object while the entry exists. An entry whose handle's contents died
//! (strong count zero: only an Inactive entry can be in that state, as an
//! Active wrapper owns a strong reference) is *swept*: its kept wrapper
//! memory is freed and its weak reference dropped, which frees the storage.
//! Sweeps run when a teardown sees the handle die with its wrapper, when the
//! table has doubled since the last sweep, and after each Python garbage
//! collection (a `gc.callbacks` hook).
//!
//! SAFETY invariants of this module: every caller is a Python-side
//! transition (GIL held, or an attached thread state on free-threaded
//! builds, where the table's mutex is what makes each word operation
//! atomic); no Python code runs while the mutex is held. An entry's value
//! may carry the binding's [`LOCK`] bit like a header word does.

use std::collections::HashMap;
use std::sync::Mutex;

use pyo3::ffi;
use tether_sys::abi::TVMFFIObject;

use crate::tie::binding_word::{INACTIVE, LOCK, TAGS, TRANSIT};
use crate::tie::handle_pin;

struct Table {
    /// handle address -> binding word (never 0: Detached means no entry).
    entries: HashMap<usize, usize>,
    /// Entries after the last sweep; a sweep runs when the table doubles.
    swept_len: usize,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Table) -> R) -> R {
    let mut guard = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    f(guard.get_or_insert_with(|| Table { entries: HashMap::new(), swept_len: 0 }))
}

/// The binding word of `h` (0 when it has no entry).
pub fn get(h: *mut TVMFFIObject) -> usize {
    with(|t| t.entries.get(&(h as usize)).copied().unwrap_or(0))
}

/// Replace `current` with `new` for `h`; `Err(actual)` when it differs.
///
/// # Safety
/// GIL held; `h` is live (the caller or its wrapper holds a strong reference).
#[cfg_attr(not(Py_GIL_DISABLED), allow(dead_code))]
pub unsafe fn compare_exchange(h: *mut TVMFFIObject, current: usize, new: usize) -> Result<usize, usize> {
    let (result, sweep) = with(|t| {
        let actual = t.entries.get(&(h as usize)).copied().unwrap_or(0);
        if actual != current {
            return (Err(actual), false);
        }
        // SAFETY: `h` is live, per the caller.
        (Ok(actual), unsafe { write(t, h, actual, new) })
    });
    if sweep {
        // SAFETY: GIL held, per the caller.
        unsafe { self::sweep() };
    }
    result
}

/// Set `h`'s binding word unconditionally.
///
/// # Safety
/// As for [`compare_exchange`].
pub unsafe fn set(h: *mut TVMFFIObject, new: usize) {
    let sweep = with(|t| {
        let actual = t.entries.get(&(h as usize)).copied().unwrap_or(0);
        // SAFETY: `h` is live, per the caller.
        unsafe { write(t, h, actual, new) }
    });
    if sweep {
        // SAFETY: GIL held, per the caller.
        unsafe { self::sweep() };
    }
}

/// Store `new` over `actual`, pinning on insert and unpinning on removal;
/// returns whether the table grew enough to sweep.
///
/// # Safety
/// `h` is live: unpinning cannot free it (a strong reference remains).
unsafe fn write(t: &mut Table, h: *mut TVMFFIObject, actual: usize, new: usize) -> bool {
    let key = h as usize;
    // An entry pins its handle while it names a wrapper; a Detached entry
    // that a transition holds (LOCK alone) does not.
    let (was, now) = (actual & !LOCK != 0, new & !LOCK != 0);
    if new == 0 {
        t.entries.remove(&key);
    } else {
        t.entries.insert(key, new);
    }
    if now && !was {
        // SAFETY: `h` is live.
        unsafe { handle_pin::pin(h) };
    } else if was && !now {
        // SAFETY: the entry's pin; `h` stays alive through the caller's reference.
        unsafe { handle_pin::unpin(h) };
    }
    // Sweep only on a write that releases the binding (never while held).
    now && !was && new & LOCK == 0 && t.entries.len() > 2 * t.swept_len + 256
}

/// Drop every entry whose handle's contents died: free its kept wrapper
/// memory and its weak reference (and with it the object's storage).
///
/// # Safety
/// GIL held.
pub unsafe fn sweep() {
    let dead: Vec<(usize, usize)> = with(|t| {
        // SAFETY: every key is pinned, so its storage is readable.
        // Entries a transition holds, or whose wrapper's teardown is half
        // done (its end settles them), are left alone.
        let dead: Vec<(usize, usize)> = t
            .entries
            .iter()
            .filter(|(&h, &w)| w & (LOCK | TRANSIT) == 0 && unsafe { handle_pin::contents_dead(h as *mut TVMFFIObject) })
            .map(|(&h, &w)| (h, w))
            .collect();
        for (h, _) in &dead {
            t.entries.remove(h);
        }
        t.swept_len = t.entries.len();
        dead
    });
    // Outside the lock: freeing memory and types may run Python code.
    for (h, w) in dead {
        // SAFETY: the entry was removed, so nothing names the kept memory
        // or owns the pin any more; GIL held.
        unsafe {
            if w & INACTIVE != 0 {
                crate::tie::kept_memory::discard_kept((w & !TAGS) as *mut ffi::PyObject);
            }
            handle_pin::unpin(h as *mut TVMFFIObject);
        }
    }
}

/// Entries in the table (for tests and debugging).
pub fn len() -> usize {
    with(|t| t.entries.len())
}
