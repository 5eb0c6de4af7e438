"""The wrapper classes and the registry functions of the public API."""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any, Callable, Iterable, Optional

from . import _ffi

__all__ = [
    "Object", "Function", "Error", "Array", "List", "Map", "Shape", "Module",
    "convert", "get_global_func", "register_global_func", "register_object", "load_module",
]


class _ObjectMeta(type):
    """Subclasses of Object are lean unless their body says otherwise: a
    missing ``__slots__`` becomes ``()`` (as TVM-FFI's metaclass does), so
    wrappers keep their ``id`` and decorators such as ``py_class`` can work
    on the class itself (zero-argument ``super()`` keeps its class)."""

    def __new__(mcs, name, bases, namespace, **kwargs):
        namespace.setdefault("__slots__", ())
        return super().__new__(mcs, name, bases, namespace, **kwargs)


class Object(_ffi.CObject, metaclass=_ObjectMeta):
    """Base class of every wrapper of an FFI object.

    Subclasses get the tying slots automatically. Keep subclasses lean
    (``__slots__ = ()``, no ``__del__``) so their wrappers can be revived in
    place; other subclasses still get live identity.
    """

    __slots__ = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _ffi.install_slots(cls)

    def __chandle__(self) -> int:
        """Address of the native object (0 once moved from)."""
        return _ffi.chandle(self)

    def __ctypes_handle__(self) -> ctypes.c_void_p:
        return ctypes.c_void_p(_ffi.chandle(self))

    def same_as(self, other: object) -> bool:
        """Whether both wrappers refer to the same native object."""
        return isinstance(other, Object) and _ffi.chandle(self) == _ffi.chandle(other) != 0

    def _move(self) -> "_ffi.RValueRef":
        """Pass this object's handle to a call by move: the callee takes it."""
        return _ffi.RValueRef(self)

    @property
    def type_key(self) -> str:
        return _type_key(_ffi.type_index_of(self))

    def __repr__(self) -> str:
        h = _ffi.chandle(self)
        if h == 0:
            return f"<{type(self).__name__} (moved)>"
        return f"<{self.type_key} object at {h:#x}>"

    def __reduce__(self):
        raise TypeError(f"cannot pickle {type(self).__name__}: only py_class objects and containers are picklable")


_ffi.install_slots(Object)
_lock = threading.RLock()


def _type_key(type_index: int) -> str:
    return _ffi.type_info(type_index)["key"]


def _attach_reflection(cls: type, type_index: int) -> None:
    """Put the type's own fields (as descriptors) and methods on ``cls``."""
    info = _ffi.type_info(type_index)
    for name, desc in info["fields"]:
        if name not in cls.__dict__:
            setattr(cls, name, desc)
    for name, fn in info["methods"]:
        if name not in cls.__dict__:
            setattr(cls, name, _method(fn))


def _method(fn: "Function"):
    def method(self, *args):
        return _ffi.call(fn, self, *args)

    return method


def _register_class(type_index: int, cls: type) -> None:
    cls.__tether_type_index__ = type_index
    _ffi.register_class(type_index, cls)
    _attach_reflection(cls, type_index)


def _class_for_index(type_index: int) -> type:
    cls = _ffi.registered_class(type_index)
    return cls if cls is not None else _fallback_class(type_index)


def _fallback_class(type_index: int) -> type:
    """Make (once) a class for a type nobody registered, under its parent's class."""
    with _lock:
        cls = _ffi.registered_class(type_index)
        if cls is not None:
            return cls
        info = _ffi.type_info(type_index)
        parent = _class_for_index(info["parent"]) if info["parent"] >= 0 else Object
        name = info["key"].rsplit(".", 1)[-1]
        cls = type(name, (parent,), {"__slots__": (), "__module__": "tether.core", "__qualname__": name})
        _register_class(type_index, cls)
        return cls


_register_class(64, Object)
_ffi.set_class_factory(_fallback_class)


def register_object(type_key: Optional[str] = None):
    """Class decorator: use ``cls`` as the wrapper of the FFI type ``type_key``.

    The type must already be registered with the core (by native code or
    ``py_class``). Its reflected fields become attributes of ``cls``.
    """

    def register(cls: type) -> type:
        key = type_key if type_key is not None else cls.__name__
        if not (isinstance(cls, type) and issubclass(cls, Object)):
            raise TypeError(f"register_object needs a subclass of tether.Object, got {cls!r}")
        index = _ffi.type_key_to_index(key)
        if index is None:
            raise ValueError(f"FFI type {key!r} is not registered")
        _register_class(index, cls)
        return cls

    if isinstance(type_key, type):  # used as @register_object without arguments
        cls, type_key = type_key, None
        return register(cls)
    return register


