"""``DLTensorTestWrapper`` (tvm_ffi's testing class of that name): a Tensor
behind DLPack's C exchange table (``__dlpack_c_exchange_api__``, a capsule
named ``dlpack_exchange_api``) as well as ``__dlpack__``, so tests can check
what consumers of the table do without a framework that publishes one.

The table is built once with ctypes: its ``managed_tensor_from_py_object_no_sync``
exports the wrapped tensor through the core's ``TVMFFITensorToDLPackVersioned``;
the entries it does not need are NULL, which DLPack allows.
"""

from __future__ import annotations

import ctypes
from typing import Any

from .library import core_library
from .tensor import Tensor

__all__ = ["DLTensorTestWrapper"]

_FROM_PY_OBJECT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))


class _ExchangeAPI(ctypes.Structure):
    # DLPackExchangeAPI: its header (version, prev_api), then the entries.
    _fields_ = [
        ("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("prev_api", ctypes.c_void_p),
        ("managed_tensor_allocator", ctypes.c_void_p),
        ("managed_tensor_from_py_object_no_sync", _FROM_PY_OBJECT),
        ("managed_tensor_to_py_object_no_sync", ctypes.c_void_p),
        ("dltensor_from_py_object_no_sync", ctypes.c_void_p),
        ("current_work_stream", ctypes.c_void_p),
    ]


def _core_library() -> ctypes.CDLL:
    return core_library()


def _export(py_object: int, out) -> int:
    """The table's ``managed_tensor_from_py_object_no_sync``: 0 and a new
    ``DLManagedTensorVersioned`` in ``*out``, or -1 (nothing is raised
    across the C boundary)."""
    try:
        wrapper = ctypes.cast(py_object, ctypes.py_object).value
        to_dlpack = _core_library().TVMFFITensorToDLPackVersioned
        to_dlpack.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
        to_dlpack.restype = ctypes.c_int
        return to_dlpack(wrapper.tensor.__chandle__(), out)
    except Exception:  # a C caller cannot take a Python exception
        return -1


_ENTRY = _FROM_PY_OBJECT(_export)  # kept alive for the process: the table points at it
_TABLE = _ExchangeAPI(1, 1, None, None, _ENTRY, None, None, None)


def _capsule() -> Any:
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return new(ctypes.addressof(_TABLE), b"dlpack_exchange_api", None)


class DLTensorTestWrapper:
    """Wraps ``tensor``; DLPack consumers may take it by ``__dlpack__`` or
    through the exchange table."""

    __dlpack_c_exchange_api__ = _capsule()

    def __init__(self, tensor: Tensor) -> None:
        if not isinstance(tensor, Tensor):
            raise TypeError(f"DLTensorTestWrapper wraps a Tensor, got {type(tensor).__name__}")
        self.tensor = tensor

    def __dlpack_device__(self) -> tuple:
        return self.tensor.__dlpack_device__()

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.tensor.__dlpack__(**kwargs)
