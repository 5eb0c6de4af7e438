"""Testing utilities, with the names of ``tvm_ffi.testing``.

* the ``testing.*`` global functions of the testing library (loaded with
  the core when :mod:`tether` is imported), from :mod:`._ffi_api`;
* classes for its test object types and helpers over its globals
  (``TestIntPair``, ``create_object``, ``add_one``, ...), from
  :mod:`.testing`, imported on first use so that ``import tether`` does
  not define them;
* :func:`run_with_gpu_lock`, from :mod:`._locking`;
* tether's own helpers for its suites: :func:`object_use_count`,
  :func:`echo`, :func:`apply_n`, :func:`raise_error`, :func:`tie_state`.
"""

from __future__ import annotations

import ctypes
import importlib
import os
from typing import Any

from .. import _ffi, libinfo
from ..core import Object, get_global_func


def _load_testing_library() -> Any:
    """The testing library is a dependency of the extension where the build
    links it so (python/build.rs); a build that does not (Bazel's, say)
    leaves it to this: load it from beside the core, once, so its
    registrations land in that core. Returns the handle it loaded, if any."""
    if get_global_func("testing.echo", allow_missing=True) is not None:
        return None
    lib_dir = os.path.dirname(libinfo.find_libtvm_ffi())
    for name in ("libtether_testing.so", "libtether_testing.dylib", "tether_testing.dll"):
        path = os.path.join(lib_dir, name)
        if os.path.exists(path):
            return ctypes.CDLL(path)
    return None


_TESTING_LIBRARY = _load_testing_library()

from . import _ffi_api  # noqa: E402  (after the library registered its globals)
from ._ffi_api import *  # noqa: E402,F401,F403  (every testing.* global)

# What .testing provides. Two of these names (add_one,
# make_unregistered_object) are also globals, put here by the star import
# above: dropping them lets __getattr__ give .testing's functions, as
# tvm_ffi.testing does.
_FROM_TESTING = (
    "TestCompare", "TestCustomCompare", "TestCustomHash", "TestEqWithoutHash", "TestFrozenCxx", "TestHash",
    "TestIntPair", "TestNonCopyable", "TestObjectBase", "TestObjectDerived", "TestObjectPtrHolder",
    "_SchemaAllTypes", "_TestCxxAutoInit", "_TestCxxAutoInitAllInitOff", "_TestCxxAutoInitChild",
    "_TestCxxAutoInitKwOnlyDefaults", "_TestCxxAutoInitParent", "_TestCxxAutoInitSimple", "_TestCxxClassBase",
    "_TestCxxClassDerived", "_TestCxxClassDerivedDerived", "_TestCxxEnumHolder", "_TestCxxInitSubset",
    "_TestCxxIntEnum", "_TestCxxKwOnly", "_TestCxxNoAutoInit", "_TestCxxStrEnum", "add_one", "create_object",
    "make_unregistered_object",
)
for _name in _FROM_TESTING:
    globals().pop(_name, None)
del _name

_HELPERS = ["object_use_count", "echo", "apply_n", "raise_error", "tie_state"]

__all__ = sorted(
    {n for n in vars(_ffi_api) if not n.startswith("_")}
    | set(_FROM_TESTING) | set(_HELPERS) | {"run_with_gpu_lock"}
)


def __getattr__(name: str) -> Any:
    """The classes and helpers of :mod:`.testing` (and the GPU lock),
    imported when first asked for."""
    if name in _FROM_TESTING:
        value = getattr(importlib.import_module(".testing", __name__), name)
    elif name == "run_with_gpu_lock":
        value = importlib.import_module("._locking", __name__).run_with_gpu_lock
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


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
