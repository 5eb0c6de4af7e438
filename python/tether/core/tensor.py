"""Tensors: ``Tensor`` wraps an ``ffi.Tensor`` (the object header followed
by a ``DLTensor``), sharing memory with whatever produced it;
``from_dlpack`` takes anything that speaks DLPack without copying. Also
the per-device current stream the FFI environment keeps.

Tensors take part in tying like every object: a tensor returned by native
code comes back as its one wrapper (``f(t) is t``).
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

from .. import _ffi
from .device import DLDeviceType, Device, _create_device_from_tuple
from .object import Object, _register_class

__all__ = ["Tensor", "from_dlpack"]


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
    def dtype(self):
        return _dtype_class().from_dlpack_data_type(self._info()[3])

    @property
    def device(self) -> Device:
        dev_type, dev_id = self._info()[1]
        return _create_device_from_tuple(_device_class(), dev_type, dev_id)

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
        """The number of elements."""
        n = 1
        for d in self._info()[4]:
            n *= d
        return n

    def size(self, idx: int) -> int:
        """The extent of dimension ``idx`` (negative counts from the end)."""
        shape = self._info()[4]
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise TypeError(f"dimension index must be an int, got {type(idx).__name__}")
        if not -len(shape) <= idx < len(shape):
            raise IndexError(f"dimension {idx} out of range for a {len(shape)}-d tensor")
        return shape[idx]

    def is_contiguous(self) -> bool:
        """Whether elements are laid out in compact row-major order (a tensor
        without elements always is; extents of 1 may have any stride)."""
        shape, strides = self._info()[4], self._info()[5]
        if 0 in shape:
            return True
        expected = 1
        for dim, stride in zip(reversed(shape), reversed(strides)):
            if dim != 1 and stride != expected:
                return False
            expected *= dim
        return True

    def _dlpack_checked(self, *, stream: Any = None, max_version: Optional[Tuple[int, int]] = None,
                        dl_device: Optional[Tuple[int, int]] = None, copy: Optional[bool] = None):
        """``__dlpack__`` with devices, streams and copies checked. The
        class's ``__dlpack__`` is native (installed below) and comes here
        for any request beyond ``max_version``."""
        if stream is None and dl_device is None and not copy:
            # What consumers ask on every import: no device or stream to
            # check (the full checks follow below otherwise).
            return _ffi.tensor_to_dlpack(self, max_version is not None and tuple(max_version)[0] >= 1)
        if copy:
            raise BufferError("tether tensors are exported without copying (copy=True is not supported)")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"cannot export a tensor on {self.device} to device {tuple(dl_device)} without a copy")
        if stream is not None and stream != -1 and self.__dlpack_device__()[0] == DLDeviceType.kDLCPU:
            if stream not in (None, -1, 0):
                raise BufferError(f"stream must be None or -1 for a CPU tensor, got {stream!r}")
        versioned = max_version is not None and tuple(max_version)[0] >= 1
        return _ffi.tensor_to_dlpack(self, versioned)

    def __repr__(self) -> str:
        if not _ffi.chandle(self):
            return Object.__repr__(self)
        info = self._info()
        shape = ", ".join(str(d) for d in info[4])
        return f"{self.dtype}[{shape}]@{self.device}"

    def __reduce__(self):
        raise TypeError("cannot pickle a tether.Tensor (it shares memory with its producer); pickle numpy.from_dlpack(t)")


# Native __dlpack__/__dlpack_device__: consumers call them on every import.
_ffi.install_dlpack_methods(Tensor, Tensor._dlpack_checked)
_register_class(70, Tensor)
_CLASS_TENSOR: type = Tensor


def _dtype_class():
    import sys

    return sys.modules[__package__]._CLASS_DTYPE


def _device_class():
    import sys

    return sys.modules[__package__]._CLASS_DEVICE


def _set_class_tensor(cls: type) -> None:
    """Tensors returned by the FFI are instances of ``cls`` (a subclass of
    ``Tensor``) from now on."""
    global _CLASS_TENSOR
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"_set_class_tensor needs a subclass of Tensor, got {cls!r}")
    _register_class(70, cls)
    _CLASS_TENSOR = cls
    import sys

    sys.modules[__package__]._CLASS_TENSOR = cls


# from_dlpack(ext_tensor, *, require_alignment=0, require_contiguous=False):
# a `Tensor` sharing memory with `ext_tensor` (anything with ``__dlpack__``,
# or a DLPack capsule); a Tensor is returned as it is. Native, so an import
# costs one call (the argument checks are the extension's).
from_dlpack = _ffi.from_dlpack


def _shape_obj_get_py_tuple(obj: Any) -> Tuple[int, ...]:
    """The dimensions of an ``ffi.Shape`` object as a tuple."""
    return tuple(obj)


def _make_strides_from_shape(shape: Tuple[int, ...]) -> Tuple[int, ...]:
    """Compact row-major strides (in elements) of ``shape``."""
    strides = []
    acc = 1
    for dim in reversed(tuple(shape)):
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 0:
            raise ValueError(f"shape dimensions must be non-negative ints, got {dim!r}")
        strides.append(acc)
        acc *= dim
    return tuple(reversed(strides))


def _env_set_current_stream(device_type: int, device_id: int, stream: int) -> int:
    """Make ``stream`` the current stream of the device; returns the previous one."""
    return _ffi.env_set_stream(device_type, device_id, stream)


def _env_get_current_stream(device_type: int, device_id: int) -> int:
    """The current stream of the device (0 when none was set)."""
    return _ffi.env_get_stream(device_type, device_id)