class Function(Object):
    """An FFI function; calling it calls the native code (positional
    arguments; ``x._move()`` passes ``x`` by move)."""

    __slots__ = ()

    def __call__(self, *args):  # replaced by a native tp_call below
        return _ffi.call(self, *args)


_ffi.install_function_call(Function)


class Error(Object):
    """An FFI error object (as a value, e.g. inside a container)."""

    __slots__ = ()

    @property
    def kind(self) -> str:
        return _error_parts(self)[0]

    @property
    def message(self) -> str:
        return _error_parts(self)[1]


def _error_parts(err: Error):
    return _ffi.error_parts(err)


# The core's builtin functions, looked up once when tether is imported:
# tether's own containers and conversions keep using these even if a user
# later overrides or removes the global names (register_global_func(...,
# override=True), ffi.FunctionRemoveGlobal).
_BUILTIN_NAMES = (
    "ffi.Array", "ffi.ArraySize", "ffi.ArrayGetItem", "ffi.ArrayContains",
    "ffi.List", "ffi.ListSize", "ffi.ListGetItem", "ffi.ListSetItem", "ffi.ListAppend",
    "ffi.ListInsert", "ffi.ListPop", "ffi.ListClear", "ffi.ListContains", "ffi.ListReverse",
    "ffi.ListEraseRange", "ffi.ListReplaceSlice",
    "ffi.Map", "ffi.MapSize", "ffi.MapGetItem", "ffi.MapCount", "ffi.MapGetItemOrMissing",
    "ffi.MapForwardIterFunctor",
    "ffi.Dict", "ffi.DictSize", "ffi.DictGetItem", "ffi.DictSetItem", "ffi.DictCount",
    "ffi.DictErase", "ffi.DictClear", "ffi.DictGetItemOrMissing", "ffi.DictForwardIterFunctor",
    "ffi.GetInvalidObject", "ffi.Shape", "tether.dataclass.RegisterType",
)


def _load_builtins() -> dict:
    found = {}
    for name in _BUILTIN_NAMES:
        f = _ffi.get_global(name)
        if f is None:
            raise ImportError(f"tether's core lacks its builtin function {name!r}")
        found[name] = f
    return found


_builtins: dict = {}


def _builtin(name: str) -> "Function":
    return _builtins[name]


def _get_global(name: str, *args):
    return _ffi.call(_builtin(name), *args)


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

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return _ffi.call(_builtin(self._getitem_fn), self, self._normalize(_index(i), len(self)))

    def __contains__(self, value) -> bool:
        return _ffi.call(_builtin(self._contains_fn), self, value)

    def __iter__(self):
        return iter(_ffi.seq_items(self))

    def __repr__(self) -> str:
        if not _ffi.chandle(self):
            return Object.__repr__(self)
        return f"{type(self).__name__}({list(self)!r})"

    def __reduce__(self):
        return (type(self), (list(self),))


class Array(_Sequence):
    """An immutable FFI sequence; ``Array([1, 2, 3])``."""

    __slots__ = ()
    _size_fn, _getitem_fn, _contains_fn = "ffi.ArraySize", "ffi.ArrayGetItem", "ffi.ArrayContains"

    def __new__(cls, items: Iterable = ()):
        return _ffi.call(_builtin("ffi.Array"), *items)


def _index(i) -> int:
    if isinstance(i, bool) or not isinstance(i, int):
        raise TypeError(f"indices must be integers, not {type(i).__name__}")
    return i


class List(_Sequence):
    """A mutable FFI sequence; ``List([1, 2, 3])``."""

    __slots__ = ()
    _size_fn, _getitem_fn, _contains_fn = "ffi.ListSize", "ffi.ListGetItem", "ffi.ListContains"

    def __new__(cls, items: Iterable = ()):
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
                item = None
            if _ffi.call(size_fn, self) != size:
                raise RuntimeError("List changed size during iteration")
            yield item

    def __setitem__(self, i, value) -> None:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step != 1:
                raise ValueError("List slice assignment supports step 1 only")
            stop = max(start, stop)
            _ffi.call(_builtin("ffi.ListReplaceSlice"), self, start, stop, List(value))
            return
        _ffi.call(_builtin("ffi.ListSetItem"), self, self._normalize(_index(i), len(self)), value)

    def __delitem__(self, i) -> None:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step != 1:
                raise ValueError("List slice deletion supports step 1 only")
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
        for v in values:
            self.append(v)


