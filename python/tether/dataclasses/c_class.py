"""``c_class``: a Python dataclass view over a type defined in native code
(C++ through TVM-FFI's headers, C, Rust) with reflected fields.

``register_object`` puts the core's field descriptors on the class; this
decorator builds :class:`Field` records from each field's flags
(``init``, ``kw_only``, ``repr``, ``compare``, ``hash``, has-default),
replaces the descriptors by :class:`FieldProperty` (frozen when the field
is read-only or the decorator says ``frozen=True``), and installs the
dataclass methods over the type's own ``__ffi_init__``.
"""

from __future__ import annotations

import typing
from typing import Any, Callable, TypeVar

from .. import _ffi, core
from .field import _field_converter, field
from .transform import dataclass_transform
from .dunders import install_dunders
from .field import (FLAG_COMPARE_OFF, FLAG_HAS_DEFAULT, FLAG_HASH_OFF, FLAG_INIT_OFF, FLAG_KW_ONLY,
                    FLAG_REPR_OFF, FLAG_SEQ_HASH_DEF_PATTERN, FLAG_SEQ_HASH_DEF_SIMPLE, FLAG_SEQ_HASH_IGNORE,
                    FLAG_WRITABLE, Field)
from .field_property import FieldProperty
from .field_types import field_type_of
from .py_methods import TYPE_ATTR_NAMES
from .missing import MISSING
from ..core.py_class_registration import _install_native_fields
from ..core.type_info import _field_default

__all__ = ["c_class", "native_fields"]

_T = TypeVar("_T", bound=type)


