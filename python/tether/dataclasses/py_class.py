"""``py_class``: an FFI type defined by a Python class body, with
TVM-FFI's dataclass semantics.

The decorator works on the class itself (it is never rebuilt, so
zero-argument ``super()`` in its methods keeps working; ``Object``'s
metaclass already made it lean). It resolves the annotations of the class
(and of unregistered mixins between it and its registered parent), turns
them into :class:`Field` records, registers the type in tvm_ffi's two
steps (``core._register_py_class``, then the fields-resolved hooks, then
``TypeInfo._register_fields``: TVM-FFI's native layouts, defaults and
factories, each write converted by the field's schema), puts a property
per field on the class, and installs the dataclass methods (``dunders``).
"""

from __future__ import annotations

import copy
import functools
import sys
import typing
from typing import Any, ClassVar, Optional

from ..core.type_info import type_info_of_index
from ..method import method  # noqa: F401  (tvm_ffi.dataclasses.py_class's name)

from .. import core
from ..core import TypeSchema  # noqa: F401  (tvm_ffi.dataclasses.py_class's name)
from .transform import dataclass_transform
from .deferred import UnresolvedAnnotations, by_module, defer, flush, from_other_modules, is_pending, note_registered
from .dunders import install_dunders
from .field import KW_ONLY, Field, _field_converter, field, init_property
from .field_types import field_type_of
from .py_methods import _collect_py_methods, check_py_methods, register_py_methods, register_type_attrs  # noqa: F401
from .missing import MISSING

__all__ = ["py_class"]

STRUCTURE_KINDS = {None: 0, "tree": 1, "var": 2, "dag": 3, "const-tree": 4, "singleton": 5}
_OBJECT_INDEX = 64


def _registered_parent(cls: type) -> type:
    for base in cls.__mro__[1:]:
        if "__tether_type_index__" in base.__dict__:
            return base
    raise TypeError(f"{cls.__name__} must inherit from a registered FFI Object type (e.g. tvm_ffi.Object)")


def _owners(cls: type, parent: type) -> list:
    """Classes whose annotations become this type's fields: ``cls`` and
    unregistered mixins not already represented by the registered parent."""
    represented = set(parent.__mro__)
    return [b for b in reversed(cls.__mro__)
            if b is not object and b not in represented and b.__dict__.get("__annotations__")]


def _resolve(owner: type, cls: type, caller_locals: Optional[dict] = None,
             caller_globals: Optional[dict] = None) -> dict:
    """The resolved annotations of ``owner``'s body; UnresolvedAnnotations
    (listing each one that fails) when some cannot be evaluated yet."""
    module = sys.modules.get(owner.__module__)
    globalns = dict(vars(module)) if module is not None else dict(caller_globals or {})
    # Names local to the function that defines the class (a class defined
    # beside it, as in ``a: Inner``) resolve as they would in its body, and
    # so do the py_classes of its module (before the module binds them).
    localns = from_other_modules(cls.__module__)
    localns.update(by_module(owner.__module__))
    localns.update(by_module(cls.__module__))
    localns.update(caller_locals or {})
    localns.update({cls.__name__: cls, owner.__name__: owner})
    out = {}
    problems = []
    for name, annotation in owner.__dict__.get("__annotations__", {}).items():
        if annotation is KW_ONLY or annotation == "KW_ONLY" or annotation == "dataclasses.KW_ONLY":
            out[name] = KW_ONLY
            continue
        if isinstance(annotation, str):
            try:
                annotation = eval(annotation, globalns, localns)  # noqa: S307 - class annotations
            except Exception as e:  # noqa: BLE001 - reported with the others
                problems.append(f"{name}: {annotation} ({e})")
                continue
        if _has_forward_ref(annotation):
            # Quoted names inside an annotation (``Optional["Node"]``, the
            # class naming itself) resolve in the same scope, so the field
            # is checked as declared rather than taken as Any.
            try:
                annotation = _eval_nested(annotation, globalns, localns)
            except Exception as e:  # noqa: BLE001 - reported with the others
                problems.append(f"{name}: {annotation} ({e})")
                continue
        out[name] = annotation
    if problems:
        raise UnresolvedAnnotations(cls, problems)
    return out


def _has_forward_ref(tp: Any, depth: int = 0) -> bool:
    """Whether a resolved annotation still holds a quoted name."""
    if isinstance(tp, (str, typing.ForwardRef)):
        return True
    if depth > 32:  # annotations nest a few levels; a deeper one is not walked
        return False
    return any(_has_forward_ref(a, depth + 1) for a in typing.get_args(tp))


