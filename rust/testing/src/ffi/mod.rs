//! The testing library's thin safe layer over the core's C ABI: values
//! ([`Any`], [`AnyView`]), object references, errors, functions and
//! containers. Every call goes through the core's function table
//! (`crate::core_api`).

pub mod any;
pub mod bytes;
pub mod containers;
pub mod error;
pub mod function;
pub mod object;
pub mod type_table;

pub use any::{Any, AnyView};
pub use error::Error;
pub use function::Function;
pub use object::ObjectRef;
