"""Registering wrapper classes by type index, as tvm_ffi's core does for
``register_object``: the class becomes the one objects of that index (and,
unless they have their own, of its descendants) are wrapped in."""

from __future__ import annotations

from .. import _ffi
from .device import Device
from .dtype import DataType
from .object import _register_class
from .string import Bytes, String
from .type_info import TypeInfo, type_info_of_index

__all__ = []


def _register_object_by_index(type_index: int, type_cls: type) -> TypeInfo:
    """Make ``type_cls`` the wrapper class of ``type_index``; its TypeInfo."""
    info = type_info_of_index(type_index)
    if info is None:
        raise ValueError(f"no type with index {type_index}")
    _register_class(type_index, type_cls)
    info.type_cls = type_cls
    return info


def _set_type_cls(type_info: TypeInfo, type_cls: type) -> None:
    """Record ``type_cls`` as the class of ``type_info``'s type."""
    _register_class(type_info.type_index, type_cls)
    type_info.type_cls = type_cls


def _print_debug_info() -> None:
    """Print every registered type with its index and wrapper class."""
    from .builtin_table import _get_global

    for key in _get_global("ffi.GetRegisteredTypeKeys"):
        index = _ffi.type_key_to_index(str(key))
        if index is None:
            continue
        cls = _ffi.registered_class(index)
        print(f"{index:5d} {key:<40} {cls.__qualname__ if cls is not None else '-'}")


def _attach_value_class_infos() -> None:
    """The value classes that are no wrappers (``DataType``, ``Device``, and
    ``String``/``Bytes``, which are str/bytes) carry their type's TypeInfo as
    tvm_ffi's do, each a record of its own naming the class."""
    for cls, key in ((DataType, "DataType"), (Device, "Device"), (String, "ffi.String"), (Bytes, "ffi.Bytes")):
        index = _ffi.type_key_to_index(key)
        if index is None:
            continue
        info = TypeInfo(index)
        info.type_cls = cls
        cls.__tvm_ffi_type_info__ = info


_attach_value_class_infos()
