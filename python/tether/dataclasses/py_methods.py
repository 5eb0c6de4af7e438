"""Reflection entries of a ``py_class`` body: the callables marked by
``@tvm_ffi.method`` are registered with the core as type methods
(``TVMFFITypeRegisterMethod``), so ``TypeInfo.methods`` lists them and
``m.func(obj, ...)`` calls them; static when wrapped by ``staticmethod``.
Values named by the class's ``__ffi_type_attr_names__`` are registered as
type attributes (``TVMFFITypeRegisterAttr``) instead.

Names of type-attribute columns (``__ffi_repr__``, ``__s_equal__``, ...)
are not registered as methods. Each method's metadata carries its
``Callable`` type schema when its annotations resolve.
"""

from __future__ import annotations

import inspect
import json
import sys
import typing
from typing import Any, Optional

from .. import _ffi, core
from ..core import TypeSchema

__all__ = ["register_py_methods", "register_type_attrs"]

# Type attributes a class copies from its parent's registration unless its
# body defines them (``__ffi_inherit_type_attrs__`` replaces this list; the
# type table itself never inherits).
DEFAULT_INHERIT_TYPE_ATTRS = ("__s_equal__", "__s_hash__", "__s_visit__", "__data_to_json__", "__data_from_json__")

# TypeAttrColumn names: never registered as TypeMethods.
TYPE_ATTR_NAMES = frozenset({
    "__ffi_repr__", "__ffi_hash__", "__ffi_eq__", "__ffi_compare__", "__ffi_convert__",
    "__ffi_convert_type_schema__", "__any_hash__", "__any_equal__", "__s_equal__", "__s_hash__", "__s_visit__",
    "__s_mutate__", "__s_maybe_inplace_mutate__", "__data_to_json__", "__data_from_json__",
})


def _is_marked(value: Any) -> bool:
    if isinstance(value, (staticmethod, classmethod)):
        return getattr(value.__func__, "__ffi_method__", False) is True
    return callable(value) and getattr(value, "__ffi_method__", False) is True


def _callable_json(schema: Optional[TypeSchema] = None) -> str:
    return json.dumps({"type_schema": (schema or TypeSchema("Callable")).to_json()})


def _metadata_json(cls: type, func: Any, is_static: bool, globalns: dict) -> str:
    """``{"type_schema": Callable[[params], return]}`` of a method (plain
    ``Callable`` when its annotations do not resolve or it takes
    ``*args``/``**kwargs``/keyword-only parameters)."""
    localns = {base.__name__: base for base in reversed(cls.__mro__)}
    try:
        hints = typing.get_type_hints(getattr(func, "__wrapped__", func), globalns=globalns, localns=localns)
        params = list(inspect.signature(func).parameters.values())
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY) for p in params):
            return _callable_json()
        args = []
        if not is_static:
            args.append(TypeSchema.from_annotation(cls))
            params = params[1:]
        args += [TypeSchema.from_annotation(hints.get(p.name, Any)) for p in params]
        ret = TypeSchema.from_annotation(hints.get("return", Any))
        return _callable_json(TypeSchema("Callable", named_args={"return": (ret,), "params": tuple(args)}))
    except Exception:  # noqa: BLE001 - the schema is informative only
        return _callable_json()


def _collect_py_methods(cls: type, globalns: Optional[dict] = None) -> Optional[list]:
    """The marked methods of ``cls``'s body: ``(name, func, is_static)``,
    with the metadata JSON as a fourth item when ``globalns`` is given.
    TypeError for one wrapped by ``classmethod``. None when there are none."""
    legacy = globalns is None
    if globalns is None:
        module = sys.modules.get(cls.__module__)
        globalns = dict(vars(module)) if module is not None else {}
    out = []
    attr_names = _type_attr_names(cls)
    for name, value in cls.__dict__.items():
        marked = _is_marked(value)
        if not marked and name not in attr_names:
            continue
        if isinstance(value, classmethod):
            raise TypeError(
                f"@py_class({cls.__name__!r}): {name!r} is wrapped by @classmethod, which is incompatible "
                "with FFI registration — the cls-first arg breaks the packed-call convention. Use "
                "@staticmethod or a plain instance method. If you wrote ``@classmethod @method``, swap to "
                "``@staticmethod @method`` (or drop @classmethod).")
        is_static = isinstance(value, staticmethod)
        func = value.__func__ if is_static else value
        if legacy:
            out.append((name, func, is_static))
        else:
            metadata = None if name in attr_names else _metadata_json(cls, func, is_static, globalns)
            out.append((name, func, is_static, metadata))
    return out or None


