"""FFI enum singletons with the API of ``tvm_ffi.dataclasses.Enum``.

``class Color(Enum, type_key="demo.Color"): red = auto()`` registers the
FFI type ``demo.Color`` deriving from the core's ``ffi.Enum`` (whose
objects carry ``_int_index`` and ``_str_index``) and makes one object per
variant. ``Color.red`` is that object (tied like every wrapper),
``Color(0)``/``Color("red")``/``Color.get(...)`` look it up, iteration
follows declaration order, ``entry(...)`` gives values to extra fields,
``IntEnum``/``StrEnum`` expose ``value``, and ``EnumAttrMap`` attaches
per-variant attributes.

``Enum``, ``IntEnum``, ``StrEnum`` and ``EnumState`` are the classes of the
core's native types. The registry of variants is an ``ffi.EnumState``
object (``entries``, ``indexes`` by int and str index, per-variant
``attrs``) kept as the enum type's ``__ffi_enum__`` type attribute, the
same object C++ code registering variants with TVM-FFI's ``EnumDef``
fills. A ``type_key`` the core already knows (a type declared natively)
is bound with ``c_class``: its ``ClassVar`` binders name variants
registered natively, and new variants are created through its
``__ffi_new__`` and field setters; any other key defines a ``py_class``.
"""

from __future__ import annotations

import typing
from typing import Any, ClassVar, Iterator

from .. import container, core
from ..container import Dict, List  # noqa: F401  (tvm_ffi.dataclasses.enum's names)
from ..core import Object  # noqa: F401
from .c_class import c_class
from .missing import MISSING
from .py_class import py_class

__all__ = ["Enum", "EnumAttrMap", "EnumState", "IntEnum", "StrEnum", "auto", "entry", "ENUM_STATE_ATTR"]

# The type attribute under which an enum type keeps its EnumState.
ENUM_STATE_ATTR = "__ffi_enum__"

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


class _EnumEntry:
    __slots__ = ("args", "kwargs")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args
        self.kwargs = kwargs

    def __repr__(self) -> str:
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"entry({', '.join(parts)})"


def entry(*args: Any, **kwargs: Any) -> Any:
    """Declare a variant, optionally with values for declared fields."""
    return _EnumEntry(*args, **kwargs)


def auto() -> Any:
    """Declare a variant whose indices come from its position and name."""
    return _EnumEntry()


def _normalize_index(index: Any) -> Any:
    if isinstance(index, bool):
        return int(index)
    if isinstance(index, int):
        if not _INT64_MIN <= index <= _INT64_MAX:
            raise OverflowError(f"enum integer index {index} is outside int64")
        return index
    if isinstance(index, str):
        return index
    raise TypeError(f"enum index must be int or str, got {type(index).__name__}")


@c_class("ffi.EnumState")
class EnumState(core.Object):
    """The variants of one enum type: ``entries`` in declaration order,
    ``indexes`` by int and str index, and ``attrs`` (per attribute name,
    a Dict from variant to value)."""

    entries: container.List[core.Object]
    indexes: container.Dict[Any, core.Object]
    attrs: container.Dict[str, container.Dict[core.Object, Any]]


def _state(cls: type, *, create: bool = False) -> Any:
    """The enum type's registered state (made and registered first when
    ``create`` is set and there is none)."""
    info = cls.__dict__.get("__tvm_ffi_type_info__") or getattr(cls, "__tvm_ffi_type_info__", None)
    if info is None:
        return None
    state = core._lookup_type_attr(info.type_index, ENUM_STATE_ATTR)
    if state is None and create:
        core._register_type_attr(info.type_index, ENUM_STATE_ATTR, EnumState())
        state = core._lookup_type_attr(info.type_index, ENUM_STATE_ATTR)
    return state


class _EnumMeta(type(core.Object)):
    def __iter__(cls) -> Iterator[Any]:
        state = _state(cls)
        return iter(list(state.entries) if state else [])

    def __len__(cls) -> int:
        state = _state(cls)
        return len(state.entries) if state else 0

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if not kwargs and len(args) == 1:
            value = args[0]
            if isinstance(value, cls):
                return value
            if isinstance(value, (int, str)):
                try:
                    return cls.get(value)
                except KeyError:
                    raise ValueError(f"{value!r} is not a valid {cls.__name__}") from None
        return super().__call__(*args, **kwargs)


