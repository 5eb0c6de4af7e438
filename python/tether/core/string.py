"""Strings and bytes: ``String``/``Bytes`` are ``str``/``bytes`` that keep
the FFI object they came from, so passing one back passes that object
without a copy.
"""

from __future__ import annotations

from .. import _ffi
from .object import Object, _register_class

__all__ = ["PyNativeObject", "String", "Bytes"]


class PyNativeObject:
    """Base of Python-native values that keep the FFI object they came from
    (``String``, ``Bytes``) in ``_tvm_ffi_cached_object``."""

    __slots__ = ()

    def __init_cached_object_by_constructor__(self, fconstructor, *args) -> None:
        self._tvm_ffi_cached_object = fconstructor(*args)


class String(str, PyNativeObject):
    """A ``str`` that keeps its ``ffi.String`` object: passing it to the FFI
    passes that object, without a copy. ``convert`` returns these."""

    __slots__ = ("_tvm_ffi_cached_object",)

    def __new__(cls, value: str = "") -> "String":
        val = str.__new__(cls, value)
        val._tvm_ffi_cached_object = None
        return val

    def __reduce_ex__(self, protocol):
        return (str, (str(self),))

    @classmethod
    def __from_tvm_ffi_object__(cls, obj) -> "String":
        val = str.__new__(cls, _ffi.string_object_bytes(obj).decode("utf-8"))
        val._tvm_ffi_cached_object = obj
        return val


class Bytes(bytes, PyNativeObject):
    """A ``bytes`` that keeps its ``ffi.Bytes`` object (see ``String``)."""

    def __new__(cls, value: bytes = b"") -> "Bytes":
        val = bytes.__new__(cls, value)
        val._tvm_ffi_cached_object = None
        return val

    def __reduce_ex__(self, protocol):
        return (bytes, (bytes(self),))

    @classmethod
    def __from_tvm_ffi_object__(cls, obj) -> "Bytes":
        val = bytes.__new__(cls, _ffi.string_object_bytes(obj))
        val._tvm_ffi_cached_object = obj
        return val


class _StringObj(Object):
    """The wrapper of an ``ffi.String`` object (held by ``String``)."""

    __slots__ = ()


class _BytesObj(Object):
    """The wrapper of an ``ffi.Bytes`` object (held by ``Bytes``)."""

    __slots__ = ()


for _index_, _cls in ((65, _StringObj), (66, _BytesObj)):
    _register_class(_index_, _cls)
del _index_, _cls

_ffi.register_string_classes(String, Bytes)
