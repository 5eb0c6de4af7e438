"""Python classes for the test object types of the testing library
(``testing.TestIntPair``, ``testing.TestObjectBase``, the ``_TestCxx*``
dataclass fixtures, ...) and small helpers over its globals, under the
names ``tvm_ffi.testing.testing`` gives them.

The classes are ``c_class`` views over types the native library defines;
the two payload enum fixtures (``_TestCxxIntEnum``, ``_TestCxxStrEnum``)
bind natively declared types that have no variants of their own: their
variants (``low``/``high``, ``add``/``mul``) are made here, as upstream's
``tvm_ffi.testing`` makes them.
"""

from __future__ import annotations

import sys
from typing import Any, ClassVar, Mapping, Optional, Sequence

from .. import _ffi_api as _core_ffi_api
from .. import core as _core
from .. import core as tvm_ffi_core  # noqa: F401  (tvm_ffi.testing.testing's name for the core module)
from ..core import Object, get_global_func
from ..dataclasses import IntEnum, StrEnum, c_class, entry

__all__ = [
    "TestCompare", "TestCustomCompare", "TestCustomHash", "TestEqWithoutHash", "TestFrozenCxx", "TestHash",
    "TestIntPair", "TestNonCopyable", "TestObjectBase", "TestObjectDerived", "TestObjectPtrHolder",
    "_SchemaAllTypes", "_TestCxxAutoInit", "_TestCxxAutoInitAllInitOff", "_TestCxxAutoInitChild",
    "_TestCxxAutoInitKwOnlyDefaults", "_TestCxxAutoInitParent", "_TestCxxAutoInitSimple", "_TestCxxClassBase",
    "_TestCxxClassDerived", "_TestCxxClassDerivedDerived", "_TestCxxEnumHolder", "_TestCxxInitSubset",
    "_TestCxxIntEnum", "_TestCxxKwOnly", "_TestCxxNoAutoInit", "_TestCxxStrEnum", "add_one", "create_object",
    "make_unregistered_object", "requires_py310", "requires_py312", "requires_py313",
]


def _requires(version: tuple) -> Any:
    """A pytest skip marker for Pythons older than ``version`` (a no-op
    decorator when pytest is not installed)."""
    try:
        import pytest
    except ImportError:
        return lambda f: f
    return pytest.mark.skipif(sys.version_info < version,
                              reason=f"requires Python {version[0]}.{version[1]}+")


requires_py310 = _requires((3, 10))
requires_py312 = _requires((3, 12))
requires_py313 = _requires((3, 13))


@c_class("testing.TestObjectBase")
class TestObjectBase(Object):
    """Base test object: an int, a float and a string field with defaults."""

    __test__ = False

    v_i64: int
    v_f64: float
    v_str: str


@c_class("testing.TestIntPair")
class TestIntPair(Object):
    """Two read-only ints ``a`` and ``b``; ``sum()`` adds them."""

    __test__: ClassVar[bool] = False

    a: int
    b: int


@c_class("testing.TestFrozenCxx", frozen=True)
class TestFrozenCxx(Object):
    """A native type whose writable fields the Python class freezes."""

    __test__: ClassVar[bool] = False

    value: int
    tag: str


@c_class("testing.TestObjectDerived")
class TestObjectDerived(TestObjectBase):
    """Derived test object adding a map and an array."""

    __test__ = False

    v_map: Mapping[Any, Any]
    v_array: Sequence[Any]


@c_class("testing.TestObjectPtrHolder")
class TestObjectPtrHolder(Object):
    """Holds a required and an optional ``TestObjectBase``."""

    __test__ = False

    value: TestObjectBase
    optional_value: Optional[TestObjectBase]


@c_class("testing.TestNonCopyable")
class TestNonCopyable(Object):
    """A test object whose native type cannot be copied."""

    __test__ = False

    value: int


@c_class("testing.SchemaAllTypes")
class _SchemaAllTypes(Object):
    """Fields and methods of every schema kind (``make_with`` builds one)."""

    v_bool: bool
    v_int: int
    v_float: float
    v_device: Any
    v_dtype: Any
    v_string: str
    v_bytes: bytes
    v_opt_int: Optional[int]
    v_opt_str: Optional[str]
    v_arr_int: Sequence[int]
    v_arr_str: Sequence[str]
    v_map_str_int: Mapping[str, int]
    v_map_str_arr_int: Mapping[str, Sequence[int]]
    v_variant: Any
    v_opt_arr_variant: Optional[Sequence[Any]]


def create_object(type_key: str, **kwargs: Any) -> Object:
    """Make an object of ``type_key`` by reflection, its fields given by
    keyword (the others take their defaults). For tests only."""
    args: list = [type_key]
    for name, value in kwargs.items():
        args += [name, value]
    return _core_ffi_api.MakeObjectFromPackedArgs(*args)


