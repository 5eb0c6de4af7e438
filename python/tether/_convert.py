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

from numbers import Number  # noqa: F401  (tvm_ffi._convert's names)

from . import container, core  # noqa: F401
from . import _dtype  # noqa: F401
from .core import convert, convert_func
from .core.converter import _is_numpy_bool, _value_from_protocol  # noqa: F401

try:
    import torch  # noqa: F401
except ImportError:
    torch = None

__all__ = ["convert", "convert_func"]