def _type_attr_names(cls: type) -> frozenset:
    """The names ``cls``'s body registers as type attributes rather than
    methods: the TypeAttrColumn dunders, its ``__ffi_type_attr_names__``
    and its ``__ffi_inherit_type_attrs__``."""
    extra = _name_list(cls, "__ffi_type_attr_names__", ())
    inherited = _name_list(cls, "__ffi_inherit_type_attrs__", DEFAULT_INHERIT_TYPE_ATTRS)
    return TYPE_ATTR_NAMES | frozenset(extra) | frozenset(inherited)


def check_py_methods(cls: type) -> None:
    """Refuse marked classmethods before anything is registered."""
    _collect_py_methods(cls)


def register_py_methods(cls: type, type_index: int, globalns: Optional[dict] = None) -> None:
    """Register the marked methods of ``cls``'s body as type methods."""
    if globalns is None:
        module = sys.modules.get(cls.__module__)
        globalns = dict(vars(module)) if module is not None else {}
    for name, func, is_static, metadata in _collect_py_methods(cls, globalns) or ():
        if metadata is not None:  # type attributes are registered by register_type_attrs
            _ffi.register_type_method(type_index, name, func, is_static, metadata)


def _name_list(cls: type, attr: str, default: tuple) -> tuple:
    names = getattr(cls, attr, default)
    if not isinstance(names, (tuple, list)) or not all(isinstance(n, str) for n in names):
        raise TypeError(f"{cls.__name__}.{attr} must be a tuple of str, got {names!r}")
    return tuple(names)


def register_type_attrs(cls: type, type_index: int) -> None:
    """Register the type attributes of ``cls``'s body: the TypeAttrColumn
    dunders (``__ffi_repr__``, ``__s_equal__``, ...) and the names its
    ``__ffi_type_attr_names__`` lists (a staticmethod's function as itself;
    None is left out, and stops the parent's from being copied). Then the
    parent's entries named by ``__ffi_inherit_type_attrs__`` (by default
    the structural and serialization hooks) that the body does not define."""
    inherited = _name_list(cls, "__ffi_inherit_type_attrs__", DEFAULT_INHERIT_TYPE_ATTRS)
    names = _type_attr_names(cls)
    for name, value in list(cls.__dict__.items()):
        if name not in names:
            continue
        if isinstance(value, staticmethod):
            value = value.__func__
        if value is not None:
            core._register_type_attr(type_index, name, value)
    from ..core.type_info import type_info_of_index

    parent_index = type_info_of_index(type_index).type_ancestors[-1]
    for name in inherited:
        if name in cls.__dict__:
            continue
        value = _parent_type_attr(parent_index, name)
        if value is not None:
            core._register_type_attr(type_index, name, value)


def _parent_type_attr(index: int, name: str):
    """The nearest ancestor's registered ``name`` (None when none has one,
    or when a class on the way defines it as None)."""
    from ..core.type_info import type_info_of_index  # noqa: PLC0415 - core imports dataclasses lazily

    info = type_info_of_index(index)
    while info is not None:
        value = core._lookup_type_attr(info.type_index, name)
        if value is not None:
            return value
        klass = info.type_cls
        if klass is not None and name in klass.__dict__:
            return None
        info = info.parent_type_info
    return None
