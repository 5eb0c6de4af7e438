"""Reflection: ``TypeInfo`` / ``TypeField`` / ``TypeMethod`` for every type
the core knows, with tvm_ffi's attribute names, read from the core's type
records (``TVMFFIGetTypeInfo``).
"""

from __future__ import annotations

import json
from typing import Any, Optional

from .. import _ffi

__all__ = ["TypeInfo", "TypeField", "TypeMethod", "type_info_of_index", "type_info_of_class"]

_FIELD_WRITABLE = 1 << 0
_METHOD_STATIC = 1 << 2


def _parse_metadata(text: str) -> dict:
    if not text:
        return {}
    try:
        md = json.loads(text)
    except ValueError:
        return {}
    return md if isinstance(md, dict) else {}


class TypeField:
    """One reflected field: its name, layout, flags, metadata and schema."""

    def __init__(self, d: dict):
        self.name: str = d["name"]
        self.doc: Optional[str] = d["doc"] or None
        self.size: int = d["size"]
        self.alignment: int = d["alignment"]
        self.offset: int = d["offset"]
        self.field_static_type_index: int = d["field_static_type_index"]
        self.flags: int = d["flags"]
        self.frozen: bool = not (d["flags"] & _FIELD_WRITABLE)
        self.metadata: dict = _parse_metadata(d["metadata"])
        self.descriptor = d["descriptor"]
        self.getter = self.descriptor.__get__
        self.setter = self.descriptor.__set__

    @property
    def ty(self):
        """The field's declared type (``TypeSchema``), from the metadata's
        ``type_schema`` when the registrar recorded one, else from the
        field's static type index."""
        from .type_schema import TypeSchema

        raw = self.metadata.get("type_schema")
        if raw is not None:
            return TypeSchema._from_maybe_json(raw)
        return TypeSchema.from_type_index(self.field_static_type_index)

    def as_property(self, cls: type):
        return self.descriptor

    def __repr__(self) -> str:
        return f"TypeField(name={self.name!r}, offset={self.offset}, frozen={self.frozen})"


class TypeMethod:
    """One reflected method (a Function taking the object first unless static)."""

    def __init__(self, d: dict):
        self.name: str = d["name"]
        self.doc: Optional[str] = d["doc"] or None
        self.func = d["func"]
        self.flags: int = d["flags"]
        self.is_static: bool = bool(d["flags"] & _METHOD_STATIC)
        self.metadata: dict = _parse_metadata(d["metadata"])

    def as_callable(self, cls: type):
        func, name = self.func, self.name
        if self.is_static:
            def static_method(*args):
                return func(*args)

            static_method.__name__ = name
            return staticmethod(static_method)

        def method(self, *args):
            return func(self, *args)

        method.__name__ = name
        method.__qualname__ = f"{cls.__qualname__}.{name}"
        return method

    def __repr__(self) -> str:
        return f"TypeMethod(name={self.name!r}, is_static={self.is_static})"


class TypeInfo:
    """A type's key, index, ancestry, own fields and methods."""

    def __init__(self, type_index: int):
        d = _ffi.type_info(type_index)
        self.type_index: int = d["index"]
        self.type_key: str = d["key"]
        self.type_depth: int = d["depth"]
        self.type_ancestors: list = list(d["ancestors"])
        self.fields: list = [TypeField(f) for f in d["field_details"]]
        self.methods: list = [TypeMethod(m) for m in d["method_details"]]
        self.type_cls: Optional[type] = _ffi.registered_class(type_index)

    @property
    def parent_type_info(self) -> Optional["TypeInfo"]:
        return type_info_of_index(self.type_ancestors[-1]) if self.type_ancestors else None

    def __repr__(self) -> str:
        return f"TypeInfo(type_key={self.type_key!r}, type_index={self.type_index})"


_infos: dict = {}


def type_info_of_index(type_index: int) -> Optional[TypeInfo]:
    """The TypeInfo of a type index (None for an unknown index). Made afresh
    when the type gained fields or methods since it was last read."""
    try:
        info = TypeInfo(type_index)
    except ValueError:
        return None
    cached = _infos.get(type_index)
    if cached is not None and len(cached.fields) == len(info.fields) and len(cached.methods) == len(info.methods):
        cached.type_cls = info.type_cls
        return cached
    _infos[type_index] = info
    return info


def type_info_of_class(cls: type) -> Optional[TypeInfo]:
    index = getattr(cls, "__tether_type_index__", None)
    return None if index is None else type_info_of_index(index)


def _type_index_to_type_info(type_index: int) -> Optional[TypeInfo]:
    """tvm_ffi's name for ``type_info_of_index``."""
    return type_info_of_index(type_index)


def _type_cls_to_type_info(type_cls: type) -> Optional[TypeInfo]:
    """The TypeInfo of a registered wrapper class (None for other classes)."""
    info = getattr(type_cls, "__tvm_ffi_type_info__", None)
    return info if isinstance(info, TypeInfo) else type_info_of_class(type_cls)


def _lookup_or_register_type_info_from_type_key(type_key: str) -> TypeInfo:
    """The TypeInfo of a type the core knows by key; ValueError otherwise."""
    if not isinstance(type_key, str):
        raise TypeError(f"type key must be a str, got {type(type_key).__name__}")
    index = _ffi.type_key_to_index(type_key)
    if index is None:
        raise ValueError(f"Cannot find type index for type key {type_key!r}")
    return type_info_of_index(index)
