"""C++ views of registered object types, generated from reflection.

:func:`gen_abi_cpp` writes a self-contained C++17 header that declares, for
each selected object type (and every registered ancestor it has above the
static types), a ``struct <Name>Obj`` deriving from its parent's struct,
with one member per reflected field at the reflected offset, typed with the
TVM-FFI C++ class that has the field's layout (``int64_t``,
``::tvm::ffi::String``, ``::tvm::ffi::Arc<...>``, ``::tvm::ffi::Array<...>``
...).  Static assertions pin every size, alignment and offset, so C++ code
compiled against the header reads the objects in place and fails to build
if the layout ever drifts.  Type keys become namespaces (``a.b.C`` is
``::a::b::CObj``); names that are not C++ identifiers are hex-escaped.
Object types referenced by fields but not selected are declared as opaque
lookup-only structs.

The header only looks types up (``TVM_FFI_DECLARE_OBJECT_INFO_LOOKUP``): it
registers, allocates and compiles nothing.  A field whose reflected layout
does not match any C++ carrier is refused with ``ValueError`` rather than
guessed.
"""

from __future__ import annotations

import fnmatch
import json
import re
import typing
from collections.abc import Sequence
from itertools import groupby
from typing import Any, NamedTuple, Optional

from ..core import TypeField  # noqa: F401  (tvm_ffi.dataclasses.gen_abi_cpp's name)

from ..core import TypeInfo, TypeSchema, _lookup_or_register_type_info_from_type_key, _object_type_key_to_index
from ..core.type_metadata import native_total_size
from ..registry import get_registered_type_keys

__all__ = ["gen_abi_cpp"]

_OBJECT_INDEX = 64  # ffi.Object; indices from here on are objects
_DYNAMIC_INDEX_BEGIN = 128  # first index handed to types registered at run time
_OBJECT_HEADER_SIZE = 24
_OBJECT_HEADER_ALIGN = 8
_ESCAPE_PREFIX = "__ffi_escape_"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_FFI = "::tvm::ffi::"


class _Carrier(NamedTuple):
    """A C++ member type and the layout it occupies."""

    cpp_type: str
    size: int
    alignment: int


class _Builtin(NamedTuple):
    """A static object type: its C++ object class and owning value class."""

    object_type: str
    value_type: Optional[str]
    size: int
    alignment: int


_ANY = _Carrier(f"{_FFI}Any", 16, 8)
_ARC_OBJECT = _Carrier(f"{_FFI}Arc<{_FFI}Object>", 8, 8)

# Carriers of values whose schema names a scalar or a wrapper class.
_SCALAR_CARRIERS = {
    "int": _Carrier("int64_t", 8, 8),
    "float": _Carrier("double", 8, 8),
    "bool": _Carrier("bool", 1, 1),
    "ctypes.c_void_p": _Carrier("void*", 8, 8),
    "dtype": _Carrier("DLDataType", 4, 2),
    "DataType": _Carrier("DLDataType", 4, 2),
    "Device": _Carrier("DLDevice", 8, 4),
    "Any": _ANY,
    "str": _Carrier(f"{_FFI}String", 16, 8),
    "bytes": _Carrier(f"{_FFI}Bytes", 16, 8),
    "Callable": _Carrier(f"{_FFI}Function", 8, 8),
    "Tensor": _Carrier(f"{_FFI}Tensor", 8, 8),
}

# Carriers chosen by the static type index alone (fields without a schema).
_INDEX_CARRIERS = {
    -1: _ANY,
    1: _SCALAR_CARRIERS["int"],
    2: _SCALAR_CARRIERS["bool"],
    3: _SCALAR_CARRIERS["float"],
    4: _SCALAR_CARRIERS["ctypes.c_void_p"],
    5: _SCALAR_CARRIERS["DataType"],
    6: _SCALAR_CARRIERS["Device"],
}

_CONTAINER_TEMPLATES = {"Array": "Array", "List": "List", "Map": "Map", "Dict": "Dict", "tuple": "Tuple"}

