"""Sentinel objects that cross into native constructors: ``KWARGS`` (what
precedes name/value pairs in an ``__ffi_init__`` call) and ``MISSING``
(the core's "no value" object, which prints as ``<MISSING>``)."""

from __future__ import annotations

from .builtin_table import _get_global

__all__ = ["KWARGS", "MISSING"]

KWARGS = _get_global("ffi.GetKwargsObject")
MISSING = _get_global("ffi.GetInvalidObject")
