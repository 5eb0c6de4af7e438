//! `TVMFFISEqHashKind`: how the structural algorithms treat a type, as its
//! metadata records it (`structural_eq_hash_kind`).

pub const UNSUPPORTED: i32 = 0;
pub const TREE_NODE: i32 = 1;
pub const FREE_VAR: i32 = 2;
pub const DAG_NODE: i32 = 3;
pub const CONST_TREE_NODE: i32 = 4;
pub const UNIQUE_INSTANCE: i32 = 5;