class _Mapping(Object):
    """Read access shared by Map and Dict (named by their builtins)."""

    __slots__ = ()
    _size_fn = _getitem_fn = _count_fn = _or_missing_fn = _iter_fn = ""

    @staticmethod
    def _flat_pairs(items) -> list:
        pairs = items.items() if hasattr(items, "items") else items
        flat = []
        for k, v in pairs:
            flat += (k, v)
        return flat

    def _iter_pairs(self):
        """(key, value) pairs through the core's forward iterator, which
        raises RuntimeError if a Dict changes under it."""
        it = _ffi.call(_builtin(self._iter_fn), self)
        # Checked after the iterator exists: if the mapping changes in
        # between, the iterator's next call raises RuntimeError.
        if len(self) == 0:
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

    def items(self):
        return list(self._iter_pairs())

    def keys(self):
        return [k for k, _ in self.items()]

    def values(self):
        return [v for _, v in self.items()]

    def __iter__(self):
        return iter(self.keys())

    def __repr__(self) -> str:
        if not _ffi.chandle(self):
            return Object.__repr__(self)
        return f"{type(self).__name__}({dict(self.items())!r})"

    def __reduce__(self):
        return (type(self), (dict(self.items()),))


class Map(_Mapping):
    """An immutable FFI mapping; ``Map({"a": 1})``."""

    __slots__ = ()
    _size_fn, _getitem_fn, _count_fn = "ffi.MapSize", "ffi.MapGetItem", "ffi.MapCount"
    _or_missing_fn, _iter_fn = "ffi.MapGetItemOrMissing", "ffi.MapForwardIterFunctor"

    def __new__(cls, items=()):
        return _ffi.call(_builtin("ffi.Map"), *cls._flat_pairs(items))


class Dict(_Mapping):
    """A mutable FFI mapping, shared by reference; ``Dict({"a": 1})``."""

    __slots__ = ()
    _size_fn, _getitem_fn, _count_fn = "ffi.DictSize", "ffi.DictGetItem", "ffi.DictCount"
    _or_missing_fn, _iter_fn = "ffi.DictGetItemOrMissing", "ffi.DictForwardIterFunctor"

    def __new__(cls, items=()):
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


class Shape(Object):
    """An immutable tuple of ints."""

    __slots__ = ()

    def __new__(cls, dims: Iterable[int] = ()):
        return _ffi.call(_builtin("ffi.Shape"), *dims)

    def _dims(self) -> tuple:
        # TVM-FFI's ShapeObj: the header (24 bytes), then a pointer to the
        # int64 dimensions and their count; a Shape never changes.
        h = _ffi.chandle(self)
        data, size = ctypes.c_void_p.from_address(h + 24).value, ctypes.c_size_t.from_address(h + 32).value
        return tuple((ctypes.c_int64 * size).from_address(data)) if size else ()

    def __len__(self) -> int:
        return len(self._dims())

    def __getitem__(self, i):
        return self._dims()[i]

    def __iter__(self):
        return iter(self._dims())

    def __eq__(self, other) -> bool:
        if isinstance(other, (Shape, tuple, list)):
            return self._dims() == tuple(other)
        return NotImplemented

    __hash__ = Object.__hash__

    def __repr__(self) -> str:
        if not _ffi.chandle(self):
            return Object.__repr__(self)
        return f"Shape({self._dims()!r})"

    def __reduce__(self):
        return (Shape, (self._dims(),))


for _index_, _cls in ((68, Function), (67, Error), (71, Array), (75, List), (72, Map), (76, Dict), (69, Shape)):
    _register_class(_index_, _cls)
del _index_, _cls
_builtins.update(_load_builtins())


def convert(value: Any) -> Any:
    """Convert a Python value to its FFI form (lists to Array, dicts to Map,
    callables to Function, ...) and return the result as Python sees it."""
    return _ffi.convert(value)


_global_funcs: dict = {}


def get_global_func(name: str, allow_missing: bool = False) -> Optional[Function]:
    """The global function ``name`` (the same wrapper every time)."""
    if not isinstance(name, str):
        raise TypeError(f"function name must be a str, got {type(name).__name__}")
    f = _ffi.get_global(name)
    if f is None:
        if allow_missing:
            return None
        raise ValueError(f"global function {name!r} is not registered")
    cached = _global_funcs.get(name)
    if cached is not None and cached.same_as(f):
        return cached
    _global_funcs[name] = f
    return f


