"""Values that speak TVM-FFI's conversion protocols: what a Python object
that is not a plain int/float/str/container crosses the FFI as
(``__tvm_ffi_object__``, ``__tvm_ffi_int__``, ``__tvm_ffi_float__``,
``__tvm_ffi_value__``, ``__tvm_ffi_opaque_ptr__``, ``ObjectConvertible``,
NumPy scalars, ``ctypes.c_void_p``). The extension calls
``_value_from_protocol`` for such objects; ``NotImplemented`` means "none
applies" (callables then become Functions, anything else an opaque object).
"""

from __future__ import annotations

import ctypes
import sys
from numbers import Integral, Real

from .. import _ffi
from .dtype import DataType
from .object import ObjectConvertible


def _is_numpy_bool(value) -> bool:
    t = type(value)
    return t.__name__ == "bool_" and t.__module__ == "numpy"


# Python types whose instances cross as opaque pointers: type -> function
# returning the address (tvm_ffi's registry of the same name).
_OPAQUE_PTR_HANDLERS: dict = {}


def _framework_dtype(value):
    """The core's ``DataType``, a NumPy (or ml_dtypes) dtype or a
    ``torch.dtype`` as the package's dtype class; None for anything else."""
    cls = type(value)
    module = cls.__module__ or ""
    if cls is DataType:
        return _dtype_class().from_dlpack_data_type((value.type_code, value.bits, value.lanes))
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.dtype):
        return _dtype_class()(value)
    if module == "torch" and cls.__name__ == "dtype":
        from .dtype import _convert_torch_dtype_to_ffi_dtype

        return _dtype_class()(str(_convert_torch_dtype_to_ffi_dtype(value)))
    return None


def _dtype_class():
    return sys.modules[__package__]._CLASS_DTYPE


def _value_from_protocol(value):
    cls = type(value)
    if isinstance(value, BaseException):
        # As convert(exc): an Error with the exception's kind, message and
        # traceback (the native one it was raised with, updated).
        from .error import _convert_to_ffi_error

        return _convert_to_ffi_error(value)
    if hasattr(cls, "__tvm_ffi_object__"):
        return value.__tvm_ffi_object__()
    framework_dtype = _framework_dtype(value)
    if framework_dtype is not None:
        return framework_dtype
    if _is_numpy_bool(value):
        return bool(value)
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real):
        return float(value)
    if isinstance(value, ctypes.c_void_p):
        return _ffi.OpaquePtrValue(value.value or 0)
    handler = _OPAQUE_PTR_HANDLERS.get(cls)
    if handler is not None:
        return _ffi.OpaquePtrValue(int(handler(value)))
    if hasattr(cls, "__cuda_stream__"):  # the CUDA stream protocol: (kind, handle)
        return _ffi.OpaquePtrValue(int(value.__cuda_stream__()[1]))
    if hasattr(cls, "__tvm_ffi_opaque_ptr__"):
        return _ffi.OpaquePtrValue(int(value.__tvm_ffi_opaque_ptr__()))
    if hasattr(cls, "__dlpack_data_type__"):  # DLPack's (code, bits, lanes) of a data type
        return _dtype_class().from_dlpack_data_type(tuple(value.__dlpack_data_type__()))
    if hasattr(cls, "__dlpack_device__") and not hasattr(cls, "__dlpack__"):  # a device, not a tensor
        from .device import _CLASS_DEVICE, _create_device_from_tuple

        device_type, device_id = value.__dlpack_device__()
        return _create_device_from_tuple(_CLASS_DEVICE, int(device_type), int(device_id))
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
