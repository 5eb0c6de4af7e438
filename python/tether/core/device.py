"""Devices: DLPack's device types and ``Device`` (a device type and an
index), the class device values returned by the FFI take
(``_CLASS_DEVICE``, replaceable with ``_set_class_device``).
"""

from __future__ import annotations

import enum
import numbers
from typing import Any, Optional, Union

from .. import _ffi

__all__ = ["DLDeviceType", "Device", "device"]


class DLDeviceType(enum.IntEnum):
    """DLPack's device types."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17
    kDLTrn = 18


_RUNTIME_DEVICE_BASE = 128


class Device:
    """A device: a DLPack device type and an index (``device("cuda", 1)``)."""

    __slots__ = ("_type", "_index")

    _DEVICE_NAME_TO_TYPE = {
        "cpu": DLDeviceType.kDLCPU, "cuda": DLDeviceType.kDLCUDA, "cuda_host": DLDeviceType.kDLCUDAHost,
        "opencl": DLDeviceType.kDLOpenCL, "vulkan": DLDeviceType.kDLVulkan, "metal": DLDeviceType.kDLMetal,
        "mps": DLDeviceType.kDLMetal, "vpi": DLDeviceType.kDLVPI, "rocm": DLDeviceType.kDLROCM,
        "rocm_host": DLDeviceType.kDLROCMHost, "ext_dev": DLDeviceType.kDLExtDev,
        "cuda_managed": DLDeviceType.kDLCUDAManaged, "oneapi": DLDeviceType.kDLOneAPI,
        "wgpu": DLDeviceType.kDLWebGPU, "webgpu": DLDeviceType.kDLWebGPU, "hexagon": DLDeviceType.kDLHexagon,
        "maia": DLDeviceType.kDLMAIA, "trn": DLDeviceType.kDLTrn,
    }
    _DEVICE_TYPE_TO_NAME = {
        DLDeviceType.kDLCPU: "cpu", DLDeviceType.kDLCUDA: "cuda", DLDeviceType.kDLCUDAHost: "cuda_host",
        DLDeviceType.kDLOpenCL: "opencl", DLDeviceType.kDLVulkan: "vulkan", DLDeviceType.kDLMetal: "metal",
        DLDeviceType.kDLVPI: "vpi", DLDeviceType.kDLROCM: "rocm", DLDeviceType.kDLROCMHost: "rocm_host",
        DLDeviceType.kDLExtDev: "ext_dev", DLDeviceType.kDLCUDAManaged: "cuda_managed",
        DLDeviceType.kDLOneAPI: "oneapi", DLDeviceType.kDLWebGPU: "webgpu", DLDeviceType.kDLHexagon: "hexagon",
        DLDeviceType.kDLMAIA: "maia", DLDeviceType.kDLTrn: "trn",
    }

    def __init__(self, device_type: Union[str, int, DLDeviceType], index: Optional[int] = None) -> None:
        if isinstance(device_type, Device):
            device_type, index = device_type.dlpack_device_type(), device_type.index if index is None else index
        if isinstance(device_type, str):
            name, colon, suffix = device_type.partition(":")
            if name not in self._DEVICE_NAME_TO_TYPE or (colon and not suffix):
                raise ValueError(f"Unknown device: {device_type}")
            if suffix:
                if index is not None:
                    raise ValueError(f"device {device_type!r} already names an index; do not pass index={index}")
                if not suffix.isdigit():
                    raise ValueError(f"Unknown device: {device_type}")
                index = int(suffix)
            code = int(self._DEVICE_NAME_TO_TYPE[name])
        elif isinstance(device_type, numbers.Integral) and not isinstance(device_type, bool):
            device_type = int(device_type)
            # Codes at or above 128 are a runtime's own (TVM's RPC sessions
            # add multiples of 128 to the device type): they pass through.
            known = device_type in DLDeviceType._value2member_map_
            if not (known or _RUNTIME_DEVICE_BASE <= device_type < 2**31):
                raise ValueError(f"Unknown device type: {device_type}")
            code = int(device_type)
        else:
            raise TypeError(f"device type must be a str, int or DLDeviceType, got {type(device_type).__name__}")
        index = 0 if index is None else index
        if isinstance(index, bool) or not isinstance(index, numbers.Integral):
            raise TypeError(f"device index must be an int, got {type(index).__name__} {index!r}")
        index = int(index)
        if not -(2**31) <= index < 2**31:
            raise ValueError(f"device index must be a 32-bit int, got {index!r}")
        self._type, self._index = code, index

    @property
    def type(self) -> str:
        return self._DEVICE_TYPE_TO_NAME.get(self._type, str(self._type))

    @property
    def index(self) -> int:
        return self._index

    def dlpack_device_type(self) -> int:
        return self._type

    def __repr__(self) -> str:
        return f"device(type='{self.type}', index={self._index})"

    def __str__(self) -> str:
        return f"{self.type}:{self._index}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and (self._type, self._index) == (other._type, other._index)

    def __hash__(self) -> int:
        return hash((self._type, self._index))

    def __reduce__(self):
        return (type(self), (self._type, self._index))


def device(device_type: Union[str, int, DLDeviceType], index: Optional[int] = None) -> Device:
    """``device("cpu")``, ``device("cuda:1")``, ``device("cuda", 1)``, ``device(2, 0)``."""
    return _CLASS_DEVICE(device_type, index)


_CLASS_DEVICE: type = Device


def _create_device_from_tuple(cls: type, device_type: int, device_id: int) -> Any:
    """An instance of ``cls`` (``Device`` or a subclass) for ``(device_type, device_id)``."""
    obj = cls.__new__(cls)
    Device.__init__(obj, device_type, device_id)
    return obj


def _set_class_device(cls: type) -> None:
    """Device values returned by the FFI are instances of ``cls`` (a
    subclass of ``Device``) from now on."""
    global _CLASS_DEVICE
    if not (isinstance(cls, type) and issubclass(cls, Device)):
        raise TypeError(f"_set_class_device needs a subclass of Device, got {cls!r}")
    _CLASS_DEVICE = cls
    import sys

    sys.modules[__package__]._CLASS_DEVICE = cls
    _ffi.set_device_class(cls)


_ffi.set_device_class(Device)
