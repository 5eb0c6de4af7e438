"""The FFI containers as Python sequences and mappings: Array, List, Map,
Dict, and Shape (a tuple holding its object), with the protocols apache-tvm-ffi's ``tvm_ffi.container``
gives them (slicing, concatenation, ``index``/``count``, structural ``==``
and ``hash``, ``repr`` through the core's ``ffi.ReprPrint``).

Every item read goes through the FFI return path, so items are the one
canonical wrapper of their native object (``a[0] is a[0]``).
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import operator
from numbers import Integral
from typing import Callable, Iterable, TypeVar

from . import _ffi
from . import core  # noqa: F401  (tvm_ffi.container's name)
from .core import MISSING, Object, PyNativeObject, _builtin, _register_class  # noqa: F401  (MISSING: tvm_ffi.container's name)

__all__ = ["Array", "List", "Map", "Dict", "Shape", "KeysView", "ValuesView", "ItemsView",
           "getitem_helper", "normalize_index"]

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")


def normalize_index(length: int, idx) -> int:
    """``idx`` (any integer-like) as an index in ``[0, length)``: negative
    indices count from the end; IndexError outside the range."""
    try:
        index = operator.index(idx)
    except TypeError:
        raise TypeError(f"indices must be integers or slices, not {type(idx).__name__}") from None
    if index < -length or index >= length:
        raise IndexError(f"Index out of range. size: {length}, got index {index}")
    return index + length if index < 0 else index


def getitem_helper(obj, elem_getter: Callable, length: int, idx):
    """``obj[idx]`` from a per-index getter: one element for an integer
    index, a list for a slice."""
    if isinstance(idx, slice):
        return [elem_getter(obj, i) for i in range(*idx.indices(length))]
    return elem_getter(obj, normalize_index(length, idx))


def _repr_print(obj) -> str:
    return _ffi.call(_builtin("ffi.ReprPrint"), obj)


def _seq_eq(a, b) -> bool:
    if len(a) != len(b):
        return False
    return all(_item_eq(x, y) for x, y in zip(a, b))


def _item_eq(x, y) -> bool:
    if isinstance(x, (_Sequence, _Mapping)) or isinstance(y, (_Sequence, _Mapping)):
        return x == y
    return x == y if not (isinstance(x, Object) and isinstance(y, Object)) else x.same_as(y) or x == y


def _seq_hash(seq) -> int:
    return hash(("tether.seq",) + tuple(hash(x) for x in seq))


def _compare_other(other):
    """What a sequence compares equal with: FFI sequences, lists and tuples."""
    if isinstance(other, (_Sequence, list, tuple)):
        return other
    return NotImplemented


class _Sequence(Object):
    """Read access shared by Array and List (named by their builtins)."""

    __slots__ = ()
    _size_fn = _getitem_fn = _contains_fn = ""

    @staticmethod
    def _normalize(i: int, n: int) -> int:
        """Python's negative indices; the core's globals take ``0 <= i < n``
        (the message is tvm_ffi's)."""
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError(f"Index out of range. size: {n}, got index {i}")
        return j

    def __len__(self) -> int:
        return _ffi.call(_builtin(self._size_fn), self)

    def _getitem_py(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return _ffi.call(_builtin(self._getitem_fn), self, self._normalize(_index(i), len(self)))

    # ``a[i]`` is the classes' native subscript slot (installed for every
    # subclass): int indices are read natively, other keys come back to
    # ``_getitem_py``. ``__getitem__`` itself must not be a Python function:
    # CPython would then call it directly from ``a[i]``, bypassing the slot.
    __getitem__ = functools.partialmethod(operator.getitem)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__getitem__" not in cls.__dict__:
            _ffi.install_seq_getitem(cls)

    def __contains__(self, value) -> bool:
        if isinstance(value, (list, tuple)) and not isinstance(value, Object):
            # tuples/lists convert to Arrays, which compare by identity in
            # the core: look them up structurally instead, as tvm_ffi does.
            return any(_item_eq(item, value) for item in self)
        return _ffi.call(_builtin(self._contains_fn), self, value)

    def __bool__(self) -> bool:
        return len(self) > 0

    def index(self, value, start: int = 0, stop: int = None) -> int:
        n = len(self)
        for i in range(*slice(start, stop).indices(n)):
            if _item_eq(self[i], value):
                return i
        raise ValueError()  # tvm_ffi's (empty) message

    def count(self, value) -> int:
        return sum(1 for item in self if _item_eq(item, value))

    def __eq__(self, other) -> bool:
        other = _compare_other(other)
        if other is NotImplemented:
            return NotImplemented
        return self.same_as(other) or _seq_eq(list(self), list(other))

    def __ne__(self, other) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return _seq_hash(self)

    def __add__(self, other):
        return type(self)(itertools.chain(self, other))

    def __radd__(self, other):
        return type(self)(itertools.chain(other, self))

    def __class_getitem__(cls, item):
        import types
        return types.GenericAlias(cls, item)

    def __iter__(self):
        return iter(_ffi.seq_items(self))

    def __repr__(self) -> str:
        if not _ffi.chandle(self):
            return Object.__repr__(self)
        return _repr_print(self)

    __str__ = __repr__

    def __reduce__(self):
        return (type(self), (list(self),))

    def __deepcopy__(self, memo=None):
        # The core's deep copy, as tvm_ffi's containers: sharing and cycles
        # carry over to the copy (copy.deepcopy through __reduce__ would
        # recurse without end on a List that contains itself).
        return _ffi.call(_builtin("ffi.DeepCopy"), self)


# The C ABI's static type indices of the two sequence kinds.
_ARRAY_INDEX = 71
_LIST_INDEX = 75


class Array(_Sequence):
    """An immutable FFI sequence; ``Array([1, 2, 3])``."""

    __slots__ = ()
    _size_fn, _getitem_fn, _contains_fn = "ffi.ArraySize", "ffi.ArrayGetItem", "ffi.ArrayContains"

    def __new__(cls, items: Iterable = ()):
        if type(items) is list or type(items) is tuple:
            return _ffi.call_seq(_builtin("ffi.Array"), items, _ARRAY_INDEX)
        return _ffi.call(_builtin("ffi.Array"), *items)


def _index(i) -> int:
    if isinstance(i, bool):
        raise TypeError(f"indices must be integers, not {type(i).__name__}")
    try:
        return operator.index(i)
    except TypeError:
        raise TypeError(f"indices must be integers or slices, not {type(i).__name__}") from None


class List(_Sequence):
    """A mutable FFI sequence; ``List([1, 2, 3])``."""

    __slots__ = ()
    _size_fn, _getitem_fn, _contains_fn = "ffi.ListSize", "ffi.ListGetItem", "ffi.ListContains"

    def __new__(cls, items: Iterable = ()):
        if type(items) is list or type(items) is tuple:
            return _ffi.call_seq(_builtin("ffi.List"), items, _LIST_INDEX)
        return _ffi.call(_builtin("ffi.List"), *items)

    def __iter__(self):
        # Other threads may mutate the list meanwhile: read each item through
        # the list's lock and stop, like CPython's dict, if the size changed.
        size_fn, getitem_fn = _builtin(self._size_fn), _builtin(self._getitem_fn)
        size = _ffi.call(size_fn, self)
        for i in range(size):
            try:
                item = _ffi.call(getitem_fn, self, i)
            except IndexError:
                # i < the size seen at the start: the list shrank under us.
                raise RuntimeError("List changed size during iteration") from None
            if _ffi.call(size_fn, self) != size:
                raise RuntimeError("List changed size during iteration")
            yield item

    def __setitem__(self, i, value) -> None:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step != 1:
                targets = list(range(start, stop, step))
                values = list(value)
                if len(values) != len(targets):
                    raise ValueError(
                        f"attempt to assign sequence of size {len(values)} to extended slice of size {len(targets)}"
                    )
                for j, v in zip(targets, values):
                    _ffi.call(_builtin("ffi.ListSetItem"), self, j, v)
                return
            stop = max(start, stop)
            _ffi.call(_builtin("ffi.ListReplaceSlice"), self, start, stop, List(value))
            return
        _ffi.call(_builtin("ffi.ListSetItem"), self, self._normalize(_index(i), len(self)), value)

    def __delitem__(self, i) -> None:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step != 1:
                for j in sorted(range(start, stop, step), reverse=True):
                    _ffi.call(_builtin("ffi.ListPop"), self, j)
                return
            _ffi.call(_builtin("ffi.ListEraseRange"), self, start, max(start, stop))
            return
        self.pop(i)

    def append(self, value) -> None:
        _ffi.call(_builtin("ffi.ListAppend"), self, value)

    def insert(self, i: int, value) -> None:
        # Python's list.insert clamps the position into [0, len].
        n = len(self)
        i = _index(i)
        i = i + n if i < 0 else i
        _ffi.call(_builtin("ffi.ListInsert"), self, min(max(i, 0), n), value)

    def pop(self, i: int = -1):
        n = len(self)
        if n == 0:
            raise IndexError("pop from empty list")
        return _ffi.call(_builtin("ffi.ListPop"), self, self._normalize(_index(i), n))

    def reverse(self) -> None:
        _ffi.call(_builtin("ffi.ListReverse"), self)

    def clear(self) -> None:
        _ffi.call(_builtin("ffi.ListClear"), self)

    def extend(self, values: Iterable) -> None:
        for v in list(values):  # a snapshot: l.extend(l) doubles l once
            self.append(v)

    def __iadd__(self, values):
        self.extend(values)
        return self

    __hash__ = _Sequence.__hash__


class _Mapping(Object):
    """Read access shared by Map and Dict (named by their builtins)."""

    __slots__ = ()
    _size_fn = _getitem_fn = _count_fn = _or_missing_fn = _iter_fn = ""

    @staticmethod
    def _flat_pairs(items) -> list:
        if not hasattr(items, "items") and not hasattr(items, "__iter__"):
            # As tvm_ffi, which reads ``items.items()``: neither a mapping
            # nor pairs is an AttributeError.
            raise AttributeError(f"{type(items).__name__!r} object has no attribute 'items'")
        pairs = items.items() if hasattr(items, "items") else items
        flat = []
        for k, v in pairs:
            flat += (k, v)
        return flat

    def _iter_pairs(self):
        """(key, value) pairs through the core's forward iterator, which
        raises RuntimeError if a Dict changes under it."""
        it = _ffi.call(_builtin(self._iter_fn), self)
        # Command 3 asks the cursor itself whether it starts on a pair; a
        # separate len() would race with writers on other threads.
        if not it(3):
            return
        while True:
            yield it(0), it(1)
            if not it(2):
                return

    @staticmethod
    def _is_missing(value) -> bool:
        return isinstance(value, Object) and value.same_as(_ffi.call(_builtin("ffi.GetInvalidObject")))

    def __len__(self) -> int:
        return _ffi.call(_builtin(self._size_fn), self)

    def __getitem__(self, key):
        return _ffi.call(_builtin(self._getitem_fn), self, key)

    def __contains__(self, key) -> bool:
        return _ffi.call(_builtin(self._count_fn), self, key) != 0

    def get(self, key, default=None):
        ret = _ffi.call(_builtin(self._or_missing_fn), self, key)
        return default if self._is_missing(ret) else ret

    def items(self) -> "ItemsView":
        return ItemsView(self)

    def keys(self) -> "KeysView":
        return KeysView(self)

    def values(self) -> "ValuesView":
        return ValuesView(self)

    def __iter__(self):
        return iter(self.keys())

    def __bool__(self) -> bool:
        return len(self) > 0

    def __eq__(self, other) -> bool:
        # As tvm_ffi: a mapping equals FFI mappings only (not a dict).
        if not isinstance(other, _Mapping):
            return NotImplemented
        if self.same_as(other):
            return True
        if len(self) != len(other):
            return False
        for k, v in self._iter_pairs():
            if k not in other or not _item_eq(other[k], v):
                return False
        return True

    def __ne__(self, other) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return hash(("tether.map", frozenset((hash(k), hash(v)) for k, v in self._iter_pairs())))

    def __class_getitem__(cls, item):
        import types
        return types.GenericAlias(cls, item)

    def __repr__(self) -> str:
        if not _ffi.chandle(self):
            return Object.__repr__(self)
        if isinstance(self, Dict):
            # the core's printer has no Dict case yet; a Map with the same
            # items prints in the same format
            return _repr_print(Map(list(self._iter_pairs())))
        return _repr_print(self)

    __str__ = __repr__

    def __reduce__(self):
        return (type(self), (dict(self._iter_pairs()),))

    def __deepcopy__(self, memo=None):
        # As for sequences: the core's deep copy keeps sharing and cycles.
        return _ffi.call(_builtin("ffi.DeepCopy"), self)


class Map(_Mapping):
    """An immutable FFI mapping; ``Map({"a": 1})``."""

    __slots__ = ()
    _size_fn, _getitem_fn, _count_fn = "ffi.MapSize", "ffi.MapGetItem", "ffi.MapCount"
    _or_missing_fn, _iter_fn = "ffi.MapGetItemOrMissing", "ffi.MapForwardIterFunctor"

    def __new__(cls, items=()):
        if type(items) is dict:
            return _ffi.call_pairs(_builtin("ffi.Map"), items)
        return _ffi.call(_builtin("ffi.Map"), *cls._flat_pairs(items))


class Dict(_Mapping):
    """A mutable FFI mapping, shared by reference; ``Dict({"a": 1})``."""

    __slots__ = ()
    _size_fn, _getitem_fn, _count_fn = "ffi.DictSize", "ffi.DictGetItem", "ffi.DictCount"
    _or_missing_fn, _iter_fn = "ffi.DictGetItemOrMissing", "ffi.DictForwardIterFunctor"

    def __new__(cls, items=()):
        if type(items) is dict:
            return _ffi.call_pairs(_builtin("ffi.Dict"), items)
        return _ffi.call(_builtin("ffi.Dict"), *cls._flat_pairs(items))

    def __setitem__(self, key, value) -> None:
        _ffi.call(_builtin("ffi.DictSetItem"), self, key, value)

    def __delitem__(self, key) -> None:
        if _ffi.call(_builtin("ffi.DictCount"), self, key) == 0:
            raise KeyError(key)
        _ffi.call(_builtin("ffi.DictErase"), self, key)

    _NO_DEFAULT = object()

    def pop(self, key, default=_NO_DEFAULT):
        ret = _ffi.call(_builtin("ffi.DictGetItemOrMissing"), self, key)
        if self._is_missing(ret):
            if default is Dict._NO_DEFAULT:
                raise KeyError(key)
            return default
        _ffi.call(_builtin("ffi.DictErase"), self, key)
        return ret

    def setdefault(self, key, default=None):
        ret = _ffi.call(_builtin("ffi.DictGetItemOrMissing"), self, key)
        if self._is_missing(ret):
            self[key] = default
            return default
        return ret

    def update(self, other=(), **kwargs) -> None:
        pairs = other.items() if hasattr(other, "items") else other
        for k, v in pairs:
            self[k] = v
        for k, v in kwargs.items():
            self[k] = v

    def clear(self) -> None:
        _ffi.call(_builtin("ffi.DictClear"), self)


class _ShapeObj(Object):
    """The wrapper of an ``ffi.Shape`` object (what a ``Shape`` holds)."""

    __slots__ = ()

    def _dims(self) -> tuple:
        # TVM-FFI's ShapeObj: the header (24 bytes), then a pointer to the
        # int64 dimensions and their count; a Shape never changes.
        h = _ffi.chandle(self)
        data, size = ctypes.c_void_p.from_address(h + 24).value, ctypes.c_size_t.from_address(h + 32).value
        return tuple((ctypes.c_int64 * size).from_address(data)) if size else ()


class Shape(tuple, PyNativeObject):
    """An immutable tuple of ints that keeps its ``ffi.Shape`` object in
    ``_tvm_ffi_cached_object``, as tvm_ffi's: usable wherever a tuple is,
    and passed to the FFI as that object (not as a new Array). Every
    ``ffi.Shape`` the FFI returns comes back as one of these."""

    def __new__(cls, content: Iterable[int] = ()) -> "Shape":
        dims = tuple(content)
        if any(not isinstance(d, Integral) for d in dims):
            raise ValueError("Shape must be a tuple of integers")
        made = _ffi.call(_builtin("ffi.Shape"), *dims)
        val = tuple.__new__(cls, made)
        val._tvm_ffi_cached_object = made._tvm_ffi_cached_object
        return val

    @classmethod
    def __from_tvm_ffi_object__(cls, obj: _ShapeObj) -> "Shape":
        """The Shape of an ``ffi.Shape`` object's wrapper."""
        val = tuple.__new__(cls, obj._dims())
        val._tvm_ffi_cached_object = obj
        return val

    def __reduce__(self):
        return (Shape, (tuple(self),))


def _attach_shape_type_info() -> None:
    """``Shape`` carries the ``ffi.Shape`` TypeInfo naming it, as tvm_ffi's
    value classes do (see ``core.registration``)."""
    from .core.type_info import TypeInfo

    info = TypeInfo(_SHAPE_INDEX)
    info.type_cls = Shape
    Shape.__tvm_ffi_type_info__ = info
    Shape.__tether_type_index__ = _SHAPE_INDEX


_SHAPE_INDEX = 69


class _View:
    """A live view of a Map or Dict (as ``dict.keys()`` and friends)."""

    __slots__ = ("_mapping",)

    def __init__(self, mapping):
        self._mapping = mapping

    def __len__(self) -> int:
        return len(self._mapping)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"


class KeysView(_View):
    def __iter__(self):
        return (k for k, _ in self._mapping._iter_pairs())

    def __contains__(self, key) -> bool:
        return key in self._mapping


class ValuesView(_View):
    def __iter__(self):
        return (v for _, v in self._mapping._iter_pairs())


class ItemsView(_View):
    def __iter__(self):
        return iter(self._mapping._iter_pairs())

    def __contains__(self, item) -> bool:
        k, v = item
        return k in self._mapping and _item_eq(self._mapping[k], v)


for _index_, _cls in ((71, Array), (75, List), (72, Map), (76, Dict), (_SHAPE_INDEX, _ShapeObj)):
    _register_class(_index_, _cls)
del _index_, _cls
_ffi.register_shape_class(Shape)
_attach_shape_type_info()
