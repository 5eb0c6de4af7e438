//! What the fast paths of structural equality ([`super::equal_fast`]) and
//! hashing ([`super::hash_fast`]) share: which values they walk, how deep,
//! the switch that turns them off, and values used without a reference of
//! their own.
//!
//! Invariant of both fast paths (every `unsafe` block here and there relies
//! on it): while a fast path runs, no code outside the core runs — no hook,
//! no field getter other than the in-place reads, no Map task, no frontend
//! — so every object reachable from the value it started at (which its
//! caller owns) stays alive and unchanged, and values read in place may be
//! used without a reference of their own until it returns.

use std::mem::ManuallyDrop;

use crate::abi::{type_index as ti, TVMFFIAny, TVMFFIObject};
use crate::object::ObjectRef;
use crate::values::any::Any;

/// Levels of native recursion before the walk's frames take over (so the
/// native stack a comparison uses stays small and bounded).
pub(super) const FAST_DEPTH: usize = 48;

/// Native stack the fast path wants before it starts; with less it runs on
/// a fresh segment ([`super::deep_stack`]).
pub(super) const FAST_STACK: usize = 256 << 10;

/// Whether the fast paths of equality and hashing run: always, unless the
/// environment sets `TETHER_STRUCTURAL_FAST_PATH=0` at start-up (the walk
/// alone then decides everything, which is how the tests check that both
/// give the same answers).
pub(super) fn enabled() -> bool {
    static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var_os("TETHER_STRUCTURAL_FAST_PATH").map_or(true, |v| v != "0"))
}

/// A value read in place, used without a reference of its own.
pub(super) type Borrowed = ManuallyDrop<Any>;

pub(super) fn borrow(raw: TVMFFIAny) -> Borrowed {
    // SAFETY: per the module invariant, the value stays alive while the
    // fast path runs; ManuallyDrop never gives back the reference it did
    // not take.
    ManuallyDrop::new(unsafe { Any::from_raw_owned(raw) })
}

pub(super) fn borrow_object(p: *mut TVMFFIObject) -> ManuallyDrop<ObjectRef> {
    let p = std::ptr::NonNull::new(p).expect("an object value holds an object");
    // SAFETY: as for `borrow`.
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

