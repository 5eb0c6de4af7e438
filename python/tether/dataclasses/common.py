"""``dataclasses``-style helpers over ``py_class`` and ``c_class`` types:
``fields``, ``replace``, ``asdict``, ``astuple``, ``is_dataclass`` (TVM-FFI's
``tvm_ffi.dataclasses`` versions: FFI containers become plain lists and
dicts, other values are deep-copied)."""

from __future__ import annotations

import copy
import functools
from collections import namedtuple
from typing import Any, Callable, Iterable

from .. import container, core
from ..core import CAny, TypeSchema, _to_py_class_value

__all__ = ["asdict", "astuple", "fields", "is_dataclass", "replace"]

_ATOMIC = frozenset({bool, bytes, complex, float, int, str, type(None), type(Ellipsis), type(NotImplemented)})


def is_dataclass(obj: Any) -> bool:
    """Whether ``obj`` is a ``py_class``/``c_class`` type or instance."""
    cls = obj if isinstance(obj, type) else type(obj)
    return cls.__dict__.get("__ffi_is_dataclass__", False) is True or getattr(cls, "__ffi_is_dataclass__", False) is True


def fields(obj_or_cls: Any) -> tuple:
    """The :class:`Field` records of a dataclass type or instance, parents' first."""
    if not is_dataclass(obj_or_cls):
        raise TypeError(f"fields() argument must be a c_class or py_class type or instance, "
                        f"got {type(obj_or_cls).__name__}")
    cls = obj_or_cls if isinstance(obj_or_cls, type) else type(obj_or_cls)
    return tuple(cls.__tether_fields__)


def _schema_of(f: Any) -> Any:
    """The ``TypeSchema`` converting a field's values: its cached schema,
    else (a py_class field's storage check) the schema of its annotation."""
    schema = f._ty_schema
    if isinstance(schema, core.TypeSchema):
        return schema
    annotation = getattr(schema, "schema", None) if schema is not None else None
    if annotation is None:
        annotation = f.type
    return TypeSchema.from_annotation(annotation)


def _make_namedtuple(typename: str, fields: tuple) -> Any:
    """A plain ``collections.namedtuple`` over ``fields`` (all required, in
    the given order) whose construction, ``_make`` and ``_replace`` convert
    each value as the field converts it; the Field records are left as
    they are (the schemas are kept in the constructor's closure)."""
    cls: Any = namedtuple(typename, [f.name for f in fields])
    names = cls._fields
    schemas = tuple(_schema_of(f) for f in fields)
    cls.__annotations__ = {f.name: f.type for f in fields if f.type is not None}
    base_new = cls.__new__
    base_make = cls._make.__func__

    @functools.wraps(base_new)
    def converting_new(klass: type, /, *args: Any, **kwargs: Any) -> Any:
        values = base_new(klass, *args, **kwargs)
        out = []
        for name, schema, value in zip(names, schemas, values):
            try:
                converted = schema.convert(value)
                out.append(_to_py_class_value(converted) if isinstance(converted, CAny) else converted)
            except TypeError as e:
                raise TypeError(f"{typename}.{name}: {e}") from e
        return base_new(klass, *out)

    def converting_make(klass: Any, iterable: Iterable[Any]) -> Any:
        return klass(*base_make(klass, iterable))

    cls.__new__ = staticmethod(converting_new)
    cls._make = classmethod(converting_make)
    return cls


def replace(obj: Any, /, **changes: Any) -> Any:
    """A shallow copy of ``obj`` with some fields changed (frozen ones too)."""
    return obj.__replace__(**changes)


def _is_instance(obj: Any) -> bool:
    return not isinstance(obj, type) and is_dataclass(obj)


def _rebuild_mapping(obj: dict, convert: Callable[[Any], Any]) -> dict:
    """A dict subclass rebuilt with ``convert`` applied to keys and values.
    A ``defaultdict`` (any mapping whose type has ``default_factory``) takes
    its factory as the first constructor argument, not an iterable of
    pairs, so it is built empty and filled (the stdlib's rule)."""
    t = type(obj)
    if hasattr(t, "default_factory"):
        result = t(obj.default_factory)
        for k, v in obj.items():
            result[convert(k)] = convert(v)
        return result
    return t((convert(k), convert(v)) for k, v in obj.items())


def _asdict_inner(obj: Any, factory: Callable) -> Any:
    t = type(obj)
    if t in _ATOMIC:
        return obj
    if isinstance(obj, (container.Array, container.List)):
        return [_asdict_inner(v, factory) for v in obj]
    if isinstance(obj, (container.Map, container.Dict)):
        return factory([(_asdict_inner(k, factory), _asdict_inner(v, factory)) for k, v in obj.items()])
    if _is_instance(obj):
        return factory([(f.name, _asdict_inner(getattr(obj, f.name), factory)) for f in fields(obj)])
    if t is list:
        return [_asdict_inner(v, factory) for v in obj]
    if t is dict:
        return {_asdict_inner(k, factory): _asdict_inner(v, factory) for k, v in obj.items()}
    if t is tuple:
        return tuple(_asdict_inner(v, factory) for v in obj)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return t(*[_asdict_inner(v, factory) for v in obj])
    if isinstance(obj, (list, tuple)):
        return t(_asdict_inner(v, factory) for v in obj)
    if isinstance(obj, dict):
        return _rebuild_mapping(obj, lambda x: _asdict_inner(x, factory))
    return copy.deepcopy(obj)


def _astuple_inner(obj: Any, factory: Callable) -> Any:
    t = type(obj)
    if t in _ATOMIC:
        return obj
    if isinstance(obj, (container.Array, container.List)):
        return [_astuple_inner(v, factory) for v in obj]
    if isinstance(obj, (container.Map, container.Dict)):
        return {_astuple_inner(k, factory): _astuple_inner(v, factory) for k, v in obj.items()}
    if _is_instance(obj):
        return factory([_astuple_inner(getattr(obj, f.name), factory) for f in fields(obj)])
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return t(*[_astuple_inner(v, factory) for v in obj])
    if isinstance(obj, (list, tuple)):
        return t(_astuple_inner(v, factory) for v in obj)
    if isinstance(obj, dict):
        return _rebuild_mapping(obj, lambda x: _astuple_inner(x, factory))
    return copy.deepcopy(obj)


def asdict(obj: Any, *, dict_factory: Callable = dict) -> Any:
    """The fields of a dataclass instance as a new dict, recursively."""
    if not _is_instance(obj):
        raise TypeError("asdict() should be called on c_class / py_class instances")
    return _asdict_inner(obj, dict_factory)


def astuple(obj: Any, *, tuple_factory: Callable = tuple) -> Any:
    """The fields of a dataclass instance as a new tuple, recursively."""
    if not _is_instance(obj):
        raise TypeError("astuple() should be called on c_class / py_class instances")
    return _astuple_inner(obj, tuple_factory)
