"""Tensors, data types, devices and streams (DLPack interop).

`tether.Tensor` wraps an `ffi.Tensor`: the object header followed by a
`DLTensor`, sharing memory with whatever produced it. `from_dlpack(x)` takes
anything that speaks DLPack (NumPy, PyTorch, JAX, CuPy, another tether or
TVM-FFI tensor) without copying; a Tensor hands itself out the same way
through `__dlpack__`. Passing such an object to an FFI function passes a
tensor view of the same memory.

Tensors take part in tying like every object: a tensor returned by native
code comes back as its one `tether.Tensor` wrapper (`f(t) is t`). TVM-FFI
leaves tensors unbound because its callbacks may hand a framework's own
tensor class to Python instead; tether returns its own `Tensor` everywhere
and converts to a framework only when asked (`numpy.from_dlpack(t)`), so
there is nothing for a binding to get wrong.
"""

from __future__ import annotations

import enum
from ctypes import c_void_p
from typing import Any, Optional, Tuple, Union

from . import _ffi
from .core import Object, _register_class

__all__ = [
    "DLDeviceType", "DataTypeCode", "Device", "Tensor", "StreamContext",
    "device", "dtype", "from_dlpack", "get_raw_stream", "use_raw_stream", "use_torch_stream",
]


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


class DataTypeCode(enum.IntEnum):
    """DLPack's data type codes (the first field of a `DLDataType`)."""

    INT = 0
    UINT = 1
    FLOAT = 2
    HANDLE = 3
    BFLOAT = 4
    COMPLEX = 5
    BOOL = 6
    FLOAT8_E3M4 = 7
    FLOAT8_E4M3 = 8
    FLOAT8_E4M3B11FNUZ = 9
    FLOAT8_E4M3FN = 10
    FLOAT8_E4M3FNUZ = 11
    FLOAT8_E5M2 = 12
    FLOAT8_E5M2FNUZ = 13
    FLOAT8_E8M0FNU = 14
    FLOAT6_E2M3FN = 15
    FLOAT6_E3M2FN = 16
    FLOAT4_E2M1FN = 17


_INTEGER_CODES = frozenset({DataTypeCode.INT, DataTypeCode.UINT})
_FLOAT_CODES = frozenset(c for c in DataTypeCode if c in (DataTypeCode.FLOAT, DataTypeCode.BFLOAT) or c >= 7)


class dtype(str):
    """A data type, spelled as TVM-FFI spells it (``"float32"``,
    ``"bfloat16"``, ``"int8x4"``, ``"bool"``, ``"float8_e4m3fn"`` …).

    A `str` subclass, so it compares equal to its spelling; NumPy dtypes
    and their names are accepted too.
    """

    def __new__(cls, content: Any) -> "dtype":
        if isinstance(content, dtype):
            return content
        text = _spelling(content)
        code, bits, lanes = _ffi.dtype_parse(text)
        canonical = _ffi.dtype_format(code, bits, lanes)
        val = str.__new__(cls, canonical)
        val.type_code, val.bits, val.lanes = code, bits, lanes
        return val

    @staticmethod
    def from_dlpack_data_type(data_type: Tuple[int, int, int]) -> "dtype":
        """The dtype of a DLPack ``(code, bits, lanes)`` triple."""
        code, bits, lanes = data_type
        return dtype(_ffi.dtype_format(code, bits, lanes))

    def __repr__(self) -> str:
        return f"dtype('{str(self)}')"

    def __reduce__(self):
        return (dtype, (str(self),))

    @property
    def itemsize(self) -> int:
        """Bytes per element (rounded up for sub-byte types)."""
        return (self.bits * self.lanes + 7) // 8

    @property
    def is_integer(self) -> bool:
        return self.type_code in _INTEGER_CODES

    @property
    def is_float(self) -> bool:
        return self.type_code in _FLOAT_CODES

    @property
    def is_bool(self) -> bool:
        return self.type_code == DataTypeCode.BOOL

    @property
    def is_handle(self) -> bool:
        return self.type_code == DataTypeCode.HANDLE

    def with_lanes(self, lanes: int) -> "dtype":
        return dtype(_ffi.dtype_format(self.type_code, self.bits, lanes))


