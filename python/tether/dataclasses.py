"""Python-defined FFI classes, following the semantics of :mod:`dataclasses`.

::

    @tether.dataclasses.py_class("demo.Point")
    class Point(tether.dataclasses.Object):
        x: int
        y: int = 0
        tag: str = field(default="", repr=False)

The class becomes a real FFI type (registered with the core at run time),
its instances are FFI objects with typed fields, and its wrappers are lean
(no ``__dict__``), so they keep a stable ``id`` across drop and re-fetch.
"""

from __future__ import annotations

import dataclasses as _std
import inspect
import sys
import types
import typing
from typing import Any, Callable, Optional

from . import _ffi
from .core import Object as _CoreObject
from .core import _builtin, _register_class

__all__ = ["Object", "py_class", "field", "fields", "MISSING", "FrozenInstanceError"]

MISSING = _std.MISSING
FrozenInstanceError = _std.FrozenInstanceError

# TVMFFIFieldInfo flags.
_INIT_OFF = 1 << 9
_REPR_OFF = 1 << 6
_KW_ONLY = 1 << 10
_OBJECT_INDEX = 64


class Object(_CoreObject):
    """Base class of ``py_class`` types."""

    __slots__ = ()


class Field:
    """One field of a ``py_class``; made by :func:`field` or from an annotation."""

    __slots__ = ("name", "type", "default", "default_factory", "init", "repr", "kw_only", "kind", "kind_index")

    def __init__(self, default=MISSING, default_factory=MISSING, init=True, repr=True, kw_only=MISSING):
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name: str = ""
        self.type: Any = None
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.kw_only = kw_only
        self.kind = "any"
        self.kind_index = -1

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, type={self.type!r}, kind={self.kind!r})"


def field(*, default=MISSING, default_factory=MISSING, init=True, repr=True, kw_only=MISSING) -> Any:
    """Describe a field, as :func:`dataclasses.field` does."""
    if default_factory is not MISSING and not callable(default_factory):
        raise TypeError(f"default_factory must be callable, got {type(default_factory).__name__}")
    return Field(default, default_factory, init, repr, kw_only)


def fields(class_or_instance) -> tuple:
    """The fields of a ``py_class`` (parents' first)."""
    cls = class_or_instance if isinstance(class_or_instance, type) else type(class_or_instance)
    try:
        return tuple(cls.__tether_fields__)
    except AttributeError:
        raise TypeError(f"{cls.__name__} is not a py_class") from None


class _Self:
    """Stands for the class being defined inside its own annotations."""


def _resolve(annotation, cls_name: str, module_globals: dict):
    if isinstance(annotation, str):
        try:
            return eval(annotation, dict(module_globals), {cls_name: _Self})  # noqa: S307 - annotations only
        except Exception:
            return Any
    return annotation


def _kind_of(tp) -> tuple:
    """The core field kind for a resolved annotation: (kind, type_index)."""
    origin = typing.get_origin(tp)
    optional = False
    if origin is typing.Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        optional = len(args) < len(typing.get_args(tp))
        if len(args) != 1:
            return ("any", -1)
        tp = args[0]
    if tp is _Self:
        return ("object", _OBJECT_INDEX)
    if isinstance(tp, type) and issubclass(tp, _CoreObject):
        return ("object", getattr(tp, "__tether_type_index__", _OBJECT_INDEX))
    if optional and tp is not str:
        return ("any", -1)  # int/float/bool slots cannot hold None
    if tp is bool:
        return ("bool", -1)
    if tp is int:
        return ("int", -1)
    if tp is float:
        return ("float", -1)
    if tp is str:
        return ("str", -1)
    return ("any", -1)


def _own_fields(cls) -> list:
    module_globals = vars(sys.modules.get(cls.__module__, types.ModuleType("_")))
    out = []
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        tp = _resolve(annotation, cls.__name__, module_globals)
        if typing.get_origin(tp) is typing.ClassVar or tp is typing.ClassVar:
            continue
        value = cls.__dict__.get(name, MISSING)
        f = value if isinstance(value, Field) else Field(default=value)
        if f.default is not MISSING and isinstance(f.default, (list, dict, set)):
            raise ValueError(
                f"mutable default {type(f.default)} for field {name} is not allowed: use default_factory"
            )
        f.name, f.type = name, tp
        f.kind, f.kind_index = _kind_of(tp)
        out.append(f)
    return out


