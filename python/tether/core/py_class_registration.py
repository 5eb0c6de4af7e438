"""Upstream's two-step registration of Python-defined classes:
``_register_py_class(parent_info, type_key, cls)`` allocates the type
(index, ancestry) and returns its TypeInfo with ``fields=None``;
``TypeInfo._register_fields(fields)`` later lays the fields out in
TVM-FFI's native layout (after the parent's reflected fields, C++'s
rules: a bool is one byte, a derived class reuses its base's tail
padding) and hands them to the core (``tether.dataclass.
RegisterPyClassFields``), which checks the layout and adds the
constructor, allocator and shallow copy. ``_rollback_py_class`` forgets a
registration whose fields could not be resolved, so the key can be used
again (the core's index is kept and handed back to the retry).
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from .. import _ffi
from .builtin_table import _builtin
from .object import _register_class
from .sentinels import MISSING
from .type_schema import _ORIGIN_TO_INDEX
from .type_info import TypeField, TypeInfo, _forget_type_info, _install_field_registrar, _remember_type_info

__all__ = []

_HEADER_SIZE = 24
_OBJECT_INDEX = 64
# (size, alignment, field_static_type_index) by TypeSchema origin; every
# other origin is an object reference.
_NATIVE_LAYOUT = {
    "int": (8, 8, 1), "float": (8, 8, 3), "bool": (1, 1, 2), "ctypes.c_void_p": (8, 8, 4),
    "dtype": (4, 2, 5), "Device": (8, 4, 6), "Any": (16, 8, -1),
    # Strings and bytes may be small (inline) values: stored as an Any.
    "str": (16, 8, -1), "bytes": (16, 8, -1), "Optional": (16, 8, -1), "Union": (16, 8, -1),
}
_OBJECT_LAYOUT = (8, 8, _OBJECT_INDEX)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

_FLAG_WRITABLE = 1 << 0
_FLAG_HAS_DEFAULT = 1 << 1
_FLAG_SEQ_IGNORE = 1 << 3
_FLAG_SEQ_DEF_PATTERN = 1 << 4
_FLAG_DEFAULT_FROM_FACTORY = 1 << 5
_FLAG_REPR_OFF = 1 << 6
_FLAG_COMPARE_OFF = 1 << 7
_FLAG_HASH_OFF = 1 << 8
_FLAG_INIT_OFF = 1 << 9
_FLAG_KW_ONLY = 1 << 10
_FLAG_SEQ_DEF_SIMPLE = 1 << 12

# Live registrations by key: a second registration of a key is refused
# until the first is rolled back.
_BY_KEY: Dict[str, TypeInfo] = {}


def _is_missing(value: Any) -> bool:
    """Whether ``value`` is "no value": the core's MISSING (the one
    sentinel ``tether.dataclasses.MISSING`` also names)."""
    return value is MISSING


def _register_py_class(parent_type_info: TypeInfo, type_key: str, type_cls: type) -> TypeInfo:
    """Allocate a type for ``type_cls`` under ``parent_type_info``; its
    TypeInfo has ``fields=None`` until ``_register_fields``. ValueError
    for a key already registered."""
    if not isinstance(type_key, str):
        raise TypeError(f"type key must be a str, got {type(type_key).__name__}")
    if not isinstance(parent_type_info, TypeInfo):
        raise TypeError(f"parent_type_info must be a TypeInfo, got {type(parent_type_info).__name__}")
    if type_key in _BY_KEY:
        raise ValueError(f"Type key '{type_key}' is already registered")
    index = _ffi.call(_builtin("tether.dataclass.AllocPyClassType"), type_key, parent_type_info.type_index)
    info = TypeInfo._pending(index, type_cls, parent_type_info)
    if type_cls is not None:
        _register_class(index, type_cls)
    _BY_KEY[type_key] = info
    _remember_type_info(info)
    return info


def _rollback_py_class(type_info: TypeInfo) -> None:
    """Forget a ``_register_py_class`` whose fields were never registered
    (the key may be registered again; the core keeps the index for it)."""
    if _BY_KEY.get(type_info.type_key) is type_info:
        del _BY_KEY[type_info.type_key]
    _forget_type_info(type_info)


def _subclass_offset(info: Optional[TypeInfo]) -> int:
    """Where a direct subclass's first field may start: the unpadded end of
    every ancestor's fields (Itanium C++ ABI, tail padding reused)."""
    end = _HEADER_SIZE
    while info is not None:
        for f in info.fields or ():
            end = max(end, f.offset + f.size)
        info = info.parent_type_info
    return end