def register_global_func(name: str, f: Optional[Callable] = None, override: bool = False):
    """Register a Python callable as global function ``name``; usable as a decorator."""
    if not isinstance(name, str):
        raise TypeError(f"function name must be a str, got {type(name).__name__}")

    def register(func: Callable) -> Callable:
        if not callable(func):
            raise TypeError(f"register_global_func needs a callable, got {type(func).__name__}")
        _ffi.set_global(name, func, override)
        _global_funcs.pop(name, None)
        return func

    return register(f) if f is not None else register


class Module:
    """A loaded shared library; its exported FFI functions (symbols named
    ``__tvm_ffi_<name>``) are reachable as attributes or by ``module[name]``.
    Loading the library also runs its static registrations (types, globals)."""

    def __init__(self, path: str, deep_bind: Optional[bool] = None):
        if not os.path.exists(path):
            raise FileNotFoundError(f"no shared library at {path!r}")
        self.path = path
        self._lib = ctypes.CDLL(path, mode=Module._dlopen_mode(deep_bind))
        self._funcs: dict = {}

    @staticmethod
    def _dlopen_mode(deep_bind: Optional[bool]) -> int:
        """The ``dlopen`` flags for a library built against tether's core.

        On ELF systems a library's undefined ``TVMFFI*`` references resolve
        against the global scope first, where another FFI runtime (e.g.
        ``tvm_ffi``'s ``libtvm_ffi.so``, loaded ``RTLD_GLOBAL``) may already
        sit. ``RTLD_DEEPBIND`` makes the library search its own dependencies
        (the ``libtether_core`` it linked) before the global scope, so it
        registers its globals and types with tether. The price: *every*
        symbol it uses prefers its dependencies, including ``malloc`` /
        ``operator new`` that a sanitizer, jemalloc or tcmalloc interposes
        through ``LD_PRELOAD`` (AddressSanitizer refuses such loads
        outright). ``deep_bind=False`` or ``TETHER_LOAD_DEEPBIND=0`` turns
        it off; the library then binds to whatever the global scope offers.

        The library is loaded ``RTLD_LOCAL`` either way: its functions are
        found through its own handle, and publishing it (and with it
        ``libtether_core``'s ``TVMFFI*`` names) globally would capture the
        references of another runtime's libraries loaded afterwards.
        Platforms without ``RTLD_DEEPBIND`` (macOS's two-level namespace,
        Windows' per-DLL imports) already bind a library to the core it
        linked, so ``deep_bind`` changes nothing there.
        """
        mode = ctypes.RTLD_LOCAL
        if deep_bind is None:
            deep_bind = os.environ.get("TETHER_LOAD_DEEPBIND", "1").strip().lower() not in ("0", "false", "no", "off")
        if deep_bind and hasattr(os, "RTLD_DEEPBIND"):
            mode |= os.RTLD_DEEPBIND
        return mode

    def get_function(self, name: str, allow_missing: bool = False) -> Optional[Function]:
        if name in self._funcs:
            return self._funcs[name]
        try:
            sym = getattr(self._lib, f"__tvm_ffi_{name}")
        except AttributeError:
            if allow_missing:
                return None
            raise AttributeError(f"module {self.path!r} has no function {name!r}") from None
        f = self._funcs[name] = _ffi.function_from_symbol(ctypes.cast(sym, ctypes.c_void_p).value)
        return f

    def __getitem__(self, name: str) -> Function:
        return self.get_function(name)

    def __getattr__(self, name: str) -> Function:
        if name.startswith("_"):
            raise AttributeError(name)
        return self.get_function(name)


def load_module(path: str, deep_bind: Optional[bool] = None) -> Module:
    """Load a shared library built against tether's (or TVM-FFI's) C ABI.

    On Linux the library is loaded with ``RTLD_DEEPBIND`` so that it reaches
    tether's core even when another library exporting the ``TVMFFI*`` names
    is loaded globally; pass ``deep_bind=False`` (or set
    ``TETHER_LOAD_DEEPBIND=0``) when an ``LD_PRELOAD`` allocator or sanitizer
    must interpose the library's symbols. See ``Module._dlopen_mode``.
    """
    return Module(os.fspath(path), deep_bind=deep_bind)