def _spelling(content: Any) -> str:
    if isinstance(content, str):
        return content
    name = getattr(content, "name", None)  # numpy.dtype('float32').name
    if isinstance(name, str):
        return name
    np_dtype = getattr(content, "dtype", None)  # numpy.float32 (a scalar type) has .dtype only on instances
    if isinstance(getattr(np_dtype, "name", None), str):
        return np_dtype.name
    try:
        import numpy

        return numpy.dtype(content).name
    except Exception:
        raise TypeError(f"cannot make a dtype from {type(content).__name__} {content!r}") from None


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
            name, _, suffix = device_type.partition(":")
            if name not in self._DEVICE_NAME_TO_TYPE:
                raise ValueError(f"Unknown device: {device_type}")
            if suffix:
                if index is not None:
                    raise ValueError(f"device {device_type!r} already names an index; do not pass index={index}")
                if not suffix.isdigit():
                    raise ValueError(f"Unknown device: {device_type}")
                index = int(suffix)
            code = int(self._DEVICE_NAME_TO_TYPE[name])
        elif isinstance(device_type, int) and not isinstance(device_type, bool):
            try:
                code = int(DLDeviceType(device_type))
            except ValueError:
                raise ValueError(f"Unknown device type: {device_type}") from None
        else:
            raise TypeError(f"device type must be a str, int or DLDeviceType, got {type(device_type).__name__}")
        index = 0 if index is None else index
        if isinstance(index, bool) or not isinstance(index, int) or not -(2**31) <= index < 2**31:
            raise ValueError(f"device index must be a 32-bit int, got {index!r}")
        self._type, self._index = code, index

    @property
    def type(self) -> str:
        return self._DEVICE_TYPE_TO_NAME.get(DLDeviceType(self._type), str(self._type))

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
        return (Device, (self._type, self._index))


def device(device_type: Union[str, int, DLDeviceType], index: Optional[int] = None) -> Device:
    """``device("cpu")``, ``device("cuda:1")``, ``device("cuda", 1)``, ``device(2, 0)``."""
    return Device(device_type, index)


class Tensor(Object):
    """An FFI tensor (``ffi.Tensor``) sharing memory with its producer."""

    __slots__ = ()

    def _info(self):
        return _ffi.tensor_info(self)

    @property
    def shape(self) -> Tuple[int, ...]:
        return self._info()[4]

    @property
    def strides(self) -> Tuple[int, ...]:
        """Element strides (compact row-major strides when the tensor has none)."""
        return self._info()[5]

    @property
    def dtype(self) -> dtype:
        return dtype.from_dlpack_data_type(self._info()[3])

    @property
    def device(self) -> Device:
        dev_type, dev_id = self._info()[1]
        return Device(dev_type, dev_id)

    @property
    def ndim(self) -> int:
        return len(self._info()[4])

    @property
    def byte_offset(self) -> int:
        return self._info()[6]

    def data_ptr(self) -> int:
        """Address of the first element (data pointer plus byte offset)."""
        info = self._info()
        return info[0] + info[6]

    def numel(self) -> int:
        n = 1
        for d in self._info()[4]:
            n *= d
        return n

    size = numel

    def is_contiguous(self) -> bool:
        shape, strides = self._info()[4], self._info()[5]
        expected = 1
        for dim, stride in zip(reversed(shape), reversed(strides)):
            if dim != 1 and stride != expected:
                return False
            expected *= dim
        return True

    def __dlpack__(self, *, stream: Any = None, max_version: Optional[Tuple[int, int]] = None,
                   dl_device: Optional[Tuple[int, int]] = None, copy: Optional[bool] = None):
        """A DLPack capsule of this tensor (versioned when the consumer asks
        for DLPack 1.x with `max_version`, the legacy form otherwise)."""
        if copy:
            raise BufferError("tether tensors are exported without copying (copy=True is not supported)")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"cannot export a tensor on {self.device} to device {tuple(dl_device)} without a copy")
        if stream is not None and stream != -1 and self.__dlpack_device__()[0] == DLDeviceType.kDLCPU:
            if stream not in (None, -1, 0):
                raise BufferError(f"stream must be None or -1 for a CPU tensor, got {stream!r}")
        versioned = max_version is not None and tuple(max_version)[0] >= 1
        return _ffi.tensor_to_dlpack(self, versioned)

    def __dlpack_device__(self) -> Tuple[int, int]:
        return tuple(self._info()[1])

    def __repr__(self) -> str:
        if not _ffi.chandle(self):
            return Object.__repr__(self)
        info = self._info()
        shape = ", ".join(str(d) for d in info[4])
        return f"{self.dtype}[{shape}]@{self.device}"

    def __reduce__(self):
        raise TypeError("cannot pickle a tether.Tensor (it shares memory with its producer); pickle numpy.from_dlpack(t)")


