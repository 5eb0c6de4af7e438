//! The module layer: what `tether._ffi` offers Python on top of the
//! layers below. Wrapper classes and their native slots (`classes`,
//! `descriptor` for fields, `seq_index` for `a[i]`), global functions and
//! direct calls (`globals`), the type table (`type_info`), construction
//! (`construct`), conversions by name (`conversions`), object operations
//! (`object_ops`), inspection of the tying state (`wrapper_state`), and
//! the list of everything the module registers (`registration`).
//!
//! It may name every layer below (call, convert, tie, core_link); nothing
//! below names it.

pub mod classes;
pub mod construct;
pub mod conversions;
pub mod descriptor;
pub mod globals;
pub mod object_ops;
pub mod registration;
pub mod seq_index;
pub mod type_info;
pub mod wrapper_state;
