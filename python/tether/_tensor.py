"""Tensor-related names where tvm_ffi keeps them (``tvm_ffi._tensor``):
``Tensor``, ``Device``, ``DLDeviceType``, ``from_dlpack``, ``Shape`` and
``device``."""

from __future__ import annotations

from numbers import Integral  # noqa: F401  (tvm_ffi._tensor's names)

from . import _ffi_api, core, registry  # noqa: F401
from .container import Shape
from .core import PyNativeObject, _shape_obj_get_py_tuple  # noqa: F401
from .core.device import DLDeviceType, Device, device
from .core.tensor import Tensor, from_dlpack

__all__ = ["DLDeviceType", "Device", "Shape", "Tensor", "device", "from_dlpack"]