_BUILTIN_SPECS = {
    "ffi.Object": _Builtin(f"{_FFI}Object", None, 8, 8),
    "ffi.String": _Builtin(f"{_FFI}detail::StringObj", f"{_FFI}String", 16, 8),
    "ffi.Bytes": _Builtin(f"{_FFI}detail::BytesObj", f"{_FFI}Bytes", 16, 8),
    "ffi.Error": _Builtin(f"{_FFI}ErrorObj", f"{_FFI}Error", 16, 8),
    "ffi.Function": _Builtin(f"{_FFI}FunctionObj", f"{_FFI}Function", 8, 8),
    "ffi.Shape": _Builtin(f"{_FFI}ShapeObj", f"{_FFI}Shape", 8, 8),
    "ffi.Tensor": _Builtin(f"{_FFI}TensorObj", f"{_FFI}Tensor", 8, 8),
    "ffi.Array": _Builtin(f"{_FFI}ArrayObj", f"{_FFI}Array<{_FFI}Any>", 8, 8),
    "ffi.Map": _Builtin(f"{_FFI}MapObj", f"{_FFI}Map<{_FFI}Any, {_FFI}Any>", 8, 8),
    "ffi.Module": _Builtin(f"{_FFI}ModuleObj", f"{_FFI}ObjectPtr<{_FFI}ModuleObj>", 8, 8),
    # OpaquePyObject has no owning C++ class to name, so it is left out.
    "ffi.List": _Builtin(f"{_FFI}ListObj", f"{_FFI}List<{_FFI}Any>", 8, 8),
    "ffi.Dict": _Builtin(f"{_FFI}DictObj", f"{_FFI}Dict<{_FFI}Any, {_FFI}Any>", 8, 8),
    "ffi.VisitInterrupt": _Builtin(
        f"{_FFI}VisitInterruptObj", f"{_FFI}ObjectPtr<{_FFI}VisitInterruptObj>", 8, 8
    ),
}

# Normalised schema origins whose native encoding must be exactly one of these.
_NATIVE_SCALAR_ENCODINGS = {
    "int": {"int"},
    "float": {"float"},
    "bool": {"bool"},
    "ctypes.c_void_p": {"void*"},
    "dtype": {"DataType"},
    "DataType": {"DataType"},
    "Device": {"Device"},
    "Any": {"Any"},
    "str": {"ffi.String", "ffi.SmallStr"},
    "bytes": {"ffi.Bytes", "ffi.SmallBytes"},
    "Callable": {"ffi.Function"},
    "Tensor": {"ffi.Tensor"},
}
_NATIVE_STRUCTURAL_ENCODINGS = {
    "Array": "ffi.Array",
    "List": "ffi.List",
    "Map": "ffi.Map",
    "Dict": "ffi.Dict",
    "tuple": "Tuple",
    "Optional": "Optional",
    "Union": "Variant",
}


# ---------------------------------------------------------------------------
# Names and literals


def _cpp_identifier(name: str) -> str:
    """``name`` if it is a usable C++ identifier, else a hex escape of its UTF-8."""
    if _IDENTIFIER.match(name) and not name.startswith(_ESCAPE_PREFIX):
        return name
    return _ESCAPE_PREFIX + name.encode("utf-8").hex()


def _cpp_string_literal(text: str) -> str:
    """A C++ string literal of ``text``'s UTF-8 bytes (non-ASCII as octal
    escapes, so the compiler's execution character set does not matter)."""
    out = []
    for byte in text.encode("utf-8"):
        if byte in (0x22, 0x5C):  # '"' and '\'
            out.append("\\" + chr(byte))
        elif 0x20 <= byte <= 0x7E:
            out.append(chr(byte))
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


class _CppName(NamedTuple):
    namespaces: tuple
    object_name: str

    @property
    def qualified(self) -> str:
        return "::" + "::".join(self.namespaces + (self.object_name,))


def _cpp_name(type_key: str) -> _CppName:
    *outer, last = type_key.split(".")
    return _CppName(tuple(_cpp_identifier(p) for p in outer), _cpp_identifier(last) + "Obj")


