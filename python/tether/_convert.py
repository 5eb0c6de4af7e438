"""TVM-FFI's conversion protocols for Python objects passed to the FFI.

The extension converts the common values itself (None, wrappers, bool,
int, float, str, bytes, containers, tensors, callables); for any other
object it asks ``_value_from_protocol`` what to convert in its place,
in tvm_ffi's order:

* ``__tvm_ffi_object__()`` -> the FFI object it returns;
* ``numbers.Integral`` / ``numbers.Real`` (NumPy scalars, ``fractions``)
  -> ``int(x)`` / ``float(x)`` (``numpy.bool_`` -> ``bool``);
* ``ctypes.c_void_p`` and ``__tvm_ffi_opaque_ptr__()`` -> an opaque pointer;
* ``__tvm_ffi_int__()`` / ``__tvm_ffi_float__()`` / ``__tvm_ffi_value__()``;
* ``ObjectConvertible`` -> ``asobject()``.

Anything else is NotImplemented and crosses as an opaque Python object
(or as a Function when callable).
"""

from __future__ import annotations

import ctypes
from numbers import Integral, Real

from . import _ffi
from .core import ObjectConvertible

__all__ = ["convert", "convert_func"]


def _is_numpy_bool(value) -> bool:
    t = type(value)
    return t.__name__ == "bool_" and t.__module__ == "numpy"


def _value_from_protocol(value):
    cls = type(value)
    if hasattr(cls, "__tvm_ffi_object__"):
        return value.__tvm_ffi_object__()
    if _is_numpy_bool(value):
        return bool(value)
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real):
        return float(value)
    if isinstance(value, ctypes.c_void_p):
        return _ffi.OpaquePtrValue(value.value or 0)
    if hasattr(cls, "__tvm_ffi_opaque_ptr__"):
        return _ffi.OpaquePtrValue(int(value.__tvm_ffi_opaque_ptr__()))
    if callable(value):
        return NotImplemented
    if hasattr(cls, "__tvm_ffi_int__"):
        return int(value.__tvm_ffi_int__())
    if hasattr(cls, "__tvm_ffi_float__"):
        return float(value.__tvm_ffi_float__())
    if hasattr(cls, "__tvm_ffi_value__"):
        return value.__tvm_ffi_value__()
    if isinstance(value, ObjectConvertible):
        return value.asobject()
    return NotImplemented


from .core import convert, convert_func  # noqa: E402  (re-exported, as tvm_ffi._convert)
