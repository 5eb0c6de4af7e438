"""Dunder-method installation for ``c_class`` and ``py_class``, where
tvm_ffi keeps it; the builders live in ``tether.dataclasses.dunders``."""

from __future__ import annotations

from . import core  # noqa: F401  (tvm_ffi._dunder's names)
from .core import Object, TypeInfo, object_repr  # noqa: F401
from .dataclasses.dunders import _make_init, _repr, _signature, install_dunders, ordered_init_fields

__all__ = ["_install_dataclass_dunders", "_make_init", "_repr", "_signature", "install_dunders",
           "ordered_init_fields"]


def _install_dataclass_dunders(cls: type, *, init: bool, repr: bool, eq: bool, order: bool, unsafe_hash: bool,
                               match_args: bool = True, py_class_mode: bool = False) -> None:
    """Install ``__init__``/``__repr__``/``__eq__``/ordering/``__hash__`` and
    ``__match_args__`` on a registered dataclass-style class, from its
    reflected fields (the class must be registered with the core)."""
    if getattr(cls, "__tether_type_index__", None) is None:
        raise TypeError(f"{cls.__qualname__} is not registered with the FFI (use c_class or py_class)")
    fields = list(getattr(cls, "__tether_fields__", ()))
    install_dunders(cls, fields, init=init, repr=repr, eq=eq, order=order, unsafe_hash=unsafe_hash,
                    match_args=match_args, py_class_mode=py_class_mode)