def _name_order(info: TypeInfo) -> tuple:
    name = _cpp_name(info.type_key)
    return (name.namespaces, name.object_name, info.type_key)


# ---------------------------------------------------------------------------
# Reflection facts


def _lineage(info: TypeInfo) -> list:
    """``info`` and its ancestors, root first."""
    chain = []
    node: Optional[TypeInfo] = info
    while node is not None:
        chain.append(node)
        node = node.parent_type_info
    return chain[::-1]


def _native_total_size(type_index: int) -> Optional[int]:
    """The total object size the registry records for ``type_index``, or
    None when the type has no size metadata."""
    return native_total_size(type_index)


def _has_type_metadata(info: TypeInfo) -> bool:
    known = getattr(info, "_has_type_metadata", None)
    if isinstance(known, bool):
        return known
    return _native_total_size(info.type_index) is not None


def _total_size(info: TypeInfo) -> int:
    known = getattr(info, "total_size", None)
    if isinstance(known, int):
        return known
    recorded = _native_total_size(info.type_index)
    if recorded is not None:
        return recorded
    parent = info.parent_type_info
    if parent is None:
        raise ValueError(f"Cannot find parent type of {info.type_key!r}")
    end = max([_total_size(parent)] + [f.offset + f.size for f in info.fields or ()])
    return (end + 7) & ~7


def _python_field_records(info: TypeInfo) -> Optional[dict]:
    """For a type defined in Python (``py_class``): its own field records by
    name, with their declared annotations.  None for native types."""
    cls = getattr(info, "type_cls", None)
    if cls is None:
        return None
    own = cls.__dict__.get("__tether_own_fields__")
    if own is None:
        return None
    # py_class gives each own field a class attribute that converts values to
    # the declared type; a native type's setters convert for themselves.
    for record in own:
        if getattr(cls.__dict__.get(record.name), "field_type", None) is None:
            return None
    return {record.name: record for record in own}


def _is_python_defined(info: TypeInfo) -> bool:
    return hasattr(info, "_decorator_args") or _python_field_records(info) is not None


def _python_field_schema(info: TypeInfo, name: str) -> Optional[TypeSchema]:
    """The declared type of a Python-defined field, as a schema."""
    cls = info.type_cls
    records = _python_field_records(info) or {}
    candidates = []
    if cls is not None:
        try:
            hints = typing.get_type_hints(cls, localns={cls.__name__: cls})
            if name in hints:
                candidates.append(hints[name])
        except Exception:  # noqa: BLE001 - unresolvable forward references
            pass
    record = records.get(name)
    if record is not None and getattr(record, "type", None) is not None:
        candidates.append(record.type)
    for annotation in candidates:
        try:
            return TypeSchema.from_annotation(annotation)
        except (TypeError, ValueError):
            continue
    return None


def _native_field_schema(field: Any) -> Optional[TypeSchema]:
    metadata = getattr(field, "metadata", None)
    if metadata is None:  # a bare field record: its schema, if it has one
        return getattr(field, "ty", None)
    raw = metadata.get("type_schema")
    if raw is None:
        return None
    return TypeSchema.from_json_str(raw) if isinstance(raw, str) else TypeSchema.from_json_obj(raw)


