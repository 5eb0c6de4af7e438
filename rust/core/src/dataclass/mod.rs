//! Object types defined at run time from a list of typed fields, so a
//! frontend (the Python `py_class` decorator) can define classes without
//! native code.
//!
//! An instance is the object header followed by one slot per field,
//! parent's fields first. Slot kinds:
//!
//! | kind     | storage             | accepts                               |
//! |----------|---------------------|---------------------------------------|
//! | `Any`    | 16-byte `TVMFFIAny` | any value                             |
//! | `Int`    | `i64`               | int, bool                             |
//! | `Float`  | `f64`               | float, int, bool                      |
//! | `Bool`   | `i64` (0/1)         | bool, int                             |
//! | `Str`    | 16-byte `TVMFFIAny` | str, None                             |
//! | `Object` | object pointer      | None or an instance of the field type |
//!
//! Each field is registered with the type registry: a getter function, and
//! a setter that is a Function object (`kSetterIsFunctionObj`) checking the
//! declared type. The type gets `__ffi_new__` (an instance with every field
//! zero/None), `__ffi_init__` (TVM-FFI's generated constructor, see
//! `auto_init`: positional and keyword arguments, field defaults and
//! factories) and `__ffi_shallow_copy__` as type attributes, plus its
//! `TVMFFITypeMetadata::total_size`.
//! The metadata `creator` stays NULL: a plain C function pointer cannot
//! know which run-time type to create.
//!
//! The builtin global `tether.dataclass.RegisterType` exposes this to any
//! frontend through the C ABI.
//!
//! SAFETY invariants of this module: an instance of a registered dataclass
//! type has the layout recorded in `LAYOUTS` for its type index, its slots
//! are always initialised (zeroed at creation), and Object slots own one
//! reference when non-NULL.

pub mod auto_init;
pub mod field_default;
mod field_access;
mod field_lock;
mod layout;
mod registration;
pub mod native_field;
pub mod py_class;
pub mod py_class_fields;
pub(crate) mod reflection_globals;

pub use field_access::{get_field, set_field};
pub use layout::{is_dataclass, new_instance, FieldKind, FieldSpec};
pub use registration::{init_instance, register_type, register_type_full, register_type_with_defaults, shallow_copy, FieldDefault};
pub(crate) use field_access::store_slot;
pub(crate) use layout::{create_with_creator, field_name, layout_of, new_instance_of, Layout};
pub(crate) use registration::register_type_global;
