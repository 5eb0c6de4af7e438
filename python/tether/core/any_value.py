"""``CAny``: one owned FFI value, converted from Python once and kept (as
tvm_ffi's ``core.CAny``); ``_to_py_class_value`` gives it back."""

from __future__ import annotations

import ctypes
from typing import Any

from .. import _ffi
from .device import Device
from .function import convert
from .object import Object, OpaquePyObject

__all__ = ["CAny"]

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_SMALL_MAX = 7  # bytes a string or bytes value keeps inline in the value itself


class CAny:
    """An owned FFI value: ``CAny(value)`` converts ``value`` as a call
    argument would; ``type_index`` is the index of what it became."""

    __slots__ = ("_value",)

    def __init__(self, value: Any = None) -> None:
        self._value = convert(value)

    @classmethod
    def _from_converted(cls, value: Any) -> "CAny":
        """A CAny holding ``value``, already in its FFI form."""
        out = cls.__new__(cls)
        out._value = value
        return out

    @property
    def type_index(self) -> int:
        v = self._value
        if v is None:
            return 0
        if isinstance(v, bool):
            return 2
        if isinstance(v, int):
            return 1 if _INT64_MIN <= v <= _INT64_MAX else 78
        if isinstance(v, float):
            return 3
        if isinstance(v, Object):
            return _ffi.type_index_of(v)
        if isinstance(v, tuple) and isinstance(getattr(v, "_tvm_ffi_cached_object", None), Object):
            return _ffi.type_index_of(v._tvm_ffi_cached_object)  # a Shape crosses as its object
        if isinstance(v, str):
            return 11 if len(v.encode("utf-8")) <= _SMALL_MAX else 65
        if isinstance(v, (bytes, bytearray)):
            return 12 if len(v) <= _SMALL_MAX else 66
        if isinstance(v, Device):
            return 6
        if hasattr(v, "type_code") and hasattr(v, "lanes"):
            return 5
        if isinstance(v, ctypes.c_void_p):
            return 4
        return 74  # an opaque Python object

    def __repr__(self) -> str:
        # As tvm_ffi: the payload for scalars, the type index otherwise.
        index = self.type_index
        if index == 0:
            return "CAny(None)"
        if index in (1, 2, 3):
            return f"CAny({('int', 'bool', 'float')[index - 1]}={self._value!r})"
        if index >= 64:
            return f"CAny(object, type_index={index})"
        return f"CAny(type_index={index})"


def _to_py_class_value(value: CAny) -> Any:
    """The Python value a ``CAny`` holds."""
    if not isinstance(value, CAny):
        raise TypeError(f"_to_py_class_value needs a CAny, got {type(value).__name__}")
    v = value._value
    # As a call returns them: strings and bytes as the str/bytes subclasses
    # that keep their FFI object.
    if type(v) is str or type(v) is bytes:
        return convert(v)
    # As a call returns them: an opaque object as the object it carries.
    if isinstance(v, OpaquePyObject):
        return v.pyobject()
    # Devices come back as the device class in force now (_set_class_device).
    if isinstance(v, Device):
        from . import device

        if type(v) is not device._CLASS_DEVICE:
            return device._create_device_from_tuple(device._CLASS_DEVICE, v.dlpack_device_type(), v.index)
    return v
