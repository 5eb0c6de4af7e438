//! Modules (`ffi.Module`, static index 73): libraries of FFI functions
//! found by symbol name. This folder holds what is process-wide about
//! them: the system library's and the context symbols' registries
//! ([`symbols`]).

pub mod symbols;
