//! The type table, the crate's bottom layer: type keys, indices, depths
//! and ancestors of every registered type and the field, method and
//! metadata records their infos point to (`type_registry`), how a new type
//! gets its index (`type_index_alloc`), the types every process starts with
//! (`builtin_types`), a cache of facts derived from the table that its
//! changes invalidate (`type_facts_cache`), and the hook that runs the start-up registration of
//! the layers above before the first lookup (`start_up`).
//!
//! It depends on nothing but the ABI's layouts (`tether_sys::abi`): it
//! reports with its own [`TypeTableError`], and the values its records hold
//! are kept alive by the reflection layer that registers them.
pub mod builtin_types;
pub mod byte_array;
pub mod start_up;
pub mod type_facts_cache;
pub(crate) mod type_index_alloc;
pub mod type_registry;
pub mod type_table_error;

pub use type_table_error::TypeTableError;
