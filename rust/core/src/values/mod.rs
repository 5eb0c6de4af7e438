//! The values crossing the FFI.
pub mod any;
pub mod big_int;
pub mod error;
pub mod function;
pub mod function_metadata;
pub mod global_table;
pub mod string;
