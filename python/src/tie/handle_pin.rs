//! Weak references the extension holds on handles, straight on the object's
//! combined reference count (strong count in the low half, weak count in the
//! high half, as the core keeps it).
//!
//! A weak reference keeps an object's storage — and so its address and
//! anything the extension keeps beside it — after its contents are
//! destroyed. Moves pin the handle they pass (its binding stays readable
//! whether or not the callee destroys it); the side table pins every handle
//! it tracks (its address cannot be reused by another object while the
//! entry exists).
//!
//! SAFETY invariants of this module: callers pass handles whose storage is
//! not freed (live, or pinned by them); a pin is dropped exactly once.

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};

use tether_sys::abi::{kTVMFFIObjectDeleterFlagBitMaskWeak, TVMFFIObject};

const STRONG_MASK: u64 = 0xFFFF_FFFF;
const WEAK_ONE: u64 = 1 << 32;

/// # Safety
/// `h`'s storage is not freed.
unsafe fn counter<'a>(h: *mut TVMFFIObject) -> &'a AtomicU64 {
    // SAFETY: `combined_ref_count` is a naturally aligned u64 updated only atomically.
    unsafe { &*(ptr::addr_of_mut!((*h).combined_ref_count) as *const AtomicU64) }
}

/// Take a weak reference.
///
/// # Safety
/// `h` is live (the caller holds a strong reference).
pub unsafe fn pin(h: *mut TVMFFIObject) {
    // SAFETY: per the caller.
    unsafe { counter(h).fetch_add(WEAK_ONE, Ordering::Relaxed) };
}

/// Drop a weak reference from [`pin`]; frees the storage (the deleter with
/// the Weak flag) if it was the last one.
///
/// # Safety
/// The caller owns the weak reference; `h` is not used afterwards unless
/// the caller still holds a strong reference.
pub unsafe fn unpin(h: *mut TVMFFIObject) {
    // SAFETY: per the caller.
    unsafe {
        let c = counter(h);
        if c.fetch_sub(WEAK_ONE, Ordering::Release) == WEAK_ONE {
            // Acquire what every other reference's release published, by a
            // load rather than a fence, as the core does (see
            // `tether_core::object`): ThreadSanitizer models no fences.
            let _ = c.load(Ordering::Acquire);
            if let Some(d) = (*h).deleter {
                d(h as *mut c_void, kTVMFFIObjectDeleterFlagBitMaskWeak);
            }
        }
    }
}

/// Whether the object's contents are destroyed (strong count zero).
///
/// # Safety
/// `h`'s storage is not freed (it is pinned).
pub unsafe fn contents_dead(h: *mut TVMFFIObject) -> bool {
    // SAFETY: per the caller.
    unsafe { counter(h).load(Ordering::Acquire) & STRONG_MASK == 0 }
}
