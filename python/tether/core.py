"""The wrapper classes and the registry functions of the public API."""

from __future__ import annotations

import ctypes
import threading
from typing import Any, Callable, Iterable, Optional

from . import _ffi

__all__ = [
    "Object", "Function", "Error", "Array", "List", "Map", "Dict", "Shape", "Module", "String", "Bytes",
    "PyNativeObject", "ObjectConvertible", "ObjectRValueRef", "OpaquePyObject", "CObject", "CContainerBase",
    "TypeInfo", "TypeField", "TypeMethod", "TypeSchema", "ERROR_NAME_TO_TYPE", "ERROR_TYPE_TO_NAME",
    "convert", "convert_func", "get_global_func", "register_global_func", "register_object", "load_module",
    "object_repr",
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
        return object_repr(self)

    def is_(self, other: object) -> bool:
        """Whether both wrappers refer to the same native object."""
        return self.same_as(other)

    def __init_handle_by_constructor__(self, fconstructor, *args) -> None:
        """Bind this (handle-less) wrapper to ``fconstructor(*args)``."""
        _ffi.construct(self, fconstructor, *args)

    def __reduce__(self):
        # As tvm_ffi: pickled by value through the core's JSON graph format.
        if not _ffi.chandle(self):
            raise TypeError(f"cannot pickle a moved-from {type(self).__name__}")
        return (_object_from_json_graph, (_ffi.call(_builtin("ffi.ToJSONGraphString"), self, None),))


_ffi.install_slots(Object)
_lock = threading.RLock()

CObject = Object  # tvm_ffi's name for the wrapper base
ERROR_NAME_TO_TYPE: dict = {}  # error kind -> exception class (tether.error)
ERROR_TYPE_TO_NAME: dict = {}
ObjectRValueRef = _ffi.RValueRef


def object_repr(obj: Object) -> str:
    """``ffi.ReprPrint`` of ``obj`` (its ``__ffi_repr__`` hooks applied)."""
    try:
        return _ffi.call(_builtin("ffi.ReprPrint"), obj)
    except Exception:  # a repr must not raise: fall back to key and address
        return f"<{obj.type_key} object at {_ffi.chandle(obj):#x}>"


def _object_from_json_graph(text: str):
    return _ffi.call(_builtin("ffi.FromJSONGraphString"), text)


class CContainerBase(Object):
    """Base of the container classes (tvm_ffi's name)."""

    __slots__ = ()


class PyNativeObject:
    """Base of Python-native values that keep the FFI object they came from
    (``String``, ``Bytes``) in ``_tvm_ffi_cached_object``."""

    __slots__ = ()

    def __init_cached_object_by_constructor__(self, fconstructor, *args) -> None:
        self._tvm_ffi_cached_object = fconstructor(*args)


class String(str, PyNativeObject):
    """A ``str`` that keeps its ``ffi.String`` object: passing it to the FFI
    passes that object, without a copy. ``convert`` returns these."""

    __slots__ = ("_tvm_ffi_cached_object",)

    def __new__(cls, value: str = "") -> "String":
        val = str.__new__(cls, value)
        val._tvm_ffi_cached_object = None
        return val

    def __reduce_ex__(self, protocol):
        return (str, (str(self),))

    @classmethod
    def __from_tvm_ffi_object__(cls, obj) -> "String":
        val = str.__new__(cls, _ffi.string_object_bytes(obj).decode("utf-8"))
        val._tvm_ffi_cached_object = obj
        return val


class Bytes(bytes, PyNativeObject):
    """A ``bytes`` that keeps its ``ffi.Bytes`` object (see ``String``)."""

    def __new__(cls, value: bytes = b"") -> "Bytes":
        val = bytes.__new__(cls, value)
        val._tvm_ffi_cached_object = None
        return val

    def __reduce_ex__(self, protocol):
        return (bytes, (bytes(self),))

    @classmethod
    def __from_tvm_ffi_object__(cls, obj) -> "Bytes":
        val = bytes.__new__(cls, _ffi.string_object_bytes(obj))
        val._tvm_ffi_cached_object = obj
        return val


class _StringObj(Object):
    """The wrapper of an ``ffi.String`` object (held by ``String``)."""

    __slots__ = ()


class _BytesObj(Object):
    """The wrapper of an ``ffi.Bytes`` object (held by ``Bytes``)."""

    __slots__ = ()


class ObjectConvertible:
    """Base of Python classes that convert to an FFI object through
    ``asobject()`` when passed to the FFI."""

    def asobject(self) -> "Object":
        raise NotImplementedError()


class OpaquePyObject(Object):
    """The FFI object holding an arbitrary Python object (as a value it
    comes back as the Python object itself)."""

    __slots__ = ()


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


def _attach_static_aware(cls: type, type_index: int) -> None:
    """Reattach methods marked static by the core as static methods."""
    from .type_info import TypeInfo

    for m in TypeInfo(type_index).methods:
        if m.is_static and m.name in cls.__dict__:
            setattr(cls, m.name, m.as_callable(cls))


def _register_class(type_index: int, cls: type) -> None:
    cls.__tether_type_index__ = type_index
    _ffi.register_class(type_index, cls)
    _attach_reflection(cls, type_index)
    if _ffi.type_info(type_index)["method_details"]:
        _attach_static_aware(cls, type_index)


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


def register_object(type_key: Optional[str] = None, *, init: bool = True):
    """Class decorator: use ``cls`` as the wrapper of the FFI type ``type_key``.

    The type must already be registered with the core (by native code or
    ``py_class``). Its reflected fields become descriptors on ``cls``, its
    methods methods; ``__init__`` calls the type's ``__ffi_init__`` (when
    ``init`` and the type has one); ``repr`` goes through ``ffi.ReprPrint``
    and pickling through the core's JSON graph format (``Object``'s).
    """

    def register(cls: type) -> type:
        key = type_key if type_key is not None else cls.__name__
        if not (isinstance(cls, type) and issubclass(cls, Object)):
            raise TypeError(f"register_object needs a subclass of tether.Object, got {cls!r}")
        index = _ffi.type_key_to_index(key)
        if index is None:
            raise ValueError(f"Cannot find object type index for {key}")
        _register_class(index, cls)
        from .type_info import type_info_of_index

        cls.__tvm_ffi_type_info__ = type_info_of_index(index)
        if init and "__init__" not in cls.__dict__:
            ffi_init = _ffi.type_attr(index, "__ffi_init__")
            if ffi_init is not None:
                def __init__(self, *args):
                    _ffi.construct(self, ffi_init, *args)
            else:
                def __init__(self, *args, **kwargs):
                    raise TypeError(f"`{cls.__name__}` cannot be constructed directly. "
                                    "Define a custom __init__ or use a factory method.")
            __init__.__qualname__ = f"{cls.__qualname__}.__init__"
            cls.__init__ = __init__
        return cls

    if isinstance(type_key, type):  # used as @register_object without arguments
        cls, type_key = type_key, None
        return register(cls)
    return register


class Function(_ffi.FunctionBase, Object):
    """An FFI function; calling it calls the native code (positional
    arguments; ``x._move()`` passes ``x`` by move). ``FunctionBase`` gives
    the wrappers their vectorcall entry (calls without an argument tuple)
    and ``release_gil``: whether calls give the GIL away while the native
    code runs (on by default; ``TVM_FFI_RELEASE_GIL_BY_DEFAULT=0`` turns the
    default off, as for tvm_ffi)."""

    __slots__ = ()

    def __call__(self, *args):  # replaced by a native tp_call below
        return _ffi.call(self, *args)


_ffi.install_function_call(Function)


class Error(Object):
    """An FFI error object (as a value, e.g. inside a container)."""

    __slots__ = ()

    def __new__(cls, kind: str = "RuntimeError", message: str = "", backtrace: str = ""):
        return _ffi.error_new(kind, message, backtrace)

    def __init__(self, *args, **kwargs):
        pass

    @property
    def kind(self) -> str:
        return _error_parts(self)[0]

    @property
    def message(self) -> str:
        return _error_parts(self)[1]

    @property
    def backtrace(self) -> str:
        return _ffi.error_backtrace(self)

    def py_error(self) -> BaseException:
        """The Python exception for this error: the class registered for its
        kind (``register_error``; RuntimeError otherwise), with the native
        backtrace appended to its traceback."""
        from . import error as _error

        return _error._py_error_of(self)

    def __reduce__(self):
        return (Error, (self.kind, self.message, self.backtrace))


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
    "ffi.ReprPrint", "ffi.ToJSONGraphString", "ffi.FromJSONGraphString", "ffi.GetGlobalFuncMetadata",
    "ffi.FunctionListGlobalNamesFunctor", "ffi.FunctionRemoveGlobal",
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


for _index_, _cls in ((68, Function), (67, Error)):
    _register_class(_index_, _cls)
del _index_, _cls
_builtins.update(_load_builtins())


def convert(value: Any) -> Any:
    """Convert a Python value to its FFI form (lists to Array, dicts to Map,
    callables to Function, ...) and return the result as Python sees it.
    Strings and bytes come back as ``String``/``Bytes`` holding their FFI
    object, as tvm_ffi returns them."""
    if isinstance(value, (str, bytes, bytearray)) and not isinstance(value, PyNativeObject):
        cls = String if isinstance(value, str) else Bytes
        obj = _ffi.to_object(value)
        if obj is None:  # stored inline in the value: no object to keep
            return cls(value)
        return cls.__from_tvm_ffi_object__(obj)
    if isinstance(value, BaseException):
        return _ffi.to_object(value)
    return _ffi.convert(value)


def convert_func(pyfunc: Callable) -> "Function":
    """A Python callable as an FFI Function."""
    if not callable(pyfunc):
        raise TypeError(f"convert_func needs a callable, got {type(pyfunc).__name__}")
    if isinstance(pyfunc, Function):
        return pyfunc
    return _ffi.convert(pyfunc)


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


for _index_, _cls in ((65, _StringObj), (66, _BytesObj), (74, OpaquePyObject)):
    _register_class(_index_, _cls)
del _index_, _cls

from . import error as _error  # noqa: E402  (needs Error above)
from . import _convert  # noqa: E402

_ffi.set_hooks(_error._py_error_of, _error._kind_of, _convert._value_from_protocol)


def _sweep_side_table(phase: str, info: dict) -> None:
    # Objects allocated without tether's allocation header are tied through
    # a side table; entries of objects that died are dropped after each
    # collection (and whenever the table doubles).
    if phase == "stop":
        _ffi.sweep_side_table()


import gc as _gc  # noqa: E402

_gc.callbacks.append(_sweep_side_table)

from .module import Module, load_module  # noqa: E402  (an Object subclass over this module's names)
