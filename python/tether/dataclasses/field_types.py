"""Field annotations as storage kinds and value checks.

A resolved annotation (``int``, ``Optional[str]``, ``list[int]``, an
object class, ``typing.Any`` …) becomes a :class:`FieldType`: the core slot
kind the run-time type stores it in (``tether.dataclass.RegisterType``'s
``int``/``float``/``bool``/``str``/``object``/``any``) and a check that
converts a Python value before it is stored, with TVM-FFI's messages
(``expected int, got str``, ``element [0]: expected int, got str``).
Containers annotated ``list[T]``/``List[T]`` are stored as FFI ``List``,
``Array[T]``/``tuple[T, ...]`` as ``Array``, ``dict[K, V]``/``Dict`` as
``Dict``, ``Map`` as ``Map``, as TVM-FFI's type schemas convert them.

The check covers what these forms need; a general type-schema converter in
the core (shared with function signatures) would replace it.
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any, Callable, Optional

from .. import container as ffi_containers, core

__all__ = ["FieldType", "field_type_of", "type_name"]

_OBJECT_INDEX = 64
_UNION_ORIGINS = (typing.Union,) + ((types.UnionType,) if hasattr(types, "UnionType") else ())


def type_name(value: Any) -> str:
    """How TVM-FFI names a value's type in conversion errors."""
    if value is None:
        return "None"
    if isinstance(value, core.Object):
        return value.type_key
    return type(value).__name__


class FieldType:
    """How one field stores and checks its values."""

    __slots__ = ("kind", "kind_index", "describe", "_check", "schema", "identity_types")

    def __init__(self, kind: str, describe: str, check: Optional[Callable[[Any], Any]], kind_index: int = -1,
                 schema: Any = None, identity_types: frozenset = frozenset()):
        self.kind = kind
        self.kind_index = kind_index
        self.describe = describe
        self._check = check
        # The annotation as written (resolved), kept for a schema converter.
        self.schema = schema
        # Exact types whose values ``convert`` returns unchanged: constructors
        # skip the call for them.
        self.identity_types = identity_types

    def convert(self, value: Any) -> Any:
        """``value`` as the field stores it, or TypeError."""
        return value if self._check is None else self._check(value)

    def __repr__(self) -> str:
        return f"FieldType({self.describe})"


def _expect(describe: str, ok: Callable[[Any], bool]) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if ok(value):
            return value
        raise TypeError(f"expected {describe}, got {type_name(value)}")

    return check


def _is_int(v: Any) -> bool:
    return isinstance(v, int)


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _to_float(v: Any) -> Any:
    """A float field's value: floats and int64-range ints as they are (the
    core stores them as doubles), wider ints as floats (TypeError when too
    large even for a float), nothing else."""
    if isinstance(v, float) or (isinstance(v, int) and _INT64_MIN <= v <= _INT64_MAX):
        return v
    if isinstance(v, int):
        try:
            return float(v)
        except OverflowError:
            raise TypeError(f"expected float, got an int too large to convert to float ({v.bit_length()} bits)") \
                from None
    raise TypeError(f"expected float, got {type_name(v)}")


def _is_bool(v: Any) -> bool:
    return isinstance(v, (bool, int))


def _object_class_index(cls: type) -> int:
    return getattr(cls, "__tether_type_index__", _OBJECT_INDEX)


