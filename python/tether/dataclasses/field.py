"""Field declarations of ``py_class`` types: :func:`field`, :class:`Field`,
the ``KW_ONLY`` marker and :class:`init_property`, with TVM-FFI's option
names, defaults and validation messages."""

from __future__ import annotations

import sys
from typing import Any, Callable, Generic, Mapping, Optional, TypeVar

from ..core import TypeSchema  # noqa: F401  (tvm_ffi.dataclasses.field's name)
from .missing import MISSING

__all__ = ["KW_ONLY", "Field", "field", "init_property"]

_T = TypeVar("_T")

if sys.version_info >= (3, 10):
    from dataclasses import KW_ONLY
else:  # pragma: no cover - Python 3.9

    class KW_ONLY:
        """Annotations after ``_: KW_ONLY`` are keyword-only."""

# TVMFFIFieldInfo flags (TVM-FFI's c_api.h values).
FLAG_WRITABLE = 1 << 0
FLAG_HAS_DEFAULT = 1 << 1
FLAG_SEQ_HASH_IGNORE = 1 << 3
FLAG_SEQ_HASH_DEF_PATTERN = 1 << 4
FLAG_DEFAULT_FROM_FACTORY = 1 << 5
FLAG_REPR_OFF = 1 << 6
FLAG_COMPARE_OFF = 1 << 7
FLAG_HASH_OFF = 1 << 8
FLAG_INIT_OFF = 1 << 9
FLAG_KW_ONLY = 1 << 10
FLAG_SEQ_HASH_DEF_SIMPLE = 1 << 12

_STRUCTURAL_EQ_FLAGS = {
    None: 0,
    "ignore": FLAG_SEQ_HASH_IGNORE,
    "def": FLAG_SEQ_HASH_DEF_PATTERN,
    "def-pattern": FLAG_SEQ_HASH_DEF_PATTERN,
    "def-simple": FLAG_SEQ_HASH_DEF_SIMPLE,
}


def _field_converter(value: Any) -> Any:
    """Marker for type checkers: the FFI converts the field's values."""
    return value


class Field:
    """One field of a ``py_class`` or ``c_class`` type.

    Made by :func:`field` (name and type filled in by the decorator) or by
    the decorators themselves for plain annotations and native fields.
    """

    __slots__ = (
        "_field_type", "_ty_schema", "compare", "converter", "default", "default_factory", "doc", "extra_kwargs",
        "frozen", "hash", "init", "kw_only", "metadata", "name", "repr", "structural_eq", "type",
    )

    _VALID_STRUCTURAL_EQ_VALUES = frozenset(_STRUCTURAL_EQ_FLAGS)

    def __init__(self, name: Optional[str] = None, _ty_schema: Any = None, *, default: Any = MISSING,
                 default_factory: Any = MISSING, frozen: bool = False, init: bool = True, repr: bool = True,
                 hash: Optional[bool] = True, compare: bool = False, kw_only: Optional[bool] = False,
                 metadata: Optional[Mapping[str, Any]] = None, structural_eq: Optional[str] = None,
                 doc: Optional[str] = None, converter: Callable[[Any], Any] = _field_converter,
                 **extra_kwargs: Any) -> None:
        if default_factory is not MISSING:
            if default is not MISSING:
                raise ValueError("cannot specify both default and default_factory")
            if not callable(default_factory):
                raise TypeError(f"default_factory must be a callable, got {type(default_factory).__name__}")
        if structural_eq not in _STRUCTURAL_EQ_FLAGS:
            allowed = sorted(_STRUCTURAL_EQ_FLAGS, key=str)
            raise ValueError(f"structural_eq must be one of {allowed}, got {structural_eq!r}")
        self.name = name
        self._ty_schema = _ty_schema
        # py_class's conversion of the field's values (field_types.FieldType).
        self._field_type = None
        self.type = None
        self.default = default
        self.default_factory = default_factory
        self.frozen = frozen
        self.init = init
        self.repr = repr
        self.hash = hash
        self.compare = compare
        self.converter = converter
        self.kw_only = kw_only
        self.metadata = dict(metadata) if metadata is not None else {}
        self.structural_eq = structural_eq
        self.doc = doc
        self.extra_kwargs = dict(extra_kwargs)

    def __copy__(self) -> "Field":
        out = object.__new__(type(self))
        for name in Field.__slots__:
            if hasattr(self, name):
                setattr(out, name, getattr(self, name))
        out.metadata = dict(self.metadata)
        out.extra_kwargs = dict(self.extra_kwargs)
        return out

    def __repr__(self) -> str:
        return (f"Field(name={self.name!r}, type={self.type!r}, default={self.default!r}, "
                f"default_factory={self.default_factory!r}, init={self.init!r}, repr={self.repr!r}, "
                f"hash={self.hash!r}, compare={self.compare!r}, kw_only={self.kw_only!r}, "
                f"frozen={self.frozen!r}, metadata={self.metadata!r})")

    def has_default(self) -> bool:
        return self.default is not MISSING or self.default_factory is not MISSING

    def flags(self) -> int:
        """The TVMFFIFieldInfo flags this field registers with (defaults are
        added by the registration, which knows how they are stored)."""
        flags = _STRUCTURAL_EQ_FLAGS[self.structural_eq]
        if not self.init:
            flags |= FLAG_INIT_OFF
        if not self.repr:
            flags |= FLAG_REPR_OFF
        if not self.compare:
            flags |= FLAG_COMPARE_OFF
        if not self.hash:
            flags |= FLAG_HASH_OFF
        if self.kw_only:
            flags |= FLAG_KW_ONLY
        return flags


def field(*, default: Any = MISSING, default_factory: Any = MISSING, frozen: bool = False, init: bool = True,
          repr: bool = True, hash: Optional[bool] = None, compare: bool = True, kw_only: Optional[bool] = None,
          metadata: Optional[Mapping[str, Any]] = None, structural_eq: Optional[str] = None,
          doc: Optional[str] = None, converter: Callable[[Any], Any] = _field_converter,
          **extra_kwargs: Any) -> Any:
    """Customise one field of a ``py_class``, as :func:`dataclasses.field`
    does, plus ``frozen``, ``structural_eq`` and ``doc``. ``hash=None``
    follows ``compare``; ``kw_only=None`` follows the decorator."""
    return Field(default=default, default_factory=default_factory, frozen=frozen, init=init, repr=repr,
                 hash=hash, compare=compare, kw_only=kw_only, metadata=metadata, structural_eq=structural_eq,
                 doc=doc, converter=converter, **extra_kwargs)


class init_property(Generic[_T]):
    """A field computed once, right after the generated ``__init__`` built
    the object: ``@init_property def area(self) -> float: ...`` registers
    ``area`` as ``field(init=False, repr=False, compare=False, hash=False,
    structural_eq="ignore")`` whose value is ``area(self)``."""

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.name: Optional[str] = None
        self._return_annotation = getattr(func, "__annotations__", {}).get("return")

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        annotation = self._return_annotation if self._return_annotation is not None else Any
        if "__annotations__" not in owner.__dict__:
            owner.__annotations__ = {}
        owner.__annotations__[name] = annotation

