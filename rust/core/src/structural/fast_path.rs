//! What the fast paths of structural equality ([`super::equal_fast`]) and
//! hashing ([`super::hash_fast`]) share: which values they walk, how deep,
//! the switch that turns them off, and how they hold what they read.
//!
//! Invariant of both fast paths (every `unsafe` block here and there relies
//! on it): a fast path looks inside an object only while it holds a
//! reference to it — the value it started at (which its caller owns) or a
//! value it read from a field with a reference of its own
//! ([`crate::dataclass::native_field::read_in_place`], which takes it under
//! the field's lock) before descending. Another thread may reassign fields
//! meanwhile (the GIL is released during structural calls, and a
//! free-threaded build has none): that drops the field's reference, never
//! the one held here, so nothing read is freed under the walk. An Array is immutable while more than one
//! reference to it exists, so the items of a held Array may be read in
//! place. The only code outside the core the fast paths call is a field's
//! getter (a C++ type's, say): it hands back an owned value, which the
//! path holds like an in-place read, so whatever the getter does cannot
//! free what the path reads. Hooks, Map tasks and frontends are the
//! walk's.

use std::cell::Cell;
use std::mem::ManuallyDrop;

use crate::abi::{type_index as ti, TVMFFIObject};
use crate::object::ObjectRef;

/// Levels of native recursion before the walk's frames take over (so the
/// native stack a comparison uses stays small and bounded).
pub(super) const FAST_DEPTH: usize = 48;

/// Native stack the fast path wants before it starts; with less it runs on
/// a fresh segment ([`super::deep_stack`]).
pub(super) const FAST_STACK: usize = 256 << 10;

/// Whether the fast paths of equality and hashing run: always, unless the
/// environment sets `TETHER_STRUCTURAL_FAST_PATH=0` at start-up (the walk
/// alone then decides everything, which is how the tests check that both
/// give the same answers), or the calling thread is inside
/// [`with_fast_paths`].
pub(super) fn enabled() -> bool {
    static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    FORCED.with(Cell::get)
        .unwrap_or_else(|| *ENABLED.get_or_init(|| std::env::var_os("TETHER_STRUCTURAL_FAST_PATH").map_or(true, |v| v != "0")))
}

thread_local! {
    /// This thread's override of the environment's switch, if any.
    static FORCED: Cell<Option<bool>> = const { Cell::new(None) };
}

/// Run `f` with the fast paths on (`fast`) or off on this thread, whatever
/// the environment says, so one process can compare the fast paths with
/// the walk (the differential fuzz target does). Nested calls restore the
/// outer setting, also when `f` panics. Not part of the API.
#[doc(hidden)]
pub fn with_fast_paths<R>(fast: bool, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<bool>);
    impl Drop for Restore {
        fn drop(&mut self) {
            FORCED.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(FORCED.with(|c| c.replace(Some(fast))));
    f()
}

/// The object of a value the caller holds, without a reference of its own.
pub(super) fn borrow_object(p: *mut TVMFFIObject) -> ManuallyDrop<ObjectRef> {
    let p = std::ptr::NonNull::new(p).expect("an object value holds an object");
    // SAFETY: the caller holds a reference to `p` for as long as this is
    // used; ManuallyDrop never gives back the reference it did not take.
    ManuallyDrop::new(unsafe { ObjectRef::from_raw_owned(p) })
}

/// Objects the fast path walks by their reflected fields: every object
/// type `Equal::open` hands to `open_object`.
pub(super) fn walks_fields(index: i32) -> bool {
    super::is_object_index(index)
        && !matches!(
            index,
            ti::kTVMFFIStr
                | ti::kTVMFFIBytes
                | ti::kTVMFFIBigInt
                | ti::kTVMFFIArray
                | ti::kTVMFFIList
                | ti::kTVMFFIMap
                | ti::kTVMFFIDict
                | ti::kTVMFFITensor
                | ti::kTVMFFIShape
        )
}

