"""Dunder-method installation for ``c_class`` and ``py_class``, where
tvm_ffi keeps it; tether's builders live in ``tether.dataclasses.dunders``."""

from __future__ import annotations

from .dataclasses.dunders import _make_init, _repr, _signature, install_dunders, ordered_init_fields

__all__ = ["_make_init", "_repr", "_signature", "install_dunders", "ordered_init_fields"]