def _check_native_encoding(schema: TypeSchema, raw: dict) -> None:
    """Refuse a native schema whose normalised origin hides a different
    in-memory representation (``int`` must really be ``int``, ``str`` an
    ``ffi.String`` or ``ffi.SmallStr``, containers their canonical objects)."""
    origin, raw_origin = schema.origin, raw["type"]
    scalar = _NATIVE_SCALAR_ENCODINGS.get(origin)
    if scalar is not None:
        if raw_origin not in scalar:
            raise ValueError(
                f"native schema origin {raw_origin!r} normalizes to {origin!r} but does not "
                "have the canonical owning representation"
            )
        return
    structural = _NATIVE_STRUCTURAL_ENCODINGS.get(origin)
    if structural is not None:
        if raw_origin != structural:
            raise ValueError(
                f"native schema origin {raw_origin!r} normalizes to {origin!r} but is not "
                f"the canonical {structural!r} carrier"
            )
        raw_args = raw.get("args", ())
        if not isinstance(raw_args, list) or len(raw_args) != len(schema.args):
            raise ValueError(f"raw schema {raw!r} does not match normalized schema {schema!r}")
        for arg, raw_arg in zip(schema.args, raw_args):
            if not isinstance(raw_arg, dict) or not isinstance(raw_arg.get("type"), str):
                raise ValueError(f"invalid nested raw schema {raw_arg!r}")
            _check_native_encoding(arg, raw_arg)
        return
    if schema.origin_type_index >= _OBJECT_INDEX:
        expected = "ffi.Object" if origin == "Object" else origin
        if raw_origin != expected:
            raise ValueError(f"native object schema origin {raw_origin!r} does not match {expected!r}")
        return
    raise ValueError(f"unsupported native raw schema {raw!r}")


def _builtin_objects() -> dict:
    """Static object types with a C++ class, by type index."""
    table = {}
    for key, spec in _BUILTIN_SPECS.items():
        index = _object_type_key_to_index(key)
        if index is not None:
            table[index] = spec
    return table


def _selected_types(type_keys: Any) -> list:
    """The run-time types to declare: those matching ``type_keys`` and
    their run-time ancestors, parents before children."""
    registered = sorted({str(key) for key in get_registered_type_keys()})
    chosen: set = set()
    for pattern in [type_keys] if isinstance(type_keys, str) else type_keys:
        matches = [key for key in registered if fnmatch.fnmatchcase(key, pattern)]
        if not matches:
            raise ValueError(f"Type-key selector {pattern!r} did not match any registered type")
        objects = [
            key for key in matches
            if _lookup_or_register_type_info_from_type_key(key).type_index >= _OBJECT_INDEX
        ]
        if not objects:
            raise ValueError(f"Type-key selector {pattern!r} did not match any registered object type")
        chosen.update(objects)

    builtins = _builtin_objects()
    closure: dict = {}
    for key in sorted(chosen):
        info = _lookup_or_register_type_info_from_type_key(key)
        if info.type_index < _DYNAMIC_INDEX_BEGIN:
            if info.type_index not in builtins:
                raise ValueError(f"Static TVM-FFI type {info.type_key!r} is not supported")
            continue
        for node in _lineage(info):
            if node.type_index >= _DYNAMIC_INDEX_BEGIN:
                closure[node.type_index] = node
    return sorted(closure.values(), key=lambda info: (len(info.type_ancestors), info.type_key))


# ---------------------------------------------------------------------------
# Layout model


class _Member(NamedTuple):
    reflected_name: str
    member_name: str
    carrier: _Carrier
    offset: int


class _Struct(NamedTuple):
    info: TypeInfo
    name: _CppName
    base: str
    alignment: int
    total_size: int
    members: tuple


