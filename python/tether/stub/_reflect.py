"""Reflection facts ``tether.core``'s classes do not carry.

A type's registered native size (``TVMFFITypeMetadata.total_size``) is read
straight from the core's C ABI records, through the core library the
process already runs; and the ``origin_type_index`` a ``TypeSchema`` has
when its origin names no known type.
"""

from __future__ import annotations

import ctypes
import functools
import os
from typing import Any, Optional

from ..core import type_schema as _type_schema

#: ``TypeSchema.origin_type_index`` of an origin that names no known type.
ORIGIN_TYPE_INDEX_UNKNOWN: int = getattr(_type_schema, "_UNKNOWN", -3)


@functools.lru_cache(maxsize=None)
def _type_info_getter() -> Optional[Any]:
    """``TVMFFIGetTypeInfo`` of the core library this process already runs, or ``None``.

    The library is only looked up among the loaded ones (never loaded a
    second time), and not at all where that cannot be asked (Windows).
    """
    mode = getattr(os, "RTLD_NOLOAD", None)
    if mode is None or ctypes.sizeof(ctypes.c_void_p) != 8:
        return None
    try:
        from ..libinfo import find_libtvm_ffi

        fn = ctypes.CDLL(find_libtvm_ffi(), mode=mode | getattr(os, "RTLD_LAZY", 0)).TVMFFIGetTypeInfo
    except (OSError, AttributeError, RuntimeError, ImportError):
        return None
    fn.restype = ctypes.c_void_p
    fn.argtypes = [ctypes.c_int32]
    return fn


# Byte offsets inside the C ABI records (64-bit): in `TVMFFITypeInfo`, the
# type index, the type key (data pointer, then size) and the metadata
# pointer; in `TVMFFITypeMetadata`, the total size.
_TYPE_INFO_INDEX_OFFSET = 0
_TYPE_INFO_KEY_OFFSET = 8
_TYPE_INFO_METADATA_OFFSET = 64
_METADATA_TOTAL_SIZE_OFFSET = 24


def native_total_size(type_index: int, type_key: str) -> Optional[int]:
    """The ``sizeof`` the type registered in its own metadata; ``None`` without
    metadata, or when the record read is not the one of ``type_key``."""
    getter = _type_info_getter()
    info = getter(type_index) if getter is not None else None
    if not info:
        return None
    index = ctypes.c_int32.from_address(info + _TYPE_INFO_INDEX_OFFSET).value
    key_data = ctypes.c_void_p.from_address(info + _TYPE_INFO_KEY_OFFSET).value
    key_size = ctypes.c_size_t.from_address(info + _TYPE_INFO_KEY_OFFSET + 8).value
    if index != type_index or not key_data or ctypes.string_at(key_data, key_size) != type_key.encode():
        return None
    metadata = ctypes.c_void_p.from_address(info + _TYPE_INFO_METADATA_OFFSET).value
    if not metadata:
        return None
    return ctypes.c_int32.from_address(metadata + _METADATA_TOTAL_SIZE_OFFSET).value
