//! tether-sys: raw declarations of TVM-FFI's C ABI as exported by the shared
//! library `libtether_core`.
//!
//! [`abi`] holds the `#[repr(C)]` layouts and constants, shared with the
//! core itself. With the `link` feature, the extern functions are
//! declared and linked against the shared core library, so every user in a
//! process resolves them to the same registries. Code in this crate is
//! declarations only; safe wrappers live in the crates that use it.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

pub mod abi;

#[cfg(feature = "link")]
mod functions;
#[cfg(feature = "link")]
pub use functions::*;
