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

from ctypes import c_void_p
from typing import Any, Optional, Union

from . import _ffi
from ._dtype import DataTypeCode, dtype
from .core.device import DLDeviceType, Device, device
from .core.tensor import Tensor, from_dlpack

__all__ = [
    "DLDeviceType", "DataTypeCode", "Device", "Tensor", "StreamContext",
    "device", "dtype", "from_dlpack", "get_raw_stream", "use_raw_stream", "use_torch_stream",
]


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
