"""Object: the base wrapper class, the class registry that maps type
indices to wrapper classes, and ``register_object``.

Every FFI object reaches Python as an instance of the class registered for
its type index (``register_object``, ``py_class``), or of a class made once
under its parent's class when nobody registered one. The tying slots that
keep one wrapper per native object are installed on each subclass by the
extension (``_ffi.install_slots``).
"""

from __future__ import annotations

import ctypes
import sys
import threading
from typing import Any, Callable, Optional

from .. import _ffi
from .builtin_table import _builtin

__all__ = [
    "Object", "CObject", "CContainerBase", "ObjectConvertible", "ObjectRValueRef", "OpaquePyObject",
    "object_repr", "register_object",
]

_package = sys.modules[__package__]


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

    @property
    def id_(self) -> int:
        """The native object's address (``__chandle__()``; 0 once moved from)."""
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
        sentinel = _SENTINEL_TEXT.get(h)
        if sentinel is not None:
            return sentinel
        # ``core.__object_repr__`` is not consulted: tvm_ffi 0.1.15 ignores it,
        # and the fallback Apache TVM assigns there fails on plain objects
        # (its IR nodes print through their own ``__repr__``).
        return object_repr(self)

    def __move_handle_from__(self, other: "Object") -> None:
        """Take ``other``'s handle: ``self`` becomes the wrapper of its
        object and ``other`` is left moved-from (``__chandle__() == 0``)."""
        _ffi.move_handle(self, other)

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
# The core's process-wide sentinel objects by address, with the text they
# print as (``<MISSING>``); sentinels.py fills it in.
_SENTINEL_TEXT: dict = {}

CObject = _ffi.CObject  # tvm_ffi's name for the native wrapper base (Object derives from it)
ObjectRValueRef = _ffi.RValueRef
_ObjectSlotsMeta = _ObjectMeta  # tvm_ffi's name for the metaclass


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


class ObjectConvertible:
    """Base of Python classes that convert to an FFI object through
    ``asobject()`` when passed to the FFI."""

    def asobject(self) -> "Object":
        raise NotImplementedError()


class OpaquePyObject(Object):
    """The FFI object holding an arbitrary Python object: what
    ``convert(x)`` gives for a value with no FFI form (a call returning one
    gives the Python object itself)."""

    __slots__ = ()

    def pyobject(self) -> Any:
        """The Python object this carries."""
        return _ffi.opaque_payload(self)


def _type_key(type_index: int) -> str:
    return _ffi.type_info(type_index)["key"]


def _attach_reflection(cls: type, type_index: int) -> None:
    """Put the type's own fields (as descriptors) and methods on ``cls``."""
    info = _ffi.type_info(type_index)
    for name, desc in info["fields"]:
        if name not in cls.__dict__:
            setattr(cls, name, desc)
    docs = {m["name"]: m["doc"] for m in info.get("method_details", ())}
    for name, fn in info["methods"]:
        if name not in cls.__dict__:
            setattr(cls, name, _method(fn, name, docs.get(name)))


def _method(fn: "Function", name: str = "method", doc: Optional[str] = None):
    def method(self, *args):
        return _ffi.call(fn, self, *args)

    method.__name__ = name
    method.__doc__ = doc or None
    return method


# What makes a TypeInfo of a type index: type_info.py installs it when it
# loads (it sits above this module -- TypeInfo reads field schemas, which
# name Object -- and core/__init__ always loads it).
_type_info_of_index: Optional[Callable[[int], Any]] = None


def _install_type_info_maker(make: Callable[[int], Any]) -> None:
    global _type_info_of_index  # noqa: PLW0603 - installed once, at import
    _type_info_of_index = make


def _type_info(type_index: int) -> Any:
    if _type_info_of_index is None:
        raise RuntimeError("tether.core.type_info is not loaded: import tether.core first")
    return _type_info_of_index(type_index)


def _attach_static_aware(cls: type, type_index: int) -> None:
    """Reattach methods marked static by the core as static methods."""
    for m in _type_info(type_index).methods:
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
        parent = _class_for_index(info["parent"]) if info["parent"] >= 0 else _CLASS_OBJECT
        key = info["key"]
        module, _, name = key.rpartition(".")
        # As tvm_ffi names such classes: the key's prefix is the module, the
        # whole key the qualified name.
        doc = f"Auto-generated fallback class for {key}.\n\nThis class was created because the type has no registered Python class."
        cls = type(name, (parent,), {"__slots__": (), "__module__": module or "tether.core", "__qualname__": key,
                                     "__doc__": doc})
        _register_class(type_index, cls)
        cls.__tvm_ffi_type_info__ = _type_info(type_index)
        return cls


_register_class(64, Object)
_register_class(_ffi.type_key_to_index("ffi.OpaquePyObject"), OpaquePyObject)
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
        cls.__tvm_ffi_type_info__ = _type_info(index)
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


def _set_class_object(cls: type) -> None:
    """Use ``cls`` (a subclass of ``Object``) for objects of types nobody
    registered a class for."""
    global _CLASS_OBJECT
    if not (isinstance(cls, type) and issubclass(cls, Object)):
        raise TypeError(f"_set_class_object needs a subclass of Object, got {cls!r}")
    _CLASS_OBJECT = cls
    _package._CLASS_OBJECT = cls


_CLASS_OBJECT: type = Object


def _new_object(cls: type):
    """An unbound instance of ``cls`` (the first step of unpickling)."""
    return cls.__new__(cls)


def _object_type_key_to_index(type_key: str) -> Optional[int]:
    """The type index of ``type_key``, or None when the core does not know it."""
    if not isinstance(type_key, str):
        raise TypeError(f"type key must be a str, got {type(type_key).__name__}")
    return _ffi.type_key_to_index(type_key)


def _lookup_type_attr(type_index: int, attr_key: str, ancestor: bool = False):
    """The value of type attribute ``attr_key`` for ``type_index`` (None when
    unset); with ``ancestor``, the nearest ancestor's value when the type has none."""
    value = _ffi.type_attr(type_index, attr_key)
    if value is None and ancestor:
        for parent in reversed(_ffi.type_info(type_index)["ancestors"]):
            value = _ffi.type_attr(parent, attr_key)
            if value is not None:
                break
    return value


def _register_type_attr(type_index: int, attr_key: str, value) -> None:
    """Set type attribute ``attr_key`` of ``type_index`` (the core's ``TVMFFITypeRegisterAttr``)."""
    _ffi.register_type_attr(type_index, attr_key, value)