def _sequence(container: type, element: Optional[FieldType], describe: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if isinstance(value, (ffi_containers.Array, ffi_containers.List)):
            if isinstance(value, container) and element is None:
                return value
            items = list(value)
        elif isinstance(value, (list, tuple)):
            items = list(value)
        else:
            raise TypeError(f"expected {describe}, got {type_name(value)}")
        if element is not None:
            for i, item in enumerate(items):
                try:
                    items[i] = element.convert(item)
                except TypeError as e:
                    raise TypeError(f"element [{i}]: {e}") from None
        if isinstance(value, container) and all(a is b for a, b in zip(items, value)):
            return value
        return container(items)

    return check


def _mapping(container: type, key: Optional[FieldType], val: Optional[FieldType], describe: str):
    def check(value: Any) -> Any:
        if isinstance(value, (ffi_containers.Map, ffi_containers.Dict)):
            if isinstance(value, container) and key is None and val is None:
                return value
            pairs = value.items()
        elif isinstance(value, dict):
            pairs = list(value.items())
        else:
            raise TypeError(f"expected {describe}, got {type_name(value)}")
        out = []
        for k, v in pairs:
            if key is not None:
                try:
                    k = key.convert(k)
                except TypeError as e:
                    raise TypeError(f"key {k!r}: {e}") from None
            if val is not None:
                try:
                    v = val.convert(v)
                except TypeError as e:
                    raise TypeError(f"value for key {k!r}: {e}") from None
            out.append((k, v))
        if isinstance(value, container):
            return value if key is None and val is None else container(dict(out))
        return container(dict(out))

    return check


def _element(args: tuple, i: int, self_cls: Any) -> Optional[FieldType]:
    if len(args) <= i:
        return None
    t = field_type_of(args[i], self_cls)
    return None if t.kind == "any" and t._check is None else t


def field_type_of(tp: Any, self_cls: Any = None) -> FieldType:
    """The :class:`FieldType` of a resolved annotation (``self_cls`` stands
    for the class being defined when it names itself)."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is object:
        # As tvm_ffi: `object` is no FFI type (Any is the annotation that
        # takes every value).
        raise TypeError(f"Cannot convert {tp!r} to TypeSchema")
    if tp is Any:
        return FieldType("any", "Any", None, schema=tp)
    if tp is type(None) or tp is None:
        return FieldType("any", "None", _expect("None", lambda v: v is None), schema=tp)
    if origin in _UNION_ORIGINS:
        alternatives = [a for a in args if a is not type(None)]
        optional = len(alternatives) < len(args)
        inner = [field_type_of(a, self_cls) for a in alternatives]
        if optional and len(inner) == 1:
            one = inner[0]
            describe = f"Optional[{one.describe}]"
            kind, index = ("object", one.kind_index) if one.kind == "object" else ("any", -1)

            def check_optional(value: Any, one=one) -> Any:
                return None if value is None else one.convert(value)

            return FieldType(kind, describe, check_optional, index, schema=tp)
        describe = " | ".join(t.describe for t in inner) + (" | None" if optional else "")

        def check_union(value: Any) -> Any:
            if value is None and optional:
                return None
            for t in inner:
                try:
                    return t.convert(value)
                except TypeError:
                    continue
            raise TypeError(f"expected {describe}, got {type_name(value)}")

        return FieldType("any", describe, check_union, schema=tp)
    if tp is bool:
        return FieldType("bool", "bool", _expect("bool", _is_bool), schema=tp, identity_types=frozenset((bool, int)))
    if tp is int:
        return FieldType("int", "int", _expect("int", _is_int), schema=tp, identity_types=frozenset((int, bool)))
    if tp is float:
        # int is not passed through unchecked: one beyond int64 becomes a float.
        return FieldType("float", "float", _to_float, schema=tp, identity_types=frozenset((float, bool)))
    if tp is str:
        return FieldType("str", "str", _expect("str", lambda v: isinstance(v, str)), schema=tp,
                         identity_types=frozenset((str,)))
    if tp is bytes:
        return FieldType("any", "bytes", _expect("bytes", lambda v: isinstance(v, (bytes, bytearray))), schema=tp)
    if self_cls is not None and tp is self_cls:
        return _object_type(tp, self_cls)
    if tp is ffi_containers.Shape:  # a tuple subclass holding its object, checked as an object type
        return _object_type(tp, self_cls)
    if isinstance(tp, type) and issubclass(tp, core.Object):
        if tp in (ffi_containers.Array, ffi_containers.List, ffi_containers.Map, ffi_containers.Dict) or origin is not None:
            pass
        else:
            return _object_type(tp, self_cls)
    container = origin if origin is not None else tp
    if container in (list, ffi_containers.List, collections.abc.MutableSequence):
        return FieldType("object", _describe("List", args), _sequence(ffi_containers.List, _element(args, 0, self_cls), "List"),
                         75, schema=tp)
    if container in (tuple, ffi_containers.Array, collections.abc.Sequence):
        return FieldType("object", _describe("Array", args),
                         _sequence(ffi_containers.Array, _element(args, 0, self_cls), "Array"), 71, schema=tp)
    if container in (dict, ffi_containers.Dict, collections.abc.MutableMapping):
        return FieldType("object", _describe("Dict", args),
                         _mapping(ffi_containers.Dict, _element(args, 0, self_cls), _element(args, 1, self_cls), "Dict"),
                         76, schema=tp)
    if container in (ffi_containers.Map, collections.abc.Mapping):
        return FieldType("object", _describe("Map", args),
                         _mapping(ffi_containers.Map, _element(args, 0, self_cls), _element(args, 1, self_cls), "Map"),
                         72, schema=tp)
    if container in (collections.abc.Callable, core.Function) or tp is typing.Callable:
        return FieldType("any", "Callable", _expect("Callable", callable), schema=tp)
    # Other forms (TypeVars, Literal, user generics …) are stored unchecked.
    return FieldType("any", "Any", None, schema=tp)


def _describe(name: str, args: tuple) -> str:
    if not args:
        return name
    return f"{name}[{', '.join(getattr(a, '__name__', repr(a)) for a in args)}]"


def _object_type(tp: type, self_cls: Any) -> FieldType:
    def describe() -> str:
        index = _object_class_index(tp)
        return core._type_key(index) if index != _OBJECT_INDEX or tp is core.Object else tp.__name__

    def check(value: Any) -> Any:
        if isinstance(value, tp):
            return value
        if isinstance(value, core.Object) or value is None:
            raise TypeError(f"expected {describe()}, got {type_name(value)}")
        converted = core.convert(value)
        if isinstance(converted, tp):
            return converted
        raise TypeError(f"expected {describe()}, got {type_name(value)}")

    index = _object_class_index(tp) if tp is not self_cls else _OBJECT_INDEX
    return FieldType("object", tp.__name__, check, index, schema=tp)
