"""Rust naming and layout tables of the Rust target.

Which Rust type mirrors each schema origin (paths into the ``tvm_ffi`` crate
get a ``use``), the scalar widths a directive may name, the sizes of the
native cells a field can be, and how identifiers are spelled.
"""

from __future__ import annotations

#: One-line directives the Rust target reads.
RUST_DIRECTIVE_KINDS = frozenset({"import-object", "field", "nullable", "enum", "opaque", "upcast", "custom-new"})

#: Schema origin or builtin type key -> Rust type; a ``::`` path is imported, a bare name is not.
#: Containers are the crate's own (``Array``/``List``/``Map``, not ``Vec``/``HashMap``); an
#: untyped object value is the ``ObjectRef`` handle.
RUST_TY_MAP_DEFAULTS = {
    "int": "i64",
    "float": "f64",
    "bool": "bool",
    "None": "()",
    "str": "tvm_ffi::String",
    "bytes": "tvm_ffi::Bytes",
    "Any": "tvm_ffi::Any",
    "Callable": "tvm_ffi::Function",
    "Array": "tvm_ffi::Array",
    "List": "tvm_ffi::List",
    "Map": "tvm_ffi::Map",
    "Object": "tvm_ffi::object::ObjectRef",
    "Tensor": "tvm_ffi::Tensor",
    "Shape": "tvm_ffi::Shape",
    "Device": "tvm_ffi::DLDevice",
    "dtype": "tvm_ffi::DLDataType",
    "DataType": "tvm_ffi::DLDataType",
    "ffi.String": "tvm_ffi::String",
    "ffi.Bytes": "tvm_ffi::Bytes",
    "ffi.BigInt": "tvm_ffi::BigInt",
    "ffi.Module": "tvm_ffi::Module",
    "ffi.Error": "tvm_ffi::Error",
    "ffi.Object": "tvm_ffi::object::ObjectRef",
    "ffi.Tensor": "tvm_ffi::Tensor",
    "ffi.Shape": "tvm_ffi::Shape",
    "ffi.Function": "tvm_ffi::Function",
    "ffi.reflection.AccessPath": "tvm_ffi::reflection::AccessPath",
    "ffi.reflection.AccessStep": "tvm_ffi::reflection::AccessStep",
}

#: Origins the crate has no type for: such a field is read as ``tvm_ffi::Any``.
RUST_UNSUPPORTED_ORIGINS = frozenset({"Dict", "Union", "tuple"})

#: ``(origin, reflected size)`` -> the scalar that mirrors it (schemas do not record widths).
RUST_SCALAR_BY_SIZE = {
    ("int", 1): "i8",
    ("int", 2): "i16",
    ("int", 4): "i32",
    ("int", 8): "i64",
    ("float", 4): "f32",
    ("float", 8): "f64",
}

#: Byte width of each scalar a ``field``/``enum`` directive may name; checked against the field's size.
RUST_SCALAR_WIDTHS = {
    "i8": 1, "u8": 1, "bool": 1,
    "i16": 2, "u16": 2,
    "i32": 4, "u32": 4, "f32": 4,
    "i64": 8, "u64": 8, "f64": 8,
}

#: Allocator parameters taken as exactly their type (a literal only infers its own type);
#: any other parameter of the wrapper's ``new`` is ``impl Into<T>``.
RUST_EXACT_PARAMS = frozenset(
    {"bool", "i8", "i16", "i32", "i64", "isize", "u8", "u16", "u32", "u64", "usize", "f32", "f64"}
)

#: Size of an object reference; only such a field may be ``nullable``.
RUST_POINTER_SIZE = 8

#: ``Optional<T>`` in C++ is a 16-byte ``TVMFFIAny`` cell, or a nullable pointer for an object payload.
RUST_OPTIONAL_PATH = "tvm_ffi::Optional"
RUST_OPTIONAL_FIELD_SIZE = 16
RUST_OBJECT_OPTIONAL_FIELD_SIZE = 8

#: ``Optional`` payloads stored as the 16-byte cell (a nested ``Optional`` too).
RUST_ANY_BACKED_OPTIONAL_PAYLOADS = frozenset({"int", "float", "bool", "Device", "dtype", "DataType", "str", "bytes"})

#: Registry prefix -> crate path: builtin ``ffi.*`` types live at the crate root.
RUST_MOD_MAP = {
    "ffi": "tvm_ffi",
}

#: Root of the object hierarchy.
RUST_ROOT_TYPE_KEY = "ffi.Object"

#: Rust keywords (strict and reserved); a field of that name is a raw identifier ``r#name``,
#: or ``name_`` for the four that cannot be raw.
RUST_KEYWORDS = frozenset(
    "as async await break const continue crate dyn else enum extern false fn for if impl in "
    "let loop match mod move mut pub ref return self Self static struct super trait true type "
    "unsafe use where while abstract become box do final gen macro override priv try typeof "
    "unsized virtual yield".split()
)
RUST_NOT_RAW_IDENTIFIERS = frozenset({"self", "Self", "super", "crate"})

#: Member names the generated structs use themselves (``base``: the parent of an object
#: struct, the ``ObjectArc`` of a wrapper); a reflected field so named is spelled ``base_``.
RUST_RESERVED_MEMBERS = frozenset({"base"})

#: Line width past which an allocator signature or call is wrapped (rustfmt's default).
RUST_MAX_WIDTH = 100
