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
from ..container import Array, Dict, List, Map  # noqa: F401  (tvm_ffi.dataclasses.common's names)
from ..core import CAny, TypeSchema, _to_py_class_value
from .field import Field  # noqa: F401

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


def _pairs(flat: list) -> list:
    """``[k0, v0, k1, v1, ...]`` as ``[(k0, v0), (k1, v1), ...]``."""
    return list(zip(flat[0::2], flat[1::2]))


def _flat_items(mapping: Any) -> list:
    return [x for kv in mapping.items() for x in kv]


def _rebuild_mapping(t: type, source: dict, flat: list) -> dict:
    """A dict subclass rebuilt from converted keys and values. A
    ``defaultdict`` (any mapping whose type has ``default_factory``) takes
    its factory as the first constructor argument, not an iterable of
    pairs, so it is built empty and filled (the stdlib's rule)."""
    if hasattr(t, "default_factory"):
        result = t(source.default_factory)
        for k, v in _pairs(flat):
            result[k] = v
        return result
    return t(_pairs(flat))


# What `_transform`'s `expand` returns for a value: a finished leaf, or the
# children to convert first and how to build the result from theirs.
_LEAF = object()


def _transform(root: Any, expand: Callable[[Any], tuple], what: str) -> Any:
    """Converts ``root`` bottom-up on an explicit work stack, so a chain of
    any depth converts without Python recursion; a value met again while
    it is still being converted (a reference cycle) raises ``ValueError``
    instead of looping."""
    first = expand(root)
    if first[0] is _LEAF:
        return first[1]
    active = {id(root)}
    # Frames: [value, children, build, converted children so far].
    stack = [[root, first[1], first[2], []]]
    while True:
        frame = stack[-1]
        value, children, build, done = frame
        if len(done) < len(children):
            child = children[len(done)]
            step = expand(child)
            if step[0] is _LEAF:
                done.append(step[1])
            elif id(child) in active:
                raise ValueError(f"{what}() met a reference cycle through a {type(child).__name__} value")
            else:
                active.add(id(child))
                stack.append([child, step[1], step[2], []])
            continue
        result = build(done)
        stack.pop()
        active.discard(id(value))
        if not stack:
            return result
        stack[-1][3].append(result)


def _expander(build_map: Callable[[list], Any], build_instance: Callable[[list, list], Any]) -> Callable:
    """How ``asdict``/``astuple`` take a value apart: FFI arrays become lists,
    FFI maps ``build_map(pairs)``, dataclass instances
    ``build_instance(field_names, values)``; Python containers keep their
    type (a namedtuple its fields, a ``defaultdict`` its factory); any other
    value is deep-copied."""

    def expand(obj: Any) -> tuple:
        t = type(obj)
        if t in _ATOMIC:
            return _LEAF, obj
        if isinstance(obj, (container.Array, container.List)):
            return None, list(obj), list
        if isinstance(obj, (container.Map, container.Dict)):
            return None, _flat_items(obj), lambda flat: build_map(_pairs(flat))
        if _is_instance(obj):
            names = [f.name for f in fields(obj)]
            return None, [getattr(obj, n) for n in names], lambda values: build_instance(names, values)
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):
            return None, list(obj), lambda values: t(*values)
        if isinstance(obj, (list, tuple)):
            return None, list(obj), t
        if isinstance(obj, dict):
            return None, _flat_items(obj), lambda flat: _rebuild_mapping(t, obj, flat)
        return _LEAF, copy.deepcopy(obj)

    return expand


def _asdict_inner(obj: Any, factory: Callable) -> Any:
    return _transform(obj, _expander(factory, lambda names, values: factory(list(zip(names, values)))), "asdict")


def _astuple_inner(obj: Any, factory: Callable) -> Any:
    return _transform(obj, _expander(dict, lambda names, values: factory(values)), "astuple")


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
