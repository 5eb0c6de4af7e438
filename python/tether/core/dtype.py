"""Data types: ``DataType``, the core's (code, bits, lanes) triple of a
DLPack data type, and the class that data-type values returned by the FFI
take (``_CLASS_DTYPE``: ``tether._dtype.dtype`` once the package is
imported, or the subclass a client installs with ``_set_class_dtype``).
"""

from __future__ import annotations

from typing import Any

from .. import _ffi

__all__ = ["DataType"]


class DataType:
    """A DLPack data type: ``type_code``, ``bits`` and ``lanes``, spelled
    as TVM-FFI spells it (``str(DataType("float32x4"))``)."""

    __slots__ = ("type_code", "bits", "lanes")

    def __init__(self, dtype_str: str) -> None:
        if not isinstance(dtype_str, str):
            raise TypeError(f"DataType needs a str, got {type(dtype_str).__name__}")
        self.type_code, self.bits, self.lanes = _ffi.dtype_parse(dtype_str)

    @property
    def itemsize(self) -> int:
        """Bytes per element (rounded up for sub-byte types)."""
        return _itemsize(self.bits, self.lanes)

    def __str__(self) -> str:
        return str(_ffi.dtype_format(self.type_code, self.bits, self.lanes))

    def __repr__(self) -> str:
        return f"DataType({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DataType) and (self.type_code, self.bits, self.lanes) == (
            other.type_code, other.bits, other.lanes)

    def __hash__(self) -> int:
        return hash((self.type_code, self.bits, self.lanes))

    def __reduce__(self):
        return (DataType, (str(self),))


def _lanes_of(lanes: int) -> int:
    """DLPack keeps lanes as uint16: a scalable vector's ``-n`` arrives as ``65536 - n``."""
    return lanes - 65536 if lanes >= 32768 else lanes


def _itemsize(bits: int, lanes: int) -> int:
    lanes = _lanes_of(lanes)
    if lanes < 0:
        raise ValueError("Cannot determine itemsize for scalable vector types")
    return (bits * lanes + 7) // 8


def _create_cdtype_from_tuple(cls: type, code: int, bits: int, lanes: int) -> Any:
    """An instance of ``cls`` (``DataType`` or a ``dtype`` class) for a DLPack triple."""
    for name, v, limit in (("code", code, 1 << 8), ("bits", bits, 1 << 8), ("lanes", lanes, 1 << 16)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"dtype {name} must be an int, got {type(v).__name__}")
        if not (-limit // 2 if name == "lanes" else 0) <= v < limit:
            raise ValueError(f"dtype {name} {v} is out of range")
    text = str(_ffi.dtype_format(code, bits, lanes & 0xFFFF))
    return cls(text) if cls is not DataType else DataType(text)


def _convert_numpy_dtype_to_ffi_dtype(numpy_dtype: Any) -> DataType:
    """The ``DataType`` of a NumPy dtype (or anything ``numpy.dtype`` accepts)."""
    import numpy

    dt = numpy.dtype(numpy_dtype)
    name = "bool" if dt == numpy.bool_ else dt.name
    return DataType(name)


def _convert_torch_dtype_to_ffi_dtype(torch_dtype: Any) -> DataType:
    """The ``DataType`` of a ``torch.dtype`` (``torch.float32`` -> ``float32``)."""
    text = str(torch_dtype)
    if not text.startswith("torch."):
        raise TypeError(f"expected a torch.dtype, got {type(torch_dtype).__name__}")
    name = text[len("torch."):]
    return DataType({"bool": "bool", "half": "float16", "float": "float32", "double": "float64"}.get(name, name))


_CLASS_DTYPE: type = DataType


def _set_class_dtype(cls: type) -> None:
    """Data-type values returned by the FFI are instances of ``cls`` from now on."""
    global _CLASS_DTYPE
    if not isinstance(cls, type):
        raise TypeError(f"_set_class_dtype needs a class, got {cls!r}")
    _CLASS_DTYPE = cls
    import sys

    sys.modules[__package__]._CLASS_DTYPE = cls
    _ffi.set_dtype_class(cls)
