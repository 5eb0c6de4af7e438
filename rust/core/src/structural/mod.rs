//! Structural algorithms over FFI values, following TVM-FFI's semantics:
//! structural equality ([`equal`]), structural hashing ([`hash`]), the
//! hashable [`key`] wrapper, and the [`access_path`] objects that name where
//! two values first differ. Objects take part through reflection: their
//! registered fields (skipping `SEqHashIgnore`, opening def regions at
//! `SEqHashDef*`), the structural kind in their type metadata, and the type
//! attributes `__s_equal__` / `__s_hash__` when a type customises the walk.
//!
//! What the algorithms share lives in its own modules: the stable hash
//! primitives ([`hash_primitives`]), the leaves equality decides in place
//! (`leaf_equal`), comparing two maps (`map_equal`), reading reflected fields and kinds
//! (`object_fields`) and item views of containers (`value_views`). This
//! module is the map, and registers the structural types and globals.

pub mod access_path;
pub(crate) mod access_path_reflection;
pub(crate) mod big_int_hooks;
pub(crate) mod active_path;
pub(crate) mod container_hooks;
pub mod deep_stack;
pub mod equal;
mod equal_fast;
mod equal_state;
mod fast_path;
pub mod hash;
mod hash_fast;
mod hash_state;
pub mod hash_primitives;
pub mod hook_callback;
pub(crate) mod hook_identity;
pub mod key;
pub(crate) mod leaf_equal;
mod leaf_hash;
pub(crate) mod map_equal;
pub mod mutate;
pub(crate) mod object_fields;
pub mod recursive_compare;
pub mod recursive_hash;
pub(crate) mod trampoline;
pub(crate) mod type_plan;
pub(crate) mod value_views;
pub mod visit;
pub mod visit_error_context;

pub use crate::reflection::structural_kind as kind;
pub use hash_primitives::{hash_bytes, hash_combine, type_key_hash};
pub(crate) use hash_primitives::type_index_key_hash;
pub use object_fields::def_region;
#[doc(hidden)]
pub use fast_path::with_fast_paths;
pub(crate) use object_fields::{
    field_name, is_object_index, read_field, read_field_in_place, region_for_field, region_for_hook, structural_kind,
    type_info_of,
};
pub(crate) use value_views::{tensor_content, MapLike, SeqItems};

/// Register the structural types' reflection and type attributes. They
/// exist from start-up, as in TVM-FFI, so frontends can bind classes to
/// their keys before the first object is made.
pub(crate) fn ensure_reflection() {
    access_path_reflection::ensure_reflection();
    key::ensure_reflection();
    visit::ensure_reflection();
    mutate::ensure_reflection();
    visit_error_context::ensure_reflection();
}

/// A builtin global: its name and its function.
pub(crate) use crate::values::global_table::Builtin as Global;

/// The structural globals (`ffi.StructuralEqual`, `ffi.StructuralHash`,
/// `ffi.GetFirstStructuralMismatch`, `ffi.StructuralKey`,
/// `ffi.StructuralKeyEqual`), and the reflection of the access-path and key
/// types.
pub(crate) fn register_globals() -> Vec<Global> {
    ensure_reflection();
    let mut out = Vec::new();
    out.extend(equal::globals());
    out.extend(hash::globals());
    out.extend(key::globals());
    out.extend(visit::globals());
    out.extend(mutate::globals::globals());
    out.extend(recursive_compare::globals());
    out.extend(recursive_hash::globals());
    out.extend(visit_error_context::globals());
    out
}
