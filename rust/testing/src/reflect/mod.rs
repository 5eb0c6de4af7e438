//! Reflection for the test types, each module using only those listed
//! after it: enum singletons in the manner of upstream's `refl::EnumDef`
//! ([`enum_def`]), type declarations in the manner of upstream's
//! `refl::ObjectDef` ([`object_def`]), instances ([`instance`]), field
//! storage ([`storage`]) and the enum state read back ([`enum_state`]).

pub mod enum_def;
pub mod enum_state;
pub mod instance;
pub mod object_def;
pub mod storage;

pub use object_def::{field, get_field, register_attr, set_field, FieldSpec, Registered, TypeDef};
