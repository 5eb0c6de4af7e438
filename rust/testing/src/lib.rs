//! tether-testing: the testing library, kept out of the core as upstream
//! keeps `libtvm_ffi_testing` out of `libtvm_ffi`. Loading it registers
//! TVM-FFI's `testing.*` global functions and test object types into the
//! process's one core; the core itself registers none of them.
//!
//! The library reaches the core only through the shared `libtether_core`
//! and its function table ([`core_api`]), never through a copy of the
//! core's code, so what it registers lands in the same tables the Python
//! extension, C++ code and other libraries use.
//!
//! Map, top layer first (each module names only those of its own layer
//! and below; tools/layering/layers.txt holds the order and `make lint`
//! checks it):
//! * [`load`] — registration when the library is loaded;
//!   [`exports`] — functions exported under TVM-FFI's DLL-export names;
//! * [`types`] — the test object types; [`globals`] — the other globals;
//! * [`registration`] — how they register, and the failures recorded;
//! * [`reflect`] — type declarations, instances, field storage, enums;
//! * [`sig`] — typed signatures: type schemas, argument conversion, errors;
//! * [`ffi`] — values, objects, errors, functions and containers over
//!   the core's function table ([`core_api`]); [`device_text`] — device
//!   names as text.

pub mod core_api;
pub mod device_text;
pub mod exports;
pub mod ffi;
pub mod globals;
pub mod load;
pub mod reflect;
pub mod registration;
pub mod sig;
pub mod types;

#[cfg(test)]
mod tests;
