"""Sentinel objects that cross into native constructors: ``KWARGS`` (what
precedes name/value pairs in an ``__ffi_init__`` call) and ``MISSING``
(the core's "no value" object, which prints as ``<MISSING>``)."""

from __future__ import annotations

from .. import _ffi
from .builtin_table import _get_global
from .object import _SENTINEL_TEXT

__all__ = ["KWARGS", "MISSING"]

KWARGS = _get_global("ffi.GetKwargsObject")
MISSING = _get_global("ffi.GetInvalidObject")

# They print as tvm_ffi prints them (they live for the process, so their
# addresses stay theirs).
_SENTINEL_TEXT[_ffi.chandle(KWARGS)] = "<KWARGS>"
_SENTINEL_TEXT[_ffi.chandle(MISSING)] = "<MISSING>"