def make_unregistered_object() -> Object:
    """An object of a type that has no Python class."""
    return get_global_func("testing.make_unregistered_object")()


def add_one(x: int) -> int:
    """``x + 1``, computed natively."""
    return get_global_func("testing.add_one")(x)


@c_class("testing.TestCompare")
class TestCompare(Object):
    """``ignored_field`` takes no part in comparisons."""

    __test__ = False

    key: int
    name: str
    ignored_field: int


@c_class("testing.TestHash")
class TestHash(Object):
    """``hash_ignored`` takes no part in hashing."""

    __test__ = False

    key: int
    name: str
    hash_ignored: int


@c_class("testing.TestCustomHash")
class TestCustomHash(Object):
    """A native ``__ffi_hash__`` hook hashes ``key`` only."""

    __test__ = False

    key: int
    label: str


@c_class("testing.TestCustomCompare")
class TestCustomCompare(Object):
    """Native ``__ffi_eq__`` / ``__ffi_compare__`` hooks look at ``key`` only."""

    __test__ = False

    key: int
    label: str


@c_class("testing.TestEqWithoutHash")
class TestEqWithoutHash(Object):
    """An ``__ffi_eq__`` hook without ``__ffi_hash__``: hashing refuses it."""

    __test__ = False

    key: int
    label: str


@c_class("testing.TestCxxClassBase")
class _TestCxxClassBase(Object):
    v_i64: int
    v_i32: int
    not_field_1 = 1
    not_field_2: ClassVar[int] = 2

    def __init__(self, v_i64: int, v_i32: int) -> None:
        # A user-written __init__ over the native constructor (shifted
        # values, so tests can tell it ran).
        ffi_init = _core._lookup_type_attr(type(self).__tvm_ffi_type_info__.type_index, "__ffi_init__")
        self.__init_handle_by_constructor__(ffi_init, v_i64 + 1, v_i32 + 2)


@c_class("testing.TestCxxClassDerived", eq=True, order=True, unsafe_hash=True)
class _TestCxxClassDerived(_TestCxxClassBase):
    v_f64: float
    v_f32: float


@c_class("testing.TestCxxClassDerivedDerived")
class _TestCxxClassDerivedDerived(_TestCxxClassDerived):
    v_str: str
    v_bool: bool


class _TestCxxIntEnum(IntEnum, type_key="testing.TestCxxIntEnum"):
    low = entry(value=10)
    high = entry(value=20)


class _TestCxxStrEnum(StrEnum, type_key="testing.TestCxxStrEnum"):
    add = entry(value="+")
    mul = entry(value="*")


@c_class("testing.TestCxxEnumHolder")
class _TestCxxEnumHolder(Object):
    __test__ = False

    priority: _TestCxxIntEnum
    opcode: _TestCxxStrEnum


@c_class("testing.TestCxxInitSubset")
class _TestCxxInitSubset(Object):
    required_field: int
    optional_field: int
    note: str


@c_class("testing.TestCxxKwOnly")
class _TestCxxKwOnly(Object):
    x: int
    y: int
    z: int
    w: int


@c_class("testing.TestCxxAutoInit")
class _TestCxxAutoInit(Object):
    """``b`` is left out of ``__init__``; ``c`` is keyword-only."""

    __test__ = False

    a: int
    b: int
    c: int
    d: int


@c_class("testing.TestCxxAutoInitSimple")
class _TestCxxAutoInitSimple(Object):
    """Every field positional."""

    __test__ = False

    x: int
    y: int


@c_class("testing.TestCxxAutoInitAllInitOff")
class _TestCxxAutoInitAllInitOff(Object):
    """No field in ``__init__``."""

    __test__ = False

    x: int
    y: int
    z: int


@c_class("testing.TestCxxAutoInitKwOnlyDefaults")
class _TestCxxAutoInitKwOnlyDefaults(Object):
    """Positional, keyword-only, defaulted and excluded fields together."""

    __test__ = False

    p_required: int
    p_default: int
    k_required: int
    k_default: int
    hidden: int


@c_class("testing.TestCxxNoAutoInit", init=False)
class _TestCxxNoAutoInit(Object):
    """No native ``__ffi_init__`` at all."""

    __test__ = False

    x: int
    y: int


@c_class("testing.TestCxxAutoInitParent")
class _TestCxxAutoInitParent(Object):
    """Parent of the inheritance case of the generated ``__init__``."""

    __test__ = False

    parent_required: int
    parent_default: int


@c_class("testing.TestCxxAutoInitChild")
class _TestCxxAutoInitChild(_TestCxxAutoInitParent):
    """Child of the inheritance case of the generated ``__init__``."""

    __test__ = False

    child_required: int
    child_kw_only: int
