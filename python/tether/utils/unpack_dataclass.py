"""Turning Python dataclass values into nested tuples, quickly.

:func:`unpack_dataclass_to_tuple` is what keyword-argument wrappers use to
hand a dataclass argument to an FFI function that takes a tuple: each
dataclass instance becomes a tuple of its field values (recursively), lists
and tuples keep their type with converted elements, dicts keep their keys
with converted values, and anything else is returned as it is (no copies).

For every dataclass type a small specialised function is generated the
first time a value of that type is seen: fields whose annotations prove
they cannot hold a dataclass are read directly, nested dataclass fields are
expanded inline, and the rest are converted by a recursive call at run
time.  The generated functions are cached per thread.
"""

from __future__ import annotations

import dataclasses
import keyword
import threading
import types
import typing
from typing import Any, Optional

__all__ = ["unpack_dataclass_to_tuple"]

# A per-class plan maps each field name to one of:
#   None        the value is a leaf: read the attribute as it is
#   UNPACK      convert the value at run time (it may hold dataclasses)
#   dict        a nested dataclass: expand its own plan inline
DataclassToTupleSchema = dict

UNPACK = "unpack"

_KNOWN_LEAF_TYPES: set = {int, float, str, bool, bytes, complex, type(None)}

# Generic origins that are leaves when every type argument is a leaf.
# ``list`` is absent on purpose: a list is always rebuilt (its elements are
# converted and the list type kept), so it is never read as it is.
_LEAF_CONTAINER_ORIGINS: tuple = (tuple, dict, set, frozenset, typing.Union) + (
    (types.UnionType,) if hasattr(types, "UnionType") else ()
)

_tls = threading.local()


def _is_known_leaf_type(tp: Any) -> bool:
    """Whether values of annotation ``tp`` surely need no conversion."""
    if isinstance(tp, type):
        return tp in _KNOWN_LEAF_TYPES
    if tp is Ellipsis:
        return True
    if typing.get_origin(tp) in _LEAF_CONTAINER_ORIGINS:
        targs = typing.get_args(tp)
        return len(targs) > 0 and all(_is_known_leaf_type(a) for a in targs)
    return False


def _classify_field_type(field_type: Any, memo: Optional[set] = None) -> Any:
    """The plan entry (None, UNPACK or a nested plan) for one annotation."""
    if isinstance(field_type, str) or field_type is Any or field_type is object:
        return UNPACK
    if isinstance(field_type, type) and dataclasses.is_dataclass(field_type):
        if memo is not None and field_type in memo:
            return UNPACK  # a type that contains itself is expanded at run time
        return _extract_dataclass_to_tuple_schema(field_type, memo=memo)
    if isinstance(field_type, type) and field_type in _KNOWN_LEAF_TYPES:
        return None
    if typing.get_origin(field_type) in _LEAF_CONTAINER_ORIGINS:
        targs = typing.get_args(field_type)
        if targs and all(_is_known_leaf_type(a) for a in targs):
            return None
    return UNPACK


def _extract_dataclass_to_tuple_schema(cls: type, *, memo: Optional[set] = None) -> DataclassToTupleSchema:
    """The plan of dataclass type ``cls`` (its fields, in order)."""
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise TypeError(f"Expected a dataclass class, got {cls!r}")
    if memo is None:
        memo = set()
    memo.add(cls)
    try:
        hints = typing.get_type_hints(cls)
    except (NameError, TypeError, AttributeError):
        hints = {}
    return {f.name: _classify_field_type(hints.get(f.name, f.type), memo) for f in dataclasses.fields(cls)}


def _validate_dataclass_to_tuple_schema(plan: DataclassToTupleSchema) -> None:
    """Refuse a plan whose names could not appear verbatim in generated code."""
    if not isinstance(plan, dict):
        raise TypeError(f"DataclassToTupleSchema must be a dict, got {type(plan).__name__}")
    for name, sub in plan.items():
        if not isinstance(name, str):
            raise TypeError(f"Schema field name must be a string, got {type(name).__name__}")
        if not name.isidentifier():
            raise ValueError(f"Schema field name {name!r} is not a valid Python identifier")
        if keyword.iskeyword(name):
            raise ValueError(f"Schema field name {name!r} is a Python keyword")
        if sub is not None and sub != UNPACK:
            _validate_dataclass_to_tuple_schema(sub)


def _compile_dataclass_to_tuple_schema(prefix: str, schema: DataclassToTupleSchema) -> str:
    """A tuple expression reading the fields of ``prefix`` as ``schema`` says."""
    items = []
    for name, sub in schema.items():
        attr = f"{prefix}.{name}"
        if sub is None:
            items.append(attr)
        elif sub == UNPACK:
            items.append(f"__dispatch({attr})")
        else:
            items.append(_compile_dataclass_to_tuple_schema(attr, sub))
    if not items:
        return "()"
    return "(" + ", ".join(items) + ",)"


def _compile_unpacker(cls: type) -> Any:
    plan = _extract_dataclass_to_tuple_schema(cls)
    _validate_dataclass_to_tuple_schema(plan)  # field names go into source text: accept identifiers only
    source = f"def __unpack(__x): return {_compile_dataclass_to_tuple_schema('__x', plan)}"
    scope: dict = {}
    exec(source, {"__dispatch": unpack_dataclass_to_tuple}, scope)  # noqa: S102 - names checked above
    return scope["__unpack"]


def _LEAF_IDENTITY(x: Any) -> Any:
    return x


def unpack_dataclass_to_tuple(x: Any) -> Any:
    """``x`` with every dataclass instance in it turned into a tuple.

    Dataclass instances become tuples of their (converted) field values;
    lists and tuples (named tuples included) are rebuilt with the same type
    from converted elements; dicts are rebuilt with converted values; every
    other value is returned unchanged.  Leaf values are never copied.
    """
    try:
        cache = _tls.cache
    except AttributeError:
        cache = _tls.cache = {}
    cls = type(x)
    unpack = cache.get(cls)
    if unpack is not None:
        return unpack(x)
    if isinstance(cls, type) and dataclasses.is_dataclass(cls):
        unpack = cache[cls] = _compile_unpacker(cls)
        return unpack(x)
    if isinstance(x, (list, tuple)):
        items = (unpack_dataclass_to_tuple(e) for e in x)
        if isinstance(x, tuple) and hasattr(x, "_fields"):
            return cls(*items)
        return cls(items)
    if isinstance(x, dict):
        return {k: unpack_dataclass_to_tuple(v) for k, v in x.items()}
    cache[cls] = _LEAF_IDENTITY
    return x