class _NativeDefault:
    """Stands for a default held by native code (read by its constructor)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<native default>"


NATIVE_DEFAULT = _NativeDefault()


def _structural_eq(flags: int) -> Any:
    if flags & FLAG_SEQ_HASH_IGNORE:
        return "ignore"
    if flags & FLAG_SEQ_HASH_DEF_PATTERN:
        return "def-pattern"
    if flags & FLAG_SEQ_HASH_DEF_SIMPLE:
        return "def-simple"
    return None


def _native_default(type_index: int, name: str, flags: int) -> tuple:
    """``(default, default_factory)`` of a reflected field: what the core
    records (NATIVE_DEFAULT when it has a default it cannot show)."""
    if not flags & FLAG_HAS_DEFAULT:
        return MISSING, MISSING
    try:
        return _field_default(type_index, name)
    except Exception:  # noqa: BLE001 - the default stays the C++ side's
        return NATIVE_DEFAULT, MISSING


def _field_of(name: str, flags: int, hints: dict, frozen: bool, doc: Any = None, type_index: Any = None) -> Field:
    """The :class:`Field` record of one reflected field, from its flags."""
    default, factory = _native_default(type_index, name, flags) if type_index is not None else (
        NATIVE_DEFAULT if flags & FLAG_HAS_DEFAULT else MISSING, MISSING)
    f = Field(name=name, default=default, default_factory=factory,
              frozen=frozen or not flags & FLAG_WRITABLE, init=not flags & FLAG_INIT_OFF,
              repr=not flags & FLAG_REPR_OFF, hash=not flags & FLAG_HASH_OFF,
              compare=not flags & FLAG_COMPARE_OFF, kw_only=bool(flags & FLAG_KW_ONLY),
              structural_eq=_structural_eq(flags), doc=doc)
    f.type = hints.get(name)
    f._ty_schema = field_type_of(f.type) if f.type is not None else None
    return f


def _fields_of(type_index: int, hints: dict, frozen: bool) -> list:
    return [(_field_of(name, desc.flags, hints, frozen, type_index=type_index), desc)
            for name, desc in _ffi.type_info(type_index)["fields"]]


def _hints(cls: type) -> dict:
    try:
        return typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - unresolvable annotations leave the types unknown
        return {}


def _attach_field_objects(cls: type, type_info: Any, *, frozen: bool = False) -> None:
    """Give every own reflected field of ``type_info`` its :class:`Field`
    record (``TypeField.dataclass_field``), typed from ``cls``'s
    annotations where they resolve (as TVM-FFI's ``c_class`` does)."""
    hints = _hints(cls)
    for tf in type_info.fields or ():
        tf.dataclass_field = _field_of(tf.name, tf.flags, hints, frozen, tf.doc)


def _attach_own(type_info: Any, own: list) -> None:
    """Pair each reflected field with its Field record; the record's
    ``_ty_schema`` is the reflected field's own schema object (its storage
    check stays as ``_field_type``)."""
    by_name = {f.name: f for f in own}
    for tf in getattr(type_info, "fields", None) or ():
        if tf.name in by_name:
            f = by_name[tf.name]
            tf.dataclass_field = f
            schema = tf.ty
            tf._ty = schema
            f._field_type, f._ty_schema = f._ty_schema, schema


def _install_raw_init(cls: type) -> None:
    """Give the class TVM-FFI's ``__ffi_init__(self, *args, **kwargs)``,
    which constructs ``self`` in place (an explicit reflected init or the
    generated one), unless its body defines one."""
    from ..registry import _install_ffi_init_attr  # noqa: PLC0415 - registry imports dataclasses

    info = cls.__dict__.get("__tvm_ffi_type_info__")
    if info is None or "__ffi_init__" in cls.__dict__ and not isinstance(cls.__dict__["__ffi_init__"], staticmethod):
        return
    ffi_init = next((m.func for m in info.methods if m.name == "__ffi_init__"), None)
    if ffi_init is None:
        ffi_init = core._lookup_type_attr(info.type_index, "__ffi_init__")
    if ffi_init is not None:
        _install_ffi_init_attr(cls, info, ffi_init)


def native_fields(cls: type) -> list:
    """The :class:`Field` records of a registered class and its ancestors."""
    found = []
    for klass in reversed(cls.__mro__):
        if "__tether_own_fields__" in klass.__dict__:
            found.extend(klass.__dict__["__tether_own_fields__"])
        elif "__tether_type_index__" in klass.__dict__ and klass is not core.Object:
            found.extend(f for f, _ in _fields_of(klass.__dict__["__tether_type_index__"], {}, False))
    return found


# The core reads a natively registered parent's Field records through it.
_install_native_fields(native_fields)


def _install_type_attr_hooks(cls: type, index: int) -> None:
    """The hooks the native type registered in its type-attribute columns
    (``__ffi_hash__``, ``__ffi_eq__``, ``__ffi_repr__``, ``__s_hash__`` ...)
    as class attributes holding those Functions, as tvm_ffi's ``c_class``
    installs them; what the class body defines itself is kept."""
    for name in sorted(TYPE_ATTR_NAMES):
        value = core._lookup_type_attr(index, name)
        if value is not None and name not in cls.__dict__:
            setattr(cls, name, value)


@dataclass_transform(eq_default=False, order_default=False, field_specifiers=(Field, field),
                     converter=_field_converter)
def c_class(type_key: str, *, frozen: bool = False, init: bool = True, repr: bool = True, eq: bool = False,
            order: bool = False, unsafe_hash: bool = False, match_args: bool = True) -> Callable[[_T], _T]:
    """Register ``cls`` as the class of the native type ``type_key`` and
    install dataclass methods from its reflected fields (TVM-FFI's
    ``tvm_ffi.dataclasses.c_class``)."""

    def decorator(cls: _T) -> _T:
        for name, value in list(cls.__dict__.items()):
            if isinstance(value, Field):
                delattr(cls, name)
        shadowed = {n for n in cls.__dict__ if not n.startswith("__")}
        # The dataclass __init__ below replaces register_object's generic one.
        cls = core.register_object(type_key, init=False)(cls)
        index = cls.__tether_type_index__
        hints = _hints(cls)
        own = []
        for f, desc in _fields_of(index, hints, frozen):
            own.append(f)
            if f.name not in shadowed:
                # Native setters convert (and word their errors) themselves.
                setattr(cls, f.name, FieldProperty(f.name, desc, None, bool(f.frozen), f, f.doc))
        cls.__tether_own_fields__ = tuple(own)
        cls.__tether_fields__ = tuple(native_fields(cls))
        _attach_own(getattr(cls, "__tvm_ffi_type_info__", None), own)
        _install_type_attr_hooks(cls, index)
        install_dunders(cls, list(cls.__tether_fields__), init=init, repr=repr, eq=eq, order=order,
                        unsafe_hash=unsafe_hash, match_args=match_args, py_class_mode=False)
        cls.__ffi_is_dataclass__ = True
        _install_raw_init(cls)
        return cls

    return decorator
