//! TVM-FFI's enums in the core: `ffi.Enum` singletons with a canonical
//! integer and string index, the payload enums `ffi.IntEnum` and
//! `ffi.StrEnum` (whose `value` is one of those indices), and the
//! `ffi.EnumState` registry each enum type keeps as its `__ffi_enum__`
//! type attribute (`entries` in registration order, `indexes` from both
//! canonical indices to the singleton, and `attrs`, per attribute name a
//! Dict from singleton to value).
//!
//! Layouts and field names are upstream's (`enum.h`), so C++ enum types
//! declared with upstream's `EnumDef` register their singletons in the
//! same state that Python-declared enums read, and the other way round.
//! Serialization writes a singleton as its canonical index and reads it
//! back as the registered singleton; deep copies share singletons.
//!
//! Map: [`objects`] — the layouts; [`lookup`] — indices and lookups;
//! [`registration`] — the reflection registered at start-up.

pub mod lookup;
pub mod objects;
mod registration;

pub use lookup::{canonical_index, get_by_index, int_index, is_enum_type, is_int_enum_type, state_of, str_index};
pub use objects::{EnumObj, EnumStateObj, IntEnumObj, StrEnumObj, ENUM_STATE_ATTR};
pub(crate) use registration::{on_attr_installed, register};