# Layout by the decorator's field kinds, for annotations no TypeSchema
# describes yet (a class still waiting for its own registration, markers).
_KIND_SCHEMA_ORIGIN = {"int": "int", "float": "float", "bool": "bool", "str": "str", "any": "Any"}


def _schema_of(py_field: Any) -> Any:
    """The field's TypeSchema: the one it was given, or its annotation's
    (the decorator's field types keep the annotation)."""
    from .type_schema import TypeSchema

    ty = py_field._ty_schema
    if isinstance(ty, TypeSchema):
        return ty
    annotation = getattr(ty, "schema", None) if ty is not None else py_field.type
    try:
        return TypeSchema.from_annotation(annotation)
    except (TypeError, ValueError):
        kind = getattr(ty, "kind", "any")
        if kind == "object":
            return TypeSchema("Object", origin_type_index=_OBJECT_INDEX)
        return TypeSchema(_KIND_SCHEMA_ORIGIN.get(kind, "Any"))


def _flags(py_field: Any) -> int:
    flags = _FLAG_WRITABLE
    if not _is_missing(py_field.default) or not _is_missing(py_field.default_factory):
        flags |= _FLAG_HAS_DEFAULT
    if not _is_missing(py_field.default_factory):
        flags |= _FLAG_DEFAULT_FROM_FACTORY
    if not py_field.init:
        flags |= _FLAG_INIT_OFF
    if not py_field.repr:
        flags |= _FLAG_REPR_OFF
    if not py_field.hash:
        flags |= _FLAG_HASH_OFF
    if not py_field.compare:
        flags |= _FLAG_COMPARE_OFF
    if py_field.kw_only:
        flags |= _FLAG_KW_ONLY
    structural = getattr(py_field, "structural_eq", None)
    if structural == "ignore":
        flags |= _FLAG_SEQ_IGNORE
    elif structural in ("def-pattern", "def"):
        flags |= _FLAG_SEQ_DEF_PATTERN
    elif structural == "def-simple":
        flags |= _FLAG_SEQ_DEF_SIMPLE
    return flags


def _converter_of(py_field: Any, schema: Any) -> Any:
    """The FFI Function each write goes through: the schema's converter
    (tvm_ffi's acceptance rules; its message, as a TypeError, on refusal),
    or the decorator's own field type when no schema describes the field."""
    from .function import convert
    from .type_converter import _ConvertError

    if getattr(schema, "origin", None) == "Any":
        # Every FFI value is an Any: the core stores it without a call back.
        return None
    if not isinstance(py_field._ty_schema, type(schema)) and getattr(py_field, "_field_type", None) is not None:
        return convert(py_field._field_type.convert)
    if hasattr(py_field._ty_schema, "kind"):  # a field type handed over as the schema
        return convert(py_field._ty_schema.convert)
    built: list = []
    # Exact types the schema's converter returns unchanged (the decorator's
    # field type knows them): a write of one skips the converter. Ints only
    # within int64, which the converter's range check would refuse.
    field_type = getattr(py_field, "_field_type", None)
    passthrough = frozenset(getattr(field_type, "identity_types", ()))

    def convert_value(value: Any) -> Any:
        kind = type(value)
        if kind in passthrough and (kind is not int or _INT64_MIN <= value <= _INT64_MAX):
            return value
        # Built on first use: the object types the schema names may still
        # be waiting for their registration when the field is registered.
        if not built:
            built.append(schema._converter)
        try:
            return built[0].convert(value)
        except _ConvertError as err:
            raise TypeError(err.message) from None
        except OverflowError:
            # A value out of the field type's range is a refused value (a
            # TypeError naming both), not an arithmetic failure.
            raise TypeError(f"expected {schema!r}, got an int too large to convert to {schema!r}") from None

    return convert(convert_value)


