"""Field-wise equality, hashing and ordering of FFI objects, as TVM-FFI's
``RecursiveEq``/``RecursiveHash``/``RecursiveLt`` define them for ``eq=``,
``unsafe_hash=`` and ``order=``.

Objects with reflected fields compare their fields in declaration order
(parents' first), skipping fields registered with ``compare=False``
(``kTVMFFIFieldFlagBitMaskCompareOff``) or, for hashing, ``hash=False``
(``…HashOff``); ``Array``/``List`` compare element-wise, ``Map``/``Dict``
by keys; the same native object is always equal to itself, so cycles
through one object end. Other values use Python's operators.
"""

from __future__ import annotations

from typing import Any

from .. import _ffi, container, core
from .field import FLAG_COMPARE_OFF, FLAG_HASH_OFF

__all__ = ["recursive_eq", "recursive_hash", "recursive_compare"]

_fields_cache: dict = {}


def reflected_fields(type_index: int) -> list:
    """``[(name, descriptor)]`` of a type and its ancestors, parents' first."""
    found = _fields_cache.get(type_index)
    if found is None:
        chain = []
        index = type_index
        while index >= 0:
            info = _ffi.type_info(index)
            chain.append(info["fields"])
            index = info["parent"]
        found = [f for own in reversed(chain) for f in own]
        _fields_cache[type_index] = found
    return found


def _compared(obj: core.Object, skip: int) -> list:
    return [(name, d) for name, d in reflected_fields(_ffi.type_index_of(obj)) if not d.flags & skip]


def _is_plain_object(x: Any) -> bool:
    return isinstance(x, core.Object) and not isinstance(x, (container._Sequence, container._Mapping, container.Shape))


def recursive_eq(a: Any, b: Any) -> bool:
    if isinstance(a, core.Object) and isinstance(b, core.Object):
        if a.same_as(b):
            return True
        if isinstance(a, container._Sequence) and isinstance(b, container._Sequence):
            if type(a) is not type(b) or len(a) != len(b):
                return False
            return all(recursive_eq(x, y) for x, y in zip(a, b))
        if isinstance(a, container._Mapping) and isinstance(b, container._Mapping):
            if type(a) is not type(b) or len(a) != len(b):
                return False
            for k, v in a.items():
                if k not in b or not recursive_eq(v, b[k]):
                    return False
            return True
        if _ffi.type_index_of(a) != _ffi.type_index_of(b):
            return False
        if not _is_plain_object(a):
            return a == b
        return all(recursive_eq(d.__get__(a, None), d.__get__(b, None)) for _, d in _compared(a, FLAG_COMPARE_OFF))
    if isinstance(a, core.Object) or isinstance(b, core.Object):
        return False
    return bool(a == b)


def recursive_hash(x: Any) -> int:
    if isinstance(x, container._Sequence):
        return hash((type(x).__name__,) + tuple(recursive_hash(v) for v in x))
    if isinstance(x, container._Mapping):
        return hash((type(x).__name__, frozenset((recursive_hash(k), recursive_hash(v)) for k, v in x.items())))
    if _is_plain_object(x):
        values = tuple(recursive_hash(d.__get__(x, None)) for _, d in _compared(x, FLAG_HASH_OFF))
        return hash((_ffi.type_index_of(x),) + values)
    return hash(x)


def _cmp(a: Any, b: Any) -> int:
    if isinstance(a, core.Object) and isinstance(b, core.Object):
        if a.same_as(b):
            return 0
        if isinstance(a, container._Mapping) or isinstance(b, container._Mapping):
            raise TypeError("Cannot order Map/Dict values")
        if isinstance(a, container._Sequence) and isinstance(b, container._Sequence):
            for x, y in zip(a, b):
                c = _cmp(x, y)
                if c:
                    return c
            return (len(a) > len(b)) - (len(a) < len(b))
        if _ffi.type_index_of(a) != _ffi.type_index_of(b):
            raise TypeError(f"Cannot compare objects of different types: {a.type_key} vs {b.type_key}")
        for _, d in _compared(a, FLAG_COMPARE_OFF):
            c = _cmp(d.__get__(a, None), d.__get__(b, None))
            if c:
                return c
        return 0
    if a is None or b is None:
        return (a is not None) - (b is not None)
    if isinstance(a, float) and a != a or isinstance(b, float) and b != b:
        raise TypeError("Cannot order NaN values")
    return (a > b) - (a < b)


def recursive_compare(a: Any, b: Any) -> int:
    """-1, 0 or 1, TypeError for values that have no order."""
    return _cmp(a, b)
