//! The object layouts of TVM-FFI's enum types, byte for byte as upstream's
//! `enum.h` declares them, so that C++ compiled against those headers and
//! the core read and write the same fields:
//!
//! * `ffi.Enum` (`EnumObj`): the header, `int64_t _int_index`, then
//!   `String _str_index` — a 16-byte `TVMFFIAny` in upstream's `String`
//!   (inline small strings), kept here as an [`Any`] holding a string;
//! * `ffi.IntEnum` / `ffi.StrEnum`: the same layout (they add no members,
//!   only the `value` alias field);
//! * `ffi.EnumState` (`EnumStateObj`): `List<ObjectRef> entries`,
//!   `Dict<Any, ObjectRef> indexes`, `Dict<String, Dict<ObjectRef, Any>>
//!   attrs`, three object pointers that a constructed state never leaves
//!   NULL.

use crate::abi::TVMFFIObject;
use crate::values::any::Any;
use crate::containers::{Dict, List};
use crate::values::error::Error;
use crate::object::{header_placeholder, ObjectRef, ObjectType};
use crate::reflection::{DefaultObject, ShallowCopy};

/// The type attribute under which an enum type keeps its `ffi.EnumState`
/// (upstream's `type_attr::kEnumState`).
pub const ENUM_STATE_ATTR: &str = "__ffi_enum__";

/// `ffi.Enum`: one registered enum singleton.
#[repr(C)]
pub struct EnumObj {
    header: TVMFFIObject,
    pub(crate) int_index: i64,
    /// A string (small or heap), as upstream's `String` holds it.
    pub(crate) str_index: Any,
}
object_type!(EnumObj, "ffi.Enum");

/// `ffi.IntEnum`: an enum whose payload is its integer index.
#[repr(C)]
pub struct IntEnumObj {
    base: EnumObj,
}
object_type!(IntEnumObj, "ffi.IntEnum", <EnumObj as ObjectType>::type_index());

/// `ffi.StrEnum`: an enum whose payload is its string index.
#[repr(C)]
pub struct StrEnumObj {
    base: EnumObj,
}
object_type!(StrEnumObj, "ffi.StrEnum", <EnumObj as ObjectType>::type_index());

/// `ffi.EnumState`: the variants of one enum type.
#[repr(C)]
pub struct EnumStateObj {
    header: TVMFFIObject,
    pub(crate) entries: Option<ObjectRef>,
    pub(crate) indexes: Option<ObjectRef>,
    pub(crate) attrs: Option<ObjectRef>,
}
object_type!(EnumStateObj, "ffi.EnumState");

impl EnumObj {
    pub(crate) fn with_indices(int_index: i64, str_index: Any) -> EnumObj {
        EnumObj { header: header_placeholder(), int_index, str_index }
    }
}

impl DefaultObject for EnumObj {
    /// Upstream's default constructor: index 0 and an empty string.
    fn default_object() -> Self {
        EnumObj::with_indices(0, Any::string("").unwrap_or_else(|_| Any::none()))
    }
}

impl ShallowCopy for EnumObj {
    fn shallow_copy(&self) -> Self {
        EnumObj::with_indices(self.int_index, self.str_index.clone())
    }
}

impl DefaultObject for IntEnumObj {
    fn default_object() -> Self {
        IntEnumObj { base: EnumObj::default_object() }
    }
}

impl ShallowCopy for IntEnumObj {
    fn shallow_copy(&self) -> Self {
        IntEnumObj { base: self.base.shallow_copy() }
    }
}

impl DefaultObject for StrEnumObj {
    fn default_object() -> Self {
        StrEnumObj { base: EnumObj::default_object() }
    }
}

impl ShallowCopy for StrEnumObj {
    fn shallow_copy(&self) -> Self {
        StrEnumObj { base: self.base.shallow_copy() }
    }
}

impl EnumStateObj {
    /// A state with no variants: empty `entries`, `indexes` and `attrs`.
    pub(crate) fn empty() -> Result<EnumStateObj, Error> {
        Ok(EnumStateObj {
            header: header_placeholder(),
            entries: Some(List::new(Vec::new())?.into_object()),
            indexes: Some(Dict::new(Vec::new())?.into_object()),
            attrs: Some(Dict::new(Vec::new())?.into_object()),
        })
    }
}

impl DefaultObject for EnumStateObj {
    /// Upstream's default constructor makes empty containers; should an
    /// allocation fail here, the fields stay NULL and readers report the
    /// state as malformed instead of aborting.
    fn default_object() -> Self {
        EnumStateObj::empty()
            .unwrap_or(EnumStateObj { header: header_placeholder(), entries: None, indexes: None, attrs: None })
    }
}

impl ShallowCopy for EnumStateObj {
    fn shallow_copy(&self) -> Self {
        EnumStateObj {
            header: header_placeholder(),
            entries: self.entries.clone(),
            indexes: self.indexes.clone(),
            attrs: self.attrs.clone(),
        }
    }
}
