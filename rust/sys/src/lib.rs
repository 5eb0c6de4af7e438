//! tether-sys: raw declarations of TVM-FFI's C ABI as exported by the shared
//! library `libtether_core`.
//!
//! [`abi`] and [`dlpack`] hold the `#[repr(C)]` layouts and constants, and [`api_table`]
//! the layout of the core's function table; both are shared with the core
//! itself. With the `link` feature, the crate links the shared core library
//! and offers its C functions under their C names, each calling through that
//! table, so every user in a process reaches the same registries even when
//! another library exporting the `TVMFFI*` names is loaded too. Code in this
//! crate is declarations and forwarding only; safe wrappers live in the
//! crates that use it.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case)]

pub mod abi;
pub mod api_table;
pub mod dlpack;

#[cfg(feature = "link")]
mod functions;
#[cfg(feature = "link")]
pub use functions::*;
