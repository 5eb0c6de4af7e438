"""Global functions and object types, with tvm_ffi's ``registry`` names."""

from __future__ import annotations

import json
import sys
from typing import Any, Optional

import warnings
from typing import Callable, Collection

from . import _ffi, core
from .core import Function, TypeInfo, _builtin, get_global_func, register_global_func
from .core import register_object as _core_register_object

# When set (as Apache TVM does for optional components), register_object on
# a type key the core does not know returns the class unchanged instead of
# raising.
_SKIP_UNKNOWN_OBJECTS = False

__all__ = [
    "get_global_func", "get_global_func_metadata", "get_registered_type_keys", "init_ffi_api",
    "list_global_func_names", "register_global_func", "register_object", "remove_global_func",
]


def register_object(type_key: Optional[str] = None, *, init: bool = True) -> Callable[[type], type]:
    """Class decorator: use the class as the wrapper of the FFI type
    ``type_key`` (default: the class name), which the core must know
    already. ``@register_object``, ``@register_object("key")``. Unknown keys
    raise ValueError unless ``_SKIP_UNKNOWN_OBJECTS`` is set."""

    def register(cls: type, key: str) -> type:
        if _ffi.type_key_to_index(key) is None and _SKIP_UNKNOWN_OBJECTS:
            return cls
        return _core_register_object(key, init=init)(cls)

    if isinstance(type_key, str):
        return lambda cls: register(cls, type_key)
    if type_key is None:
        return lambda cls: register(cls, cls.__name__)
    if isinstance(type_key, type):
        return register(type_key, type_key.__name__)
    raise TypeError(f"type_key must be a string, type, or None, got {type(type_key).__name__}")


def _install_init(cls: type, type_info: TypeInfo) -> None:
    """Give ``cls`` an ``__init__`` that builds the object through the type's
    ``__ffi_init__`` (or one that refuses direct construction), unless its
    body defines one."""
    if "__init__" in cls.__dict__:
        return
    ffi_init = next((m.func for m in type_info.methods if m.name == "__ffi_init__"), None)
    if ffi_init is None:
        ffi_init = core._lookup_type_attr(type_info.type_index, "__ffi_init__")
    if ffi_init is not None:
        def __init__(self, *args, **kwargs):
            _ffi.construct(self, ffi_init, *_packed_args(args, kwargs))
    else:
        name = cls.__name__

        def __init__(self, *args, **kwargs):
            raise TypeError(f"`{name}` cannot be constructed directly. "
                            "Define a custom __init__ or use a factory method.")
    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    __init__.__module__ = cls.__module__
    cls.__init__ = __init__


def _packed_args(args: tuple, kwargs: dict) -> list:
    """Positional arguments, then ``KWARGS`` and name/value pairs (the
    calling convention of ``__ffi_init__``); MISSING values are left out."""
    out = list(args)
    if kwargs:
        out.append(core.KWARGS)
        for key, value in kwargs.items():
            if value is not core.MISSING:
                out += [key, value]
    return out


def _install_ffi_init_attr(cls: type, type_info: TypeInfo, ffi_init: Function) -> None:
    """Give ``cls`` an ``__ffi_init__(*args, **kwargs)`` method that builds
    the object, for custom ``__init__`` bodies to call."""

    def __ffi_init__(self, /, *args, **kwargs):
        if getattr(type(self), "__tvm_ffi_type_info__", type_info) is not type_info:
            raise TypeError(f"Calling `{cls.__name__}.__ffi_init__()` on a `{type(self).__name__}` "
                            f"instance is not supported. Define `{type(self).__name__}` with init=True.")
        _ffi.construct(self, ffi_init, *_packed_args(args, kwargs))

    __ffi_init__.__qualname__ = f"{cls.__qualname__}.__ffi_init__"
    __ffi_init__.__module__ = cls.__module__
    cls.__ffi_init__ = __ffi_init__


def _add_type_attr_class_attrs(type_cls: type, type_info: TypeInfo, type_attr_names: Collection[str]) -> None:
    """Copy the named type attributes of the type onto the class (where the
    class body does not define them)."""
    for name in type_attr_names or ():
        value = core._lookup_type_attr(type_info.type_index, name)
        if value is not None and name not in type_cls.__dict__:
            setattr(type_cls, name, value)


def _add_class_attrs(type_cls: type, type_info: TypeInfo, type_attr_names: Collection[str] = ()) -> type:
    """Put the type's fields (as properties) and methods on the class, an
    ``__ffi_init__`` method when the type has a constructor, and the named
    type attributes."""
    for f in type_info.fields:
        if f.name not in type_cls.__dict__:
            setattr(type_cls, f.name, f.as_property(type_cls))
    has_init = False
    for m in type_info.methods:
        if m.name == "__ffi_init__":
            _install_ffi_init_attr(type_cls, type_info, m.func)
            has_init = True
        elif not hasattr(type_cls, m.name):
            setattr(type_cls, m.name, m.as_callable(type_cls))
    if not has_init:
        ffi_init = core._lookup_type_attr(type_info.type_index, "__ffi_init__")
        if ffi_init is not None:
            _install_ffi_init_attr(type_cls, type_info, ffi_init)
    _add_type_attr_class_attrs(type_cls, type_info, type_attr_names)
    return type_cls


def _warn_missing_field_annotations(cls: type, type_info: TypeInfo, *, stacklevel: int) -> None:
    """Warn when the class body does not annotate some of the type's own
    reflected fields (they still work, but IDEs and docs miss them)."""
    own = set(cls.__dict__.get("__annotations__", {}))
    missing = sorted({f.name for f in type_info.fields} - own)
    if missing:
        warnings.warn(f"@c_class({type_info.type_key!r}): class `{cls.__qualname__}` does not annotate the "
                      f"following reflected field(s): {', '.join(missing)}. Add type annotations "
                      "(e.g. `field_name: type`) to the class body for IDE support and documentation.",
                      UserWarning, stacklevel=stacklevel)


def list_global_func_names() -> list:
    """The names of all registered global functions."""
    names = _ffi.call(_builtin("ffi.FunctionListGlobalNamesFunctor"))
    return [names(i) for i in range(names(-1))]


def remove_global_func(name: str) -> None:
    """Remove the global function ``name`` (no error when it is missing)."""
    _ffi.call(_builtin("ffi.FunctionRemoveGlobal"), name)


def get_global_func_metadata(name: str) -> dict:
    """The metadata recorded with global function ``name`` (its
    ``type_schema``, ...); ``{}`` when it has none. RuntimeError when no
    such function exists."""
    text = _ffi.call(_builtin("ffi.GetGlobalFuncMetadata"), name)
    return json.loads(text) if text else {}


def get_registered_type_keys() -> list:
    """The keys of every registered type."""
    return [str(k) for k in _ffi.call(_builtin("ffi.GetRegisteredTypeKeys"))]


def init_ffi_api(namespace: str, target_module_name: Optional[str] = None) -> None:
    """Put every global function ``<namespace>.<name>`` (one level deep) on
    module ``target_module_name`` (default: ``namespace``) as ``name``, as
    packages' ``_ffi_api.py`` files do with tvm_ffi."""
    target_module_name = target_module_name or namespace
    prefix = namespace[4:] if namespace.startswith("tvm.") else namespace
    target = sys.modules[target_module_name]
    for name in list_global_func_names():
        if not name.startswith(prefix):
            continue
        fname = name[len(prefix) + 1:]
        if not fname or "." in fname:
            continue
        setattr(target, fname, get_global_func(name))