class _ClassProperty:
    __slots__ = ("fget",)

    def __init__(self, fget: Any) -> None:
        self.fget = fget

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        return self.fget(owner if owner is not None else type(instance))


@c_class("ffi.Enum", init=False)
class Enum(core.Object, metaclass=_EnumMeta):
    """Base class of FFI enum singletons."""

    _int_index: int
    _str_index: str

    def __init_subclass__(cls, *, type_key: Any = None, frozen: bool = True, init: bool = True,
                          repr: bool = True, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if type_key is None:
            return
        payload = int if issubclass(cls, IntEnum) else str if issubclass(cls, StrEnum) else None
        user_repr = "__repr__" in cls.__dict__
        binders, declarations = _collect(cls, payload)
        native = core._object_type_key_to_index(type_key) is not None
        if native:
            c_class(type_key, init=init, repr=repr)(cls)
        else:
            py_class(type_key, frozen=frozen, init=init, repr=repr, structural_eq="singleton")(cls)
        if payload is not None:
            _install_payload(cls, payload, user_repr)
        _resolve(cls, binders, declarations, payload, type_key, native)

    @classmethod
    def get(cls, index: Any) -> Any:
        """The variant at a canonical int or str index."""
        index = _normalize_index(index)
        state = _state(cls)
        if state is not None and index in state.indexes:
            return state.indexes[index]
        raise KeyError(index)

    @classmethod
    def all_entries(cls) -> Iterator[Any]:
        return iter(cls)

    @_ClassProperty
    def attr_dict(cls: type) -> Any:
        state = _state(cls)
        return {} if state is None else state.attrs

    @classmethod
    def def_attr(cls, name: str, *, default: Any = MISSING) -> "EnumAttrMap":
        return EnumAttrMap(cls, name, default=default)

    @property
    def name(self) -> str:
        return self._str_index


class EnumAttrMap:
    """A per-variant attribute: ``m[variant] = value``, ``m[variant]``."""

    __slots__ = ("_default", "_enum_cls", "_name")

    def __init__(self, enum_cls: type, name: str, *, default: Any = MISSING) -> None:
        self._enum_cls, self._name, self._default = enum_cls, name, default

    def _check(self, variant: object) -> None:
        if not isinstance(variant, self._enum_cls):
            raise TypeError(f"expected {self._enum_cls.__name__}, got {type(variant).__name__}")

    def _column(self, create: bool) -> Any:
        state = _state(self._enum_cls, create=create)
        if state is None:
            return None
        if create and self._name not in state.attrs:
            state.attrs[self._name] = container.Dict()
        return state.attrs.get(self._name)

    def __setitem__(self, variant: object, value: Any) -> None:
        self._check(variant)
        self._column(True)[variant] = value

    def __getitem__(self, variant: object) -> Any:
        self._check(variant)
        column = self._column(False)
        if column is not None and variant in column:
            return column[variant]
        if self._default is not MISSING:
            return self._default
        raise KeyError(f"{variant!r} has no extensible attribute {self._name!r}")

    def __contains__(self, variant: object) -> bool:
        if not isinstance(variant, self._enum_cls):
            return False
        column = self._column(False)
        return column is not None and variant in column

    def get(self, variant: object, default: Any = None) -> Any:
        return self[variant] if variant in self else default

    @property
    def name(self) -> str:
        return self._name


@c_class("ffi.IntEnum", init=False)
class IntEnum(Enum):
    """Enum whose ``value`` is its int index (a read-only native field)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        _reject_value_field(cls, "IntEnum")
        super().__init_subclass__(**kwargs)


@c_class("ffi.StrEnum", init=False)
class StrEnum(Enum):
    """Enum whose ``name`` and ``value`` are its str index."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        _reject_value_field(cls, "StrEnum")
        super().__init_subclass__(**kwargs)


def _reject_value_field(cls: type, base: str) -> None:
    if "value" in cls.__dict__ or "value" in cls.__dict__.get("__annotations__", {}):
        raise TypeError(f"{base} reserves `value` as its canonical index alias")


def _is_class_var(annotation: Any) -> bool:
    if annotation is ClassVar or typing.get_origin(annotation) is ClassVar:
        return True
    return isinstance(annotation, str) and annotation.replace(" ", "").startswith(("ClassVar", "typing.ClassVar"))


def _collect(cls: type, payload: Any) -> tuple:
    annotations = cls.__dict__.get("__annotations__", {})
    binders = [n for n, a in annotations.items()
               if not n.startswith("_") and _is_class_var(a) and n not in cls.__dict__]
    declared_fields = {n for n, a in annotations.items() if not _is_class_var(a)}
    declarations: dict = {}
    for name, value in list(cls.__dict__.items()):
        if name.startswith("_") or name in declared_fields:
            continue
        if isinstance(value, _EnumEntry):
            declarations[name] = value
        elif payload is not None and not (isinstance(value, (staticmethod, classmethod, property)) or callable(value)):
            declarations[name] = _EnumEntry(value=value)
        else:
            continue
        delattr(cls, name)
    for name in binders:
        del annotations[name]
    return binders, declarations


def _resolve(cls: type, binders: list, declarations: dict, payload: Any, type_key: str, native: bool) -> None:
    state = _state(cls, create=True)
    for alias in binders:
        instance = state.indexes.get(alias)
        if instance is None:
            if native:
                raise RuntimeError(f"{type_key!r} has no enum at string index {alias!r}")
            if payload is int:
                raise TypeError(f"{cls.__name__}.{alias} requires an integer value")
            instance = _create(cls, len(state.entries), alias, _EnumEntry(), native)
            _register(state, instance)
        setattr(cls, alias, instance)
    for alias, declaration in declarations.items():
        kwargs = dict(declaration.kwargs)
        if "_int_index" in kwargs or "_str_index" in kwargs:
            raise TypeError(f"{cls.__name__}.{alias}: enum indices are inferred")
        int_index, str_index = len(state.entries), alias
        if payload is not None:
            if "value" not in kwargs:
                raise TypeError(f"{cls.__name__}.{alias} requires a {payload.__name__} value")
            value = kwargs.pop("value")
            if type(value) is not payload:
                raise TypeError(f"{cls.__name__}.{alias} value must be {payload.__name__}")
            if payload is int:
                int_index = _normalize_index(value)
            else:
                str_index = value
        lookup = int_index if payload is int else str_index
        instance = state.indexes.get(lookup)
        if instance is None:
            if int_index in state.indexes or str_index in state.indexes:
                raise ValueError(f"duplicate enum index in {cls.__name__}.{alias}")
            instance = _create(cls, int_index, str_index, _EnumEntry(*declaration.args, **kwargs), native)
            _register(state, instance)
        setattr(cls, alias, instance)


def _create(cls: type, int_index: int, str_index: str, declaration: _EnumEntry, native: bool) -> Any:
    try:
        if not native:
            return type(cls).__base__.__call__(cls, *declaration.args, _int_index=int_index, _str_index=str_index,
                                               **declaration.kwargs)
        # A natively declared type: a default instance from its allocator,
        # then every value through the field's setter (read-only fields
        # included, as TVM-FFI's EnumDef writes them).
        if declaration.args:
            raise TypeError("entries of a natively declared enum take keyword fields only")
        ffi_new = core._lookup_type_attr(cls.__tvm_ffi_type_info__.type_index, "__ffi_new__")
        if ffi_new is None:
            raise TypeError("the enum type has no allocator (__ffi_new__)")
        instance = ffi_new()
        for name, value in {"_int_index": int_index, "_str_index": str_index, **declaration.kwargs}.items():
            descriptor = getattr(cls, name, None)
            if descriptor is None or not hasattr(descriptor, "set"):
                raise TypeError(f"field {name!r} has no reflected setter")
            descriptor.set(instance, value)
        return instance
    except Exception as err:
        raise TypeError(f"{cls.__name__}.{str_index}: invalid enum entry: {err}") from None


def _register(state: EnumState, instance: Any) -> None:
    state.entries.append(instance)
    state.indexes[instance._int_index] = instance
    state.indexes[instance._str_index] = instance


def _install_payload(cls: type, payload: type, user_repr: bool) -> None:
    def eq(self: Any, other: object) -> Any:
        if isinstance(other, type(self)):
            return self.value == other.value
        if isinstance(other, payload):
            return self.value == other
        return NotImplemented

    def ne(self: Any, other: object) -> Any:
        result = eq(self, other)
        return NotImplemented if result is NotImplemented else not result

    for key, value in {"__eq__": eq, "__ne__": ne, "__str__": lambda self: str(self.value),
                       "__hash__": lambda self: hash(self.value)}.items():
        if key not in cls.__dict__:
            setattr(cls, key, value)
    if not user_repr:
        cls.__repr__ = lambda self: f"{type(self).__name__}.{self.name}"