def _eval_nested(tp: Any, globalns: dict, localns: dict) -> Any:
    """``tp`` with every quoted name in it evaluated in the class's scope,
    as ``typing.get_type_hints`` evaluates a class's annotations."""
    holder = type("_Annotations", (), {"__annotations__": {"tp": tp}, "__module__": __name__})
    return typing.get_type_hints(holder, globalns=globalns, localns=localns, include_extras=True)["tp"]


def _is_class_var(tp: Any) -> bool:
    return tp is ClassVar or typing.get_origin(tp) is ClassVar


def _collect_fields(cls: type, parent: type, params: dict) -> list:
    own: dict = {}
    ip_funcs: dict = {}
    kw_only_active = params["kw_only"]
    marker_types = _marker_types(cls)
    markers = params["field_markers"] = []  # afresh on each try of a deferred class
    inherited = 0
    ancestor = type_info_of_index(parent.__tether_type_index__)
    while ancestor is not None:
        inherited += len(ancestor.fields or ())
        ancestor = ancestor.parent_type_info
    for owner in _owners(cls, parent):
        for name, tp in _resolve(owner, cls, params.get("caller_locals"), params.get("caller_globals")).items():
            if _is_class_var(tp):
                continue
            if any(tp is marker for marker in marker_types):
                # An extension's marker annotation, no field: its hooks read
                # where it stands (the value assigned in the body stays).
                markers.append((tp, owner, name, inherited + len(own)))
                continue
            if tp is KW_ONLY:
                kw_only_active = True
                if owner is cls and name in cls.__dict__:
                    delattr(cls, name)
                continue
            value = owner.__dict__.get(name, MISSING)
            if isinstance(value, Field):
                f = value if owner is cls else copy.copy(value)
            elif isinstance(value, init_property):
                f = field(init=False, structural_eq="ignore", repr=False, hash=False, compare=False)
                ip_funcs[name] = value.func
            elif value is not MISSING:
                f = field(default=value)
            else:
                f = field()
            if owner is cls and value is not MISSING:
                delattr(cls, name)
            f.name, f.type = name, tp
            f._field_type = field_type_of(tp, cls)
            f._ty_schema = _annotation_schema(tp, f._field_type)
            if f.kw_only is None:
                f.kw_only = kw_only_active
            if params["frozen"]:
                f.frozen = True
            if f.hash is None:
                f.hash = f.compare
            own[name] = f
    if ip_funcs:
        cls.__ffi_init_property_funcs__ = ip_funcs
    return list(own.values())


def _marker_types(cls: type) -> tuple:
    """The annotation types ``cls`` (or a base) declares as an extension's
    field markers (``__ffi_field_markers__``)."""
    markers = getattr(cls, "__ffi_field_markers__", ())
    if not isinstance(markers, (tuple, list)) or not all(isinstance(m, type) for m in markers):
        raise TypeError("__ffi_field_markers__ must be a tuple or list of types")
    return tuple(markers)


def _annotation_schema(tp: Any, field_type: Any) -> Any:
    """The TypeSchema of a resolved annotation; the field type itself when
    no schema describes it yet (a class still waiting for registration)."""
    try:
        return core.TypeSchema.from_annotation(tp)
    except (TypeError, ValueError):
        return field_type


def _fields_resolved_hooks(cls: type) -> list:
    """Callables marked ``__ffi_on_fields_resolved__`` in the bodies of
    ``cls`` and its bases (bases first)."""
    return [hook for base in reversed(cls.__mro__) for hook in base.__dict__.values()
            if callable(hook) and getattr(hook, "__ffi_on_fields_resolved__", False) is True]


@dataclass_transform(eq_default=False, order_default=False, field_specifiers=(Field, field),
                     converter=_field_converter)
