//! The values layer: what crosses the FFI — [`any`] (tagged values),
//! [`string`] (str and bytes), [`error`] (the Rust error and the Error
//! object) and [`backtrace`] (its native frames, resolved when read), [`function`] (Function objects), [`global_table`] (the global
//! function table), [`function_metadata`] and [`big_int`]. It may name the
//! object layer and the type table below it; the global table reaches the
//! builtins registered above through the crate root's start-up hook.
pub mod any;
pub mod backtrace;
pub mod backtrace_globals;
pub mod big_int;
pub mod error;
pub mod function;
pub mod function_metadata;
pub mod global_table;
pub mod string;
