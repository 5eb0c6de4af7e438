"""The size metadata the core's type registry records for a type
(``TVMFFITypeInfo::metadata->total_size``), read through the C ABI: how
big an object of a natively registered type is, header and fields."""

from __future__ import annotations

import ctypes
import functools
from typing import Any, Optional

from .library import core_library

__all__ = ["native_total_size"]


class _TypeMetadata(ctypes.Structure):
    _fields_ = [
        ("doc_data", ctypes.c_void_p),
        ("doc_size", ctypes.c_size_t),
        ("creator", ctypes.c_void_p),
        ("total_size", ctypes.c_int32),
        ("structural_eq_hash_kind", ctypes.c_int32),
    ]


class _TypeInfoHead(ctypes.Structure):
    """The leading members of the core's ``TVMFFITypeInfo`` record."""

    _fields_ = [
        ("type_index", ctypes.c_int32),
        ("type_depth", ctypes.c_int32),
        ("type_key_data", ctypes.c_void_p),
        ("type_key_size", ctypes.c_size_t),
        ("type_ancestors", ctypes.c_void_p),
        ("type_key_hash", ctypes.c_uint64),
        ("num_fields", ctypes.c_int32),
        ("num_methods", ctypes.c_int32),
        ("fields", ctypes.c_void_p),
        ("methods", ctypes.c_void_p),
        ("metadata", ctypes.POINTER(_TypeMetadata)),
    ]


@functools.lru_cache(maxsize=None)
def _get_type_info() -> Any:
    getter = core_library().TVMFFIGetTypeInfo
    getter.restype = ctypes.POINTER(_TypeInfoHead)
    getter.argtypes = [ctypes.c_int32]
    return getter


def native_total_size(type_index: int) -> Optional[int]:
    """The total object size the registry records for ``type_index``, or
    None when the type has no size metadata (or no such type)."""
    record = _get_type_info()(type_index)
    if not record or not record.contents.metadata:
        return None
    return int(record.contents.metadata.contents.total_size)
