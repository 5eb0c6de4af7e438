"""Helpers for tests of code built on tether."""

from __future__ import annotations

from .. import _ffi
from ..core import Object, get_global_func

__all__ = ["object_use_count", "echo", "apply_n", "raise_error", "tie_state"]


def object_use_count(obj: Object) -> int:
    """The native strong count of ``obj``'s handle."""
    if not isinstance(obj, Object):
        raise TypeError(f"object_use_count needs a tether.Object, got {type(obj).__name__}")
    return _ffi.use_count(obj)


def echo(value):
    """Send ``value`` through a native function that returns its argument."""
    return get_global_func("testing.echo")(value)


def apply_n(func, n: int, *args):
    """Have native code call ``func(*args)`` ``n`` times; returns the last result."""
    return get_global_func("testing.apply_n")(func, n, *args)


def raise_error(kind: str, message: str):
    """Have native code raise an error of ``kind``."""
    return get_global_func("testing.raise_error")(kind, message)


def tie_state(obj: Object):
    """``(state, is_this_wrapper)`` of ``obj``'s handle: Active, Inactive,
    Detached, InTransit or Foreign (allocated without tether's header)."""
    return _ffi.tie_state(obj)