def _native_acceptance(py_field: Any, schema: Any) -> tuple:
    """``(type_index, accepts_none)``: the object values the field's schema
    converter returns unchanged, which the core then stores without calling
    it -- instances of an object type (``Object`` or a reflected class),
    and None when the field is Optional. ``(-1, False)`` when the field
    has no such rule (its own field type converts, or the type is a builtin
    with rules of its own, a container with element types, a union)."""
    none = (-1, False)
    if not isinstance(py_field._ty_schema, type(schema)) and getattr(py_field, "_field_type", None) is not None:
        return none
    if hasattr(py_field._ty_schema, "kind"):
        return none
    optional = getattr(schema, "origin", None) == "Optional"
    inner = schema.args[0] if optional else schema
    origin = getattr(inner, "origin", None)
    index = getattr(inner, "origin_type_index", -1)
    if inner.args or index < _OBJECT_INDEX:
        return none
    # Builtin value types (str, Shape, ...) convert even their own instances
    # (a String may come back as a small string): they keep the call.
    if origin != "Object" and (origin in _ORIGIN_TO_INDEX or str(origin).startswith("ffi.")):
        return none
    return index, optional


def _register_fields(type_info: TypeInfo, fields: List[Any], structure_kind: Optional[int] = None) -> list:
    """Lay out and register ``fields`` on the allocated type; the TypeFields."""
    from .function import convert

    offset = _subclass_offset(type_info.parent_type_info)
    records = []
    layouts = []
    for py_field in fields:
        schema = _schema_of(py_field)
        size, alignment, static_index = _NATIVE_LAYOUT.get(schema.origin, _OBJECT_LAYOUT)
        offset = (offset + alignment - 1) & ~(alignment - 1)
        if not _is_missing(py_field.default_factory):
            default = convert(py_field.default_factory)
        elif not _is_missing(py_field.default):
            default = py_field.default
        else:
            default = None
        metadata = json.dumps({"type_schema": schema.to_json()})
        converter = _converter_of(py_field, schema)
        accept_index, accept_none = _native_acceptance(py_field, schema) if converter is not None else (-1, False)
        records.append([py_field.name, py_field.doc, metadata, _flags(py_field), static_index, size, alignment,
                        offset, converter, default, accept_index, accept_none])
        layouts.append((py_field, schema, offset, size, alignment, static_index))
        offset += size
    total_size = max((offset + 7) & ~7, _HEADER_SIZE)
    _ffi.call(_builtin("tether.dataclass.RegisterPyClassFields"), type_info.type_index, records, total_size,
              int(structure_kind or 0))
    details = {d["name"]: d for d in _ffi.type_info(type_info.type_index)["field_details"]}
    out = []
    for py_field, schema, field_offset, size, alignment, static_index in layouts:
        tf = TypeField(details[py_field.name])
        tf._declare(py_field, schema)
        out.append(tf)
    type_info._py_total_size = total_size
    return out


def _record_class_fields(type_info: TypeInfo, fields: List[Any]) -> None:
    """Give the class its Field records, inherited first: the generated
    ``__init__``/``__repr__``/comparisons read them."""
    cls = type_info.type_cls
    if cls is None:
        return
    parent = type_info.parent_type_info
    parent_cls = parent.type_cls if parent is not None else None
    inherited: tuple = ()
    if parent_cls is not None:
        if "__tether_fields__" not in parent_cls.__dict__ and parent.type_index != _OBJECT_INDEX:
            if _native_fields is None:
                raise RuntimeError("tether.dataclasses is not loaded: import tether first")
            parent_cls.__tether_fields__ = tuple(_native_fields(parent_cls))
        inherited = tuple(getattr(parent_cls, "__tether_fields__", ()))
    cls.__tether_fields__ = inherited + tuple(fields)
    cls.__tether_own_fields__ = tuple(fields)


# The Field records of a natively registered parent class, from the
# dataclasses layer (c_class), installed when it loads.
_native_fields: Optional[Any] = None


def _install_native_fields(find: Any) -> None:
    global _native_fields  # noqa: PLW0603 - installed once, at import
    _native_fields = find


def _register_and_record_fields(type_info: TypeInfo, fields: List[Any], structure_kind: Optional[int]) -> None:
    type_info.fields = _register_fields(type_info, fields, structure_kind)
    _record_class_fields(type_info, fields)


_install_field_registrar(_register_and_record_fields)
