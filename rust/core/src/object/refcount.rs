//! The layout of an object's combined reference count: the strong count in
//! the low 32 bits, the weak count in the high 32 bits, as TVM-FFI's
//! headers read and update it inline.

pub const COMBINED_STRONG_ONE: u64 = 1;
pub const COMBINED_WEAK_ONE: u64 = 1 << 32;
pub const COMBINED_BOTH_ONE: u64 = COMBINED_STRONG_ONE | COMBINED_WEAK_ONE;
