//! The lock that makes a field read safe against a concurrent write of the
//! same field.
//!
//! A field holding an object owns one reference to it. A reader takes a
//! reference of its own in two steps (load the pointer, then increment the
//! count); a writer swaps the pointer and releases the old reference. Run
//! on two threads, the release can free the object between the reader's
//! two steps. That happens whenever a walk that releases the GIL
//! (structural hash and equality, JSON graph writes, C++ threads reading
//! fields) meets a Python thread assigning a field of an object it walks.
//!
//! Every read of a reference-holding field made by this crate (getters,
//! in-place reads of the walks, copies) and every write (setters,
//! constructors) goes through the functions below, which hold the field's
//! stripe of a global striped spin lock for the load-and-increment or for
//! the swap. The old value is released after the stripe is let go, so no
//! destructor, and no code outside this crate, runs under the lock; a
//! critical section is a few loads, stores and one atomic increment, and
//! never takes a second stripe, so the lock cannot deadlock and never
//! waits for the GIL. Plain-value fields (ints, floats, bools) need no lock.
//!
//! What it does not cover: C++ code reading or writing a field directly
//! (the ABI leaves that to the C++ code's own synchronisation, as
//! upstream's does), and Python's in-place field reads, which run under
//! the GIL like every Python write.
//!
//! SAFETY invariants of this module: every `addr` is the address of a live,
//! initialised field of the named storage (a `TVMFFIAny` owning its value,
//! or an object pointer owning one reference when non-NULL) inside an
//! object the caller keeps alive; all reads and writes of such a field by
//! this crate go through this module.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::abi::{TVMFFIAny, TVMFFIObject};
use crate::object::ObjectRef;
use crate::values::any::Any;

/// Stripes of the lock; fields hash onto them by address. Enough that
/// threads working on different objects rarely meet.
const STRIPES: usize = 128;

/// One stripe, alone on its cache line.
#[repr(align(64))]
struct Stripe(AtomicBool);

static LOCKS: [Stripe; STRIPES] = [const { Stripe(AtomicBool::new(false)) }; STRIPES];

/// The stripe of the field at `addr` (Fibonacci hashing of the address,
/// whose low bits are alignment).
fn stripe_of(addr: *const u8) -> &'static AtomicBool {
    let h = ((addr as usize) >> 3).wrapping_mul(0x9E37_79B9_7F4A_7C15_u64 as usize);
    &LOCKS[(h >> (usize::BITS - 7)) % STRIPES].0
}

/// A held stripe, let go on drop.
struct Held(&'static AtomicBool);

impl Held {
    fn take(addr: *const u8) -> Held {
        let lock = stripe_of(addr);
        let mut spins = 0u32;
        while lock.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            // The holder is a few instructions from letting go, unless the
            // OS preempted it: then give it the CPU.
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        Held(lock)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// The value of an Any field, with a reference of its own.
///
/// # Safety
/// `addr` is a live Any field (module invariant).
pub(crate) unsafe fn clone_any(addr: *const u8) -> Any {
    let _held = Held::take(addr);
    // SAFETY: per the caller; the field owns `raw`, and the clone takes its
    // own reference before the stripe is let go. ManuallyDrop gives back
    // no reference it did not take.
    unsafe {
        let raw = (addr as *const TVMFFIAny).read_unaligned();
        Any::clone(&std::mem::ManuallyDrop::new(Any::from_raw_owned(raw)))
    }
}

/// The object of an object field (None for NULL), with a reference of its
/// own.
///
/// # Safety
/// `addr` is a live object-pointer field (module invariant).
pub(crate) unsafe fn clone_object(addr: *const u8) -> Option<ObjectRef> {
    let _held = Held::take(addr);
    // SAFETY: per the caller; the field's reference keeps the object alive
    // until the stripe is let go, and the result takes its own first.
    unsafe {
        let p = (addr as *const *mut TVMFFIObject).read_unaligned();
        std::ptr::NonNull::new(p).map(|p| ObjectRef::from_raw_borrowed(p))
    }
}

/// Store `new` (owned) in an Any field and return the value it held, now
/// owned by the caller, who releases it after this returns.
///
/// # Safety
/// `addr` is a live Any field (module invariant).
#[must_use]
pub(crate) unsafe fn swap_any(addr: *mut u8, new: Any) -> Any {
    let new = new.into_raw();
    let old = {
        let _held = Held::take(addr);
        // SAFETY: per the caller.
        unsafe { (addr as *mut TVMFFIAny).replace(new) }
    };
    // SAFETY: the field owned `old`; its ownership passes to the caller.
    unsafe { Any::from_raw_owned(old) }
}

/// Store `new` (an owned reference, or NULL) in an object field and return
/// the reference it held (None for NULL), now owned by the caller.
///
/// # Safety
/// `addr` is a live object-pointer field (module invariant); `new` is NULL
/// or an object whose reference the caller gives to the field.
#[must_use]
pub(crate) unsafe fn swap_object(addr: *mut u8, new: *mut TVMFFIObject) -> Option<ObjectRef> {
    let old = {
        let _held = Held::take(addr);
        // SAFETY: per the caller.
        unsafe { (addr as *mut *mut TVMFFIObject).replace(new) }
    };
    // SAFETY: the field owned its reference to `old`; it passes to the caller.
    std::ptr::NonNull::new(old).map(|p| unsafe { ObjectRef::from_raw_owned(p) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::containers::array::Array;

    /// Readers cloning a field while a writer keeps replacing it never see
    /// a value the writer already released (a use-after-free here shows as
    /// a wrong length, a crash, or an AddressSanitizer report under
    /// `make test-asan`).
    #[test]
    fn reads_racing_writes_hold_what_they_read() {
        let field = Box::new(std::cell::UnsafeCell::new(TVMFFIAny::NONE));
        let addr = field.get() as usize;
        let make = |n: i64| Any::from_object(Array::new((0..n).map(Any::from).collect()).expect("an Array").into_object());
        // SAFETY: a live Any field (boxed, outlives the threads below).
        drop(unsafe { swap_any(addr as *mut u8, make(3)) });
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for _ in 0..20_000 {
                        // SAFETY: as above.
                        let v = unsafe { clone_any(addr as *const u8) };
                        let a = Array::from_object(v.get::<ObjectRef>().expect("an object")).expect("the field holds Arrays");
                        assert_eq!(a.len(), 3);
                    }
                });
            }
            s.spawn(|| {
                for _ in 0..20_000 {
                    // SAFETY: as above.
                    drop(unsafe { swap_any(addr as *mut u8, make(3)) });
                }
            });
        });
        // SAFETY: as above; the field's last value is released here.
        drop(unsafe { swap_any(addr as *mut u8, Any::none()) });
    }

    #[test]
    fn object_fields_swap_and_clone() {
        let field = Box::new(std::cell::UnsafeCell::new(std::ptr::null_mut::<TVMFFIObject>()));
        let addr = field.get() as *mut u8;
        // SAFETY: a live object field, NULL so far.
        unsafe {
            assert!(clone_object(addr).is_none());
            let obj = Array::new(vec![Any::from(1i64)]).expect("an Array").into_object();
            assert!(swap_object(addr, obj.clone().into_raw()).is_none());
            let read = clone_object(addr).expect("the field holds the Array");
            assert_eq!(read.as_ptr(), obj.as_ptr());
            assert_eq!(swap_object(addr, std::ptr::null_mut()).map(|o| o.as_ptr()), Some(obj.as_ptr()));
        }
    }
}
