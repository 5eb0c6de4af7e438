//! The type table: type keys, indices, depths and ancestors of every
//! registered type (`type_registry`), how a new type gets its index
//! (`type_index_alloc`), and the types every process starts with
//! (`builtin_types`).
pub(crate) mod builtin_types;
pub mod start_up;
pub(crate) mod type_index_alloc;
pub mod type_registry;