_register_class(70, Tensor)
_ffi.set_value_classes(dtype, Device)


def from_dlpack(ext_tensor: Any, *, require_alignment: int = 0, require_contiguous: bool = False) -> Tensor:
    """A `Tensor` sharing memory with `ext_tensor` (anything with
    ``__dlpack__``, or a DLPack capsule)."""
    if isinstance(ext_tensor, Tensor):
        return ext_tensor
    if isinstance(require_alignment, bool) or not isinstance(require_alignment, int) or require_alignment < 0:
        raise ValueError(f"require_alignment must be a non-negative int, got {require_alignment!r}")
    return _ffi.tensor_from_dlpack(ext_tensor, require_alignment, bool(require_contiguous))


class StreamContext:
    """Sets the current stream of a device for native calls inside a ``with``
    block, and restores the previous one on exit."""

    def __init__(self, device: Device, stream: Union[int, c_void_p]) -> None:
        if not isinstance(device, Device):
            raise TypeError(f"StreamContext needs a tether.Device, got {type(device).__name__}")
        self.device_type = device.dlpack_device_type()
        self.device_id = device.index
        self.stream = _stream_handle(stream)

    def __enter__(self) -> "StreamContext":
        self.prev_stream = _ffi.env_set_stream(self.device_type, self.device_id, self.stream)
        return self

    def __exit__(self, *exc) -> None:
        _ffi.env_set_stream(self.device_type, self.device_id, self.prev_stream)


def _stream_handle(stream: Union[int, c_void_p]) -> int:
    if isinstance(stream, c_void_p):
        return stream.value or 0
    if isinstance(stream, bool) or not isinstance(stream, int):
        raise ValueError(
            "use_raw_stream only accepts int or c_void_p as stream input, "
            "try use_torch_stream when using torch.cuda.Stream or torch.cuda.graph"
        )
    return stream


def use_raw_stream(device: Device, stream: Union[int, c_void_p]) -> StreamContext:
    """A context in which `stream` (an integer handle such as a
    ``cudaStream_t``) is the current stream of `device` for native calls."""
    _stream_handle(stream)
    return StreamContext(device, stream)


def use_torch_stream(context: Any = None) -> StreamContext:
    """The current (or given) ``torch.cuda`` stream as the FFI stream of its device."""
    import torch  # optional dependency

    stream = context if context is not None else torch.cuda.current_stream()
    if hasattr(stream, "cuda_stream"):
        dev = Device("cuda", stream.device.index or 0)
        return StreamContext(dev, stream.cuda_stream)
    raise TypeError(f"use_torch_stream needs a torch.cuda.Stream, got {type(stream).__name__}")


def get_raw_stream(device: Device) -> int:
    """The current FFI stream of `device` (0 when none was set)."""
    if not isinstance(device, Device):
        raise TypeError(f"get_raw_stream needs a tether.Device, got {type(device).__name__}")
    return _ffi.env_get_stream(device.dlpack_device_type(), device.index)