def py_class(cls_or_type_key: Any = None, /, *, type_key: Optional[str] = None, frozen: bool = False,
             init: bool = True, repr: bool = True, eq: bool = False, order: bool = False,
             unsafe_hash: bool = False, match_args: bool = True, kw_only: bool = False,
             structural_eq: Optional[str] = "tree", slots: bool = True) -> Any:
    """Register a Python-defined FFI class with dataclass semantics.

    ``@py_class``, ``@py_class("my.Key")``, ``@py_class(eq=True)`` and
    ``@py_class("my.Key", frozen=True, ...)`` all work; options as
    TVM-FFI's ``tvm_ffi.dataclasses.py_class``.
    """
    if order and not eq:
        raise ValueError("order=True requires eq=True")
    if structural_eq not in STRUCTURE_KINDS:
        allowed = sorted(k for k in STRUCTURE_KINDS if k is not None)
        raise ValueError(f"structural_eq must be one of {allowed} or None, got {structural_eq!r}")
    params = {"frozen": frozen, "init": init, "repr": repr, "eq": eq, "order": order,
              "unsafe_hash": unsafe_hash, "match_args": match_args, "kw_only": kw_only}
    explicit_key = type_key
    caller = sys._getframe(1)
    # A snapshot of the defining scope's names, read when the decorator runs
    # (module scope: its globals, which _resolve reads anyway).
    caller_locals = caller.f_locals if caller.f_locals is not caller.f_globals else None
    caller_globals = caller.f_globals
    del caller

    def decorator(cls: type) -> type:
        if not (isinstance(cls, type) and issubclass(cls, core.Object)):
            raise TypeError(f"{getattr(cls, '__name__', cls)} must inherit from a registered FFI Object type "
                            f"(e.g. tvm_ffi.Object)")
        finish = functools.partial(_finish, cls, explicit_key, dict(params, caller_locals=caller_locals,
                                                                     caller_globals=caller_globals),
                                   structural_eq)
        try:
            if is_pending(cls):
                raise UnresolvedAnnotations(cls, ["a base class waits for its annotations"])
            finish()
        except UnresolvedAnnotations:
            defer(cls, finish)
            return cls
        flush()
        return cls

    if cls_or_type_key is None:
        return decorator
    if isinstance(cls_or_type_key, str):
        explicit_key = cls_or_type_key
        return decorator
    if isinstance(cls_or_type_key, type):
        return decorator(cls_or_type_key)
    raise TypeError(f"py_class: expected str or type, got {type(cls_or_type_key)}")


def _finish(cls: type, explicit_key: Optional[str], params: dict, structural_eq: Optional[str]) -> None:
    """Resolve the fields of ``cls``, register its type and install its
    field properties and methods (UnresolvedAnnotations, registering
    nothing, while an annotation names something not defined yet)."""
    parent = _registered_parent(cls)
    check_py_methods(cls)
    own = _collect_fields(cls, parent, params)
    if "__tether_fields__" not in parent.__dict__ and parent.__tether_type_index__ != _OBJECT_INDEX:
        _adopt_native_fields(parent)
    key = explicit_key or f"{cls.__module__}.{cls.__qualname__}"
    parent_info = core._type_cls_to_type_info(parent)
    info = core._register_py_class(parent_info, key, cls)
    try:
        parent_markers = getattr(parent_info, "_decorator_args", {}).get("field_markers", ())
        info._decorator_args = dict(params, structural_eq=structural_eq,
                                    field_markers=tuple(parent_markers) + tuple(params["field_markers"]))
        # Hooks run before the fields reach the core: they may still settle
        # metadata and consume their own field options.
        for hook in _fields_resolved_hooks(cls):
            hook(info, own)
        for f in own:
            if f.extra_kwargs:
                raise TypeError(f"{cls.__name__}.{f.name}: unrecognized field options: "
                                + ", ".join(sorted(f.extra_kwargs)))
        # Writes convert once, in the core's setter (the field's own
        # conversion), so the class's properties pass values through.
        info._register_fields(own, STRUCTURE_KINDS[structural_eq])
    except BaseException:
        core._rollback_py_class(info)
        raise
    index = info.type_index
    all_fields = list(cls.__tether_fields__)
    for tf in info.fields:
        setattr(cls, tf.name, tf.as_property(cls))
    install_dunders(cls, all_fields, py_class_mode=True, **params_for_dunders(params))
    cls.__ffi_is_dataclass__ = True
    register_py_methods(cls, index, params.get("caller_globals"))
    register_type_attrs(cls, index)
    cls.__tvm_ffi_type_info__ = info
    if "__ffi_init__" not in cls.__dict__:
        # The raw constructor, for custom ``__init__`` bodies (init=False).
        from ..registry import _install_ffi_init_attr  # noqa: PLC0415 - registry imports dataclasses

        _install_ffi_init_attr(cls, info, core._lookup_type_attr(index, "__ffi_init__"))
    info._read_back_methods()
    note_registered(cls)


def params_for_dunders(params: dict) -> dict:
    return {k: params[k] for k in ("init", "repr", "eq", "order", "unsafe_hash", "match_args")}


def _adopt_native_fields(parent: type) -> None:
    """A py_class deriving from a native (c_class or registered) type: give
    the parent its :class:`Field` records so the child's ``__init__``
    knows the inherited fields."""
    from .c_class import native_fields  # noqa: PLC0415 - c_class imports this module

    parent.__tether_fields__ = tuple(native_fields(parent))