class _Lowering:
    """Chooses C++ carriers for fields, collecting the object types they name."""

    def __init__(self, declared: list) -> None:
        self.builtins = _builtin_objects()
        self.referenced: dict = {info.type_index: info for info in declared}

    # -- object references ---------------------------------------------------

    def _runtime_object(self, schema: TypeSchema) -> str:
        if schema.origin_type_index < _DYNAMIC_INDEX_BEGIN:
            raise ValueError(f"Schema {schema!r} is not a registered object type")
        info = _lookup_or_register_type_info_from_type_key(schema.origin)
        self.referenced[info.type_index] = info
        return _cpp_name(info.type_key).qualified

    def _is_plain_object(self, schema: TypeSchema) -> bool:
        return schema.origin_type_index == _OBJECT_INDEX or schema.origin == "Object"

    def owning_ref(self, schema: TypeSchema) -> _Carrier:
        """A non-null owning reference to an object of ``schema``'s type."""
        if self._is_plain_object(schema):
            return _ARC_OBJECT
        builtin = self.builtins.get(schema.origin_type_index)
        if builtin is None:
            return _Carrier(f"{_FFI}Arc<{self._runtime_object(schema)}>", 8, 8)
        if builtin.value_type is None:
            raise ValueError(f"Static TVM-FFI type {schema.origin!r} has no supported C++ value wrapper")
        if builtin.value_type.startswith(f"{_FFI}ObjectPtr<"):
            return _Carrier(f"{_FFI}Arc<{builtin.object_type}>", 8, 8)
        return _Carrier(builtin.value_type, builtin.size, builtin.alignment)

    def nullable_ref(self, schema: TypeSchema) -> _Carrier:
        """A nullable owning pointer to an object of ``schema``'s type."""
        if self._is_plain_object(schema):
            target = f"{_FFI}Object"
        elif schema.origin_type_index in self.builtins:
            target = self.builtins[schema.origin_type_index].object_type
        else:
            target = self._runtime_object(schema)
        return _Carrier(f"{_FFI}ObjectPtr<{target}>", 8, 8)

    # -- values ----------------------------------------------------------------

    def value(self, schema: TypeSchema, in_container: bool = False) -> _Carrier:
        """The carrier of a value of ``schema`` (``in_container``: as a
        container element, where nullable and object-only unions shrink to
        one pointer)."""
        origin, args = schema.origin, schema.args
        if origin in _SCALAR_CARRIERS:
            return _SCALAR_CARRIERS[origin]
        if origin == "Optional":
            if in_container and args[0].origin_type_index >= _OBJECT_INDEX:
                return self.nullable_ref(args[0])
            return _ANY
        if origin == "Union":
            if in_container and all(a.origin_type_index >= _OBJECT_INDEX for a in args):
                return _ARC_OBJECT
            return _ANY
        template = _CONTAINER_TEMPLATES.get(origin)
        if template is not None:
            inner = ", ".join(self.value(a, in_container=True).cpp_type for a in args)
            return _Carrier(f"{_FFI}{template}<{inner}>", 8, 8)
        if schema.origin_type_index >= _OBJECT_INDEX:
            return self.owning_ref(schema)
        raise ValueError(f"Unsupported TVM-FFI type schema {schema!r}")

    # -- fields ----------------------------------------------------------------

    def _native_optional(self, owner: TypeInfo, field: Any, schema: TypeSchema) -> _Carrier:
        inner = schema.args[0]
        layout = (field.size, field.alignment)
        is_object = inner.origin_type_index >= _OBJECT_INDEX
        if inner.origin in ("str", "bytes") and layout == (16, 8):
            return self.value(inner)
        if is_object and layout == (16, 8):
            return _Carrier(f"{_FFI}Optional<{self.owning_ref(inner).cpp_type}>", 16, 8)
        if is_object and layout == (8, 8):
            return self.nullable_ref(inner)
        raise ValueError(
            f"Ambiguous native Optional carrier for {owner.type_key}.{field.name} "
            f"with layout ({field.size}, {field.alignment})"
        )

    def field(self, owner: TypeInfo, field: Any, python_defined: bool) -> _Carrier:
        if python_defined:
            schema = _python_field_schema(owner, field.name)
        else:
            schema = self._checked_native_schema(owner, field)

        if schema is None:
            carrier = _INDEX_CARRIERS.get(field.field_static_type_index)
            if carrier is None and field.field_static_type_index >= _OBJECT_INDEX:
                carrier = _Carrier(f"{_FFI}ObjectPtr<{_FFI}Object>", 8, 8)
            if carrier is None:
                raise ValueError(
                    f"Cannot determine carrier for {owner.type_key}.{field.name}: "
                    f"missing type schema and static type index {field.field_static_type_index}"
                )
        elif schema.origin in ("Optional", "Union") and python_defined and (field.size, field.alignment) == (16, 8):
            carrier = _ANY  # Python-defined fields store these as Any...
        elif schema.origin == "Optional":  # ...or, when one pointer wide, as native fields do
            carrier = self._native_optional(owner, field, schema)
        elif schema.origin == "Union":
            if (field.size, field.alignment) == (8, 8) and all(
                a.origin_type_index >= _OBJECT_INDEX for a in schema.args
            ):
                carrier = _ARC_OBJECT
            else:
                raise ValueError(
                    f"Ambiguous native {schema.origin} carrier for {owner.type_key}.{field.name} "
                    f"with layout ({field.size}, {field.alignment})"
                )
        else:
            carrier = self.value(schema)

        builtin = None if schema is None else self.builtins.get(schema.origin_type_index)
        if builtin is not None and builtin.value_type == f"{_FFI}Error":
            # Error's C++ size depends on std::exception, a library detail:
            # take the reflected layout and let the static assertions check it.
            carrier = _Carrier(builtin.value_type, field.size, field.alignment)
        reported = (field.size, field.alignment)
        if reported != (carrier.size, carrier.alignment) and reported == (8, 8) and builtin is not None:
            # A one-pointer field of a static type whose value class is wider
            # is viewed through the object class instead.
            carrier = _Carrier(f"{_FFI}Arc<{builtin.object_type}>", 8, 8)
        if reported != (carrier.size, carrier.alignment):
            raise ValueError(
                f"Carrier {carrier.cpp_type} for {owner.type_key}.{field.name} has layout "
                f"{(carrier.size, carrier.alignment)}, but reflection reports {reported} at offset {field.offset}"
            )
        return carrier

    def _checked_native_schema(self, owner: TypeInfo, field: Any) -> Optional[TypeSchema]:
        schema = _native_field_schema(field)
        if schema is None:
            return None
        raw = field.metadata.get("type_schema")
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except json.JSONDecodeError as err:
                raise ValueError(f"Invalid raw type schema for {owner.type_key}.{field.name}: {raw!r}") from err
        if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
            raise ValueError(f"Missing raw type schema for native field {owner.type_key}.{field.name}")
        _check_native_encoding(schema, raw)
        return schema

    # -- types -----------------------------------------------------------------

    def struct(self, info: TypeInfo) -> _Struct:
        python_defined = _is_python_defined(info)
        if not python_defined and not _has_type_metadata(info):
            raise ValueError(f"Native type {info.type_key!r} does not expose fixed total-size metadata")
        parent = info.parent_type_info
        if parent is None:
            raise ValueError(f"Object type {info.type_key!r} does not expose its parent type")
        if parent.type_index >= _DYNAMIC_INDEX_BEGIN:
            base = _cpp_name(parent.type_key).qualified
        elif parent.type_index in self.builtins:
            base = self.builtins[parent.type_index].object_type
        else:
            raise ValueError(f"Parent type {parent.type_key!r} of {info.type_key!r} is not supported")
        members = tuple(
            _Member(f.name, _cpp_identifier(f.name), self.field(info, f, python_defined), f.offset)
            for f in sorted(info.fields or (), key=lambda f: f.offset)
        )
        alignment = max([_OBJECT_HEADER_ALIGN] + [f.alignment for node in _lineage(info) for f in node.fields or ()])
        return _Struct(info, _cpp_name(info.type_key), base, alignment, int(_total_size(info)), members)


