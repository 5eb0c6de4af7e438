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
//! Map:
//! * [`core_api`] — the core's function table;
//! * [`ffi`] — values, objects, errors, functions and containers over it;
//! * [`sig`] — typed signatures: type schemas, argument conversion, errors;
//! * [`reflect`] — field storage, instances and type declarations;
//! * [`types`] — the test object types; [`globals`] — the other globals;
//! * [`load`] — registration when the library is loaded;
//! * [`exports`] — functions exported under TVM-FFI's DLL-export names.

pub mod core_api;
pub mod device_text;
pub mod exports;
pub mod ffi;
pub mod globals;
pub mod load;
pub mod reflect;
pub mod sig;
pub mod types;

#[cfg(test)]
mod tests;