def py_class(type_key: Optional[str] = None, *, frozen: bool = False, init: bool = True, repr: bool = True,
             eq: bool = False, kw_only: bool = False) -> Callable[[type], type]:
    """Define an FFI type from a class body, like :func:`dataclasses.dataclass`."""

    if isinstance(type_key, type):
        raise TypeError("py_class needs parentheses: use @py_class() or @py_class('my.TypeKey')")

    def wrap(cls: type) -> type:
        if not issubclass(cls, _CoreObject):
            raise TypeError(f"py_class {cls.__name__} must derive from tether.dataclasses.Object")
        key = type_key or f"{cls.__module__}.{cls.__qualname__}"
        parent = next(b for b in cls.__mro__[1:] if issubclass(b, _CoreObject))
        parent_index = getattr(parent, "__tether_type_index__", _OBJECT_INDEX)
        parent_fields = list(getattr(parent, "__tether_fields__", ()))
        own = _own_fields(cls)
        for f in own:
            if f.kw_only is MISSING:
                f.kw_only = kw_only
        records = [
            [f.name, f.kind, f.kind_index,
             (0 if f.init else _INIT_OFF) | (0 if f.repr else _REPR_OFF) | (_KW_ONLY if f.kw_only else 0),
             frozen]
            for f in own
        ]
        index = _builtin("tether.dataclass.RegisterType")(key, parent_index, records)

        names = {f.name for f in own}
        ns = {k: v for k, v in cls.__dict__.items() if k not in ("__dict__", "__weakref__") and k not in names}
        ns["__slots__"] = ()
        new_cls = type(cls)(cls.__name__, cls.__bases__, ns)
        new_cls.__qualname__ = cls.__qualname__
        all_fields = parent_fields + own
        new_cls.__tether_fields__ = all_fields
        new_cls.__tether_type_index__ = index
        new_cls.__tether_frozen__ = frozen
        _register_class(index, new_cls)
        ffi_init = _ffi.type_attr(index, "__ffi_init__")
        new_cls.__tether_ffi_init__ = ffi_init

        if init and "__init__" not in cls.__dict__:
            new_cls.__init__ = _make_init(new_cls, all_fields, ffi_init)
        if repr and "__repr__" not in cls.__dict__:
            new_cls.__repr__ = _make_repr(all_fields)
        if eq and "__eq__" not in cls.__dict__:
            new_cls.__eq__ = _make_eq(all_fields)
            if frozen:
                new_cls.__hash__ = lambda self: hash(tuple(getattr(self, f.name) for f in all_fields))
            else:
                new_cls.__hash__ = None
        if frozen:
            new_cls.__setattr__ = _frozen_setattr
            new_cls.__delattr__ = _frozen_setattr
        new_cls.__reduce__ = _reduce
        return new_cls

    return wrap


def _default_of(f: Field):
    if f.default_factory is not MISSING:
        return f.default_factory()
    if f.default is not MISSING:
        return f.default
    return MISSING


class _Factory:
    """Shows a default_factory in a signature."""

    def __init__(self, factory):
        self.factory = factory

    def __repr__(self) -> str:
        return f"<factory {getattr(self.factory, '__name__', self.factory)!r}>"


def _param_default(f: Field):
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return _Factory(f.default_factory)
    return inspect.Parameter.empty


def _make_init(cls, all_fields, ffi_init):
    params = []
    seen_default = False
    positional = [f for f in all_fields if f.init and not f.kw_only]
    keyword = [f for f in all_fields if f.init and f.kw_only]
    for f in positional:
        has_default = f.default is not MISSING or f.default_factory is not MISSING
        if seen_default and not has_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
        seen_default = seen_default or has_default
        params.append(inspect.Parameter(f.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=_param_default(f)))
    for f in keyword:
        params.append(inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=_param_default(f)))
    sig = inspect.Signature(params)
    name = cls.__qualname__

    def __init__(self, *args, **kwargs):
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{name}.__init__(): {e}") from None
        values = []
        for f in all_fields:
            if f.name in bound.arguments:
                values.append(bound.arguments[f.name])
                continue
            v = _default_of(f)
            if v is MISSING:
                if f.init:
                    raise TypeError(f"{name}.__init__() missing required argument: {f.name!r}")
                v = None if f.kind in ("any", "str", "object") else {"int": 0, "float": 0.0, "bool": False}[f.kind]
            values.append(v)
        _ffi.construct(self, ffi_init, *values)
        post = getattr(self, "__post_init__", None)
        if post is not None:
            post()

    __init__.__signature__ = inspect.Signature([inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)] + params)
    __init__.__qualname__ = f"{name}.__init__"
    return __init__


def _make_repr(all_fields):
    shown = [f.name for f in all_fields if f.repr]

    def __repr__(self):
        if self.__chandle__() == 0:
            return f"<{type(self).__qualname__} (moved)>"
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in shown)
        return f"{type(self).__qualname__}({inner})"

    return __repr__


def _make_eq(all_fields):
    names = [f.name for f in all_fields]

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.same_as(other) or all(getattr(self, n) == getattr(other, n) for n in names)

    return __eq__


def _frozen_setattr(self, name, *value):
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _reduce(self):
    values = tuple(getattr(self, f.name) for f in type(self).__tether_fields__)
    return (_reconstruct, (type(self), values))


def _reconstruct(cls, values):
    obj = cls.__new__(cls)
    _ffi.construct(obj, cls.__tether_ffi_init__, *values)
    return obj