class _Generator(_Lowering):
    """tvm_ffi's name for the lowering, with its per-field entry point."""

    def _lower_field(self, field: Any, owner: TypeInfo) -> _Carrier:
        return self.field(owner, field, _is_python_defined(owner))


# ---------------------------------------------------------------------------
# Text


def _in_namespaces(blocks: Sequence) -> list:
    """Lines wrapping each run of consecutive ``(namespaces, lines)`` blocks
    with the same namespaces in one set of namespace braces."""
    out: list = []
    for namespaces, run in groupby(blocks, key=lambda block: block[0]):
        if out:
            out.append("")
        body: list = []
        for _, lines in run:
            if body:
                body.append("")
            body += lines
        out += [f"namespace {ns} {{" for ns in namespaces]
        if namespaces:
            out.append("")
        out += body
        if namespaces:
            out.append("")
        out += [f"}}  // namespace {ns}" for ns in reversed(namespaces)]
    if out:
        out.append("")
    return out


_DIAGNOSTICS_PUSH = [
    "#if defined(__clang__) || defined(__GNUC__)",
    "#pragma GCC diagnostic push",
    '#pragma GCC diagnostic ignored "-Winvalid-offsetof"',
    "#elif defined(_MSC_VER)",
    "#pragma warning(push)",
    "#pragma warning(disable : 4749)",
    "#endif",
    "",
]
_DIAGNOSTICS_POP = [
    "#if defined(__clang__) || defined(__GNUC__)",
    "#pragma GCC diagnostic pop",
    "#elif defined(_MSC_VER)",
    "#pragma warning(pop)",
    "#endif",
    "",
]


