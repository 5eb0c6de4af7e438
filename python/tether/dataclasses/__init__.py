"""FFI dataclasses with the API of ``tvm_ffi.dataclasses``.

``py_class`` defines an FFI type from a Python class body; ``c_class``
puts a dataclass view over a type defined in native code. Both follow
TVM-FFI's semantics (generated ``__init__`` over the type's
``__ffi_init__``, ``ffi.ReprPrint`` reprs, field-wise ``eq``/``order``/
``unsafe_hash``, ``frozen``, ``kw_only``, copies and ``replace``), and
their wrappers stay tied: ``a.x is a.x``, and a wrapper keeps its ``id``
across drop and re-fetch while the native object lives.

::

    @tether.dataclasses.py_class("demo.Point")
    class Point(tether.Object):
        x: int
        y: int = 0
        tag: str = field(default="", repr=False)
"""

from dataclasses import FrozenInstanceError

from ..core import Object
from .c_class import c_class
from .common import asdict, astuple, fields, is_dataclass, replace
from .enum import Enum, EnumAttrMap, EnumState, IntEnum, StrEnum, auto, entry
from .field import KW_ONLY, Field, field, init_property
from .missing import MISSING
from .py_class import py_class
from . import _resolve_fields  # noqa: E402,F401  (tvm_ffi.dataclasses' submodule)
from .gen_abi_cpp import gen_abi_cpp  # noqa: E402,F401  (the function shadows its module, as in tvm_ffi)

__all__ = [
    "KW_ONLY", "MISSING", "Enum", "EnumAttrMap", "EnumState", "Field", "FrozenInstanceError", "IntEnum", "Object", "StrEnum",
    "asdict", "astuple", "auto", "c_class", "entry", "field", "fields", "init_property", "is_dataclass",
    "py_class", "replace",
]
