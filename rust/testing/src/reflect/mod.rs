//! Reflection for the test types: field storage ([`storage`]), instances
//! ([`instance`]) and type declarations in the manner of upstream's
//! `refl::ObjectDef` ([`object_def`]), and enum singletons in the manner
//! of upstream's `refl::EnumDef` ([`enum_def`]).

pub mod enum_def;
pub mod instance;
pub mod object_def;
pub mod storage;

pub use object_def::{field, get_field, register_attr, set_field, FieldSpec, Registered, TypeDef};