def _lookup_line(info: TypeInfo) -> str:
    return f"  TVM_FFI_DECLARE_OBJECT_INFO_LOOKUP({_cpp_string_literal(info.type_key)}, {len(info.type_ancestors)});"


def _struct_lines(s: _Struct) -> list:
    name = s.name.object_name
    lines = [f"struct alignas({s.alignment}) {name} : public {s.base} {{", _lookup_line(s.info)]
    if s.members:
        lines.append("")
    for m in s.members:
        note = "" if m.member_name == m.reflected_name else f", reflected name={m.reflected_name!r}"
        lines.append(
            f"  {m.carrier.cpp_type} {m.member_name};  // offset={m.offset}, "
            f"size={m.carrier.size}, align={m.carrier.alignment}{note}"
        )
    lines += [
        "};",
        "",
        f"static_assert(sizeof({name}) == {s.total_size});",
        f"static_assert(alignof({name}) == {s.alignment});",
    ]
    for m in s.members:
        lines += [
            f"static_assert(sizeof(decltype({name}::{m.member_name})) == {m.carrier.size});",
            f"static_assert(alignof(decltype({name}::{m.member_name})) == {m.carrier.alignment});",
            f"static_assert(offsetof({name}, {m.member_name}) == {m.offset});",
        ]
    return lines


def _render(declared: list) -> str:
    lowering = _Lowering(declared)
    structs = [lowering.struct(info) for info in declared]
    referenced = sorted(lowering.referenced.values(), key=_name_order)
    declared_indices = {s.info.type_index for s in structs}

    lines = ["#pragma once", "", "#include <tvm/ffi/tvm_ffi.h>", ""]
    lines += _in_namespaces([(_cpp_name(i.type_key).namespaces, [f"struct {_cpp_name(i.type_key).object_name};"])
                             for i in referenced])
    for info in referenced:
        qualified = _cpp_name(info.type_key).qualified
        lines += ["template <>", f"inline constexpr bool tvm::ffi::is_object_subclass_v<{qualified}> = true;"]
    lines.append("")
    lines += _in_namespaces([
        (_cpp_name(i.type_key).namespaces,
         [f"struct {_cpp_name(i.type_key).object_name} : public {_FFI}Object {{", _lookup_line(i), "};"])
        for i in referenced if i.type_index not in declared_indices
    ])
    lines += [
        f"static_assert(sizeof({_FFI}Object) == {_OBJECT_HEADER_SIZE});",
        f"static_assert(alignof({_FFI}Object) == {_OBJECT_HEADER_ALIGN});",
        "",
    ]
    lines += _DIAGNOSTICS_PUSH
    lines += _in_namespaces([(s.name.namespaces, _struct_lines(s)) for s in structs])
    lines += _DIAGNOSTICS_POP
    return "\n".join(lines)


def gen_abi_cpp(type_keys: Any) -> str:
    """A C++ header with layout-checked views of registered object types.

    Parameters
    ----------
    type_keys
        A registered type key, a shell-style pattern (``"my.pkg.*"``), or a
        sequence of keys and patterns.  Each must match at least one
        registered object type.

    Returns
    -------
    str
        The header's source text (deterministic, C++17).  It only looks the
        types up; it registers, compiles and allocates nothing.

    Raises
    ------
    ValueError
        When a selector matches nothing, a type is not supported, or a
        field's reflected layout fits no C++ carrier.
    """
    return _render(_selected_types(type_keys))
