"""``dtype``: a data type that is also its spelling (a ``str`` subclass:
``dtype("float32") == "float32"``), with DLPack's (code, bits, lanes) as
attributes; and ``DataTypeCode``, DLPack's type codes. Importing this
module makes ``dtype`` the class of data-type values the FFI returns.
"""

from __future__ import annotations

import builtins
import enum
import sys
from typing import Any, ClassVar, Tuple

from . import _ffi, core
from .core.dtype import _itemsize

__all__ = ["DataTypeCode", "dtype"]


class DataTypeCode(enum.IntEnum):
    """DLPack's data type codes (the first field of a ``DLDataType``)."""

    INT = 0
    UINT = 1
    FLOAT = 2
    HANDLE = 3
    BFLOAT = 4
    COMPLEX = 5
    BOOL = 6
    Float8E3M4 = 7
    Float8E4M3 = 8
    Float8E4M3B11FNUZ = 9
    Float8E4M3FN = 10
    Float8E4M3FNUZ = 11
    Float8E5M2 = 12
    Float8E5M2FNUZ = 13
    Float8E8M0FNU = 14
    Float6E2M3FN = 15
    Float6E3M2FN = 16
    Float4E2M1FN = 17
    # tether's earlier spellings of the same codes
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

    _NUMPY_DTYPE_TO_STR: ClassVar[dict] = {}
    _INTEGER_CODES: ClassVar[frozenset] = _INTEGER_CODES
    _FLOAT_CODES: ClassVar[frozenset] = _FLOAT_CODES

    def __new__(cls, content: Any) -> "dtype":
        if type(content) is cls:
            return content
        text = _spelling(content)
        code, bits, lanes = _ffi.dtype_parse(text)
        # A string keeps the caller's spelling ("i8" stays "i8"), as tvm_ffi's
        # does; anything else (NumPy, ml_dtypes) takes the canonical one.
        spelled = content if isinstance(content, str) else _ffi.dtype_format(code, bits, lanes)
        val = str.__new__(cls, spelled)
        val.type_code, val.bits, val.lanes = code, bits, lanes
        return val

    @classmethod
    def from_dlpack_data_type(cls, data_type: Tuple[int, int, int]) -> "dtype":
        """The dtype of a DLPack ``(code, bits, lanes)`` triple."""
        code, bits, lanes = data_type
        # The core spells void as "" (TVM-FFI's text form, kept in JSON);
        # a dtype made from the triple spells it "void", as dtype("void")
        # does, so void survives a round trip through the core equal to itself.
        return cls(_ffi.dtype_format(code, bits, lanes) or "void")

    def __repr__(self) -> str:
        return f"dtype('{str(self)}')"

    def __reduce__(self):
        return (type(self), (str(self),))

    @property
    def _tvm_ffi_dtype(self) -> core.DataType:
        """The core's ``DataType`` of this dtype."""
        return core._create_cdtype_from_tuple(core.DataType, self.type_code, self.bits, self.lanes)

    @property
    def itemsize(self) -> int:
        """Bytes per element (rounded up for sub-byte types; ValueError for
        scalable vectors, whose size is known only at run time)."""
        return _itemsize(self.bits, self.lanes)

    @staticmethod
    def is_dtype(arg: Any) -> builtins.bool:
        """Whether ``arg`` is a dtype or a string that spells one."""
        if isinstance(arg, dtype):
            return True
        try:
            core.DataType(str(arg))
        except ValueError:
            return False
        return True

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
        return type(self)(_ffi.dtype_format(self.type_code, self.bits, lanes))


def _spelling(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not _NUMPY_TABLE_FILLED:
        _fill_numpy_table()
    known = dtype._NUMPY_DTYPE_TO_STR.get(content)
    if known is not None:
        return known
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


_NUMPY_TABLE_FILLED = False


def _fill_numpy_table() -> None:
    """Map NumPy's (and ml_dtypes') dtype objects to their spellings, once
    NumPy is in use: only then can a NumPy dtype reach ``dtype(...)``, and
    importing NumPy here would double ``import tether``'s time."""
    global _NUMPY_TABLE_FILLED
    np = sys.modules.get("numpy")
    if np is None:
        return
    _NUMPY_TABLE_FILLED = True
    table = dtype._NUMPY_DTYPE_TO_STR
    for np_type, name in ((np.bool_, "bool"), (np.int8, "int8"), (np.int16, "int16"), (np.int32, "int32"),
                          (np.int64, "int64"), (np.uint8, "uint8"), (np.uint16, "uint16"),
                          (np.uint32, "uint32"), (np.uint64, "uint64"), (np.float16, "float16"),
                          (np.float32, "float32"), (np.float64, "float64")):
        table[np.dtype(np_type)] = name
    ml_dtypes = sys.modules.get("ml_dtypes")
    if ml_dtypes is None:
        try:
            import ml_dtypes
        except ImportError:
            return
    for name in ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn"):
        if hasattr(ml_dtypes, name):
            table[np.dtype(getattr(ml_dtypes, name))] = name


core._set_class_dtype(dtype)

bool = dtype("bool")  # noqa: A001 - tvm_ffi's name
int8, int16, int32, int64 = dtype("int8"), dtype("int16"), dtype("int32"), dtype("int64")
uint8, uint16, uint32, uint64 = dtype("uint8"), dtype("uint16"), dtype("uint32"), dtype("uint64")
float64, float32, float16, bfloat16 = dtype("float64"), dtype("float32"), dtype("float16"), dtype("bfloat16")
float8_e3m4, float8_e4m3 = dtype("float8_e3m4"), dtype("float8_e4m3")
float8_e4m3b11fnuz, float8_e4m3fn = dtype("float8_e4m3b11fnuz"), dtype("float8_e4m3fn")
float8_e4m3fnuz, float8_e5m2 = dtype("float8_e4m3fnuz"), dtype("float8_e5m2")
float8_e5m2fnuz, float8_e8m0fnu = dtype("float8_e5m2fnuz"), dtype("float8_e8m0fnu")
float6_e2m3fn, float6_e3m2fn = dtype("float6_e2m3fn"), dtype("float6_e3m2fn")
float4_e2m1fn, float4_e2m1fnx2 = dtype("float4_e2m1fn"), dtype("float4_e2m1fnx2")
float4_e2m1fn_x2 = float4_e2m1fnx2
