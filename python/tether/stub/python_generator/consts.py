"""Python naming tables of the Python target.

How schema origins become Python types (what a call returns, and the looser
types it accepts), and which module a registry prefix is imported from. Kept
apart from :mod:`tether.stub.consts` so other targets see none of it.
"""

from __future__ import annotations

import sys

#: The package generated code imports the runtime from; see :func:`runtime_package`.
_runtime_package = None


def runtime_package() -> str:
    """``tvm_ffi`` or ``tether``: what generated code imports the runtime as.

    Set by ``--runtime-package``; by default ``tvm_ffi`` while tether serves
    as tvm_ffi (code written for TVM-FFI keeps importing ``tvm_ffi``), else
    ``tether``.
    """
    if _runtime_package is not None:
        return _runtime_package
    tether = sys.modules.get("tether")
    return "tvm_ffi" if tether is not None and sys.modules.get("tvm_ffi") is tether else "tether"


def set_runtime_package(name) -> None:
    """Fix :func:`runtime_package` (``None`` restores the default)."""
    global _runtime_package
    if name not in (None, "tether", "tvm_ffi"):
        raise ValueError(f"runtime package must be 'tether' or 'tvm_ffi', not {name!r}")
    _runtime_package = name


def in_runtime(dotted: str) -> str:
    """``dotted`` with a leading ``tether`` package renamed to :func:`runtime_package`."""
    head, dot, rest = dotted.partition(".")
    return runtime_package() + dot + rest if head == "tether" else dotted

#: Schema origin -> Python type a call returns (the seed of a run's ``ty-map``).
TY_MAP_DEFAULTS = {
    "Any": "typing.Any",
    "Callable": "typing.Callable",
    "Array": "collections.abc.Sequence",
    "List": "collections.abc.MutableSequence",
    "Map": "collections.abc.Mapping",
    "Dict": "collections.abc.MutableMapping",
    "Object": "ffi.Object",
    "Tensor": "ffi.Tensor",
    "dtype": "ffi.dtype",
    "Device": "ffi.Device",
    "ffi.Enum": "tether.dataclasses.Enum",
}

#: Schema origin -> Python type a call accepts, where it is looser than the result.
TY_MAP_INPUT_DEFAULTS = {
    "Array": "collections.abc.Sequence",
    "List": "collections.abc.Sequence",
    "Map": "collections.abc.Mapping",
    "Dict": "collections.abc.Mapping",
}

#: Registry prefix -> the Python module its names are imported from.
MOD_MAP = {
    "testing": "tether.testing",
    "ffi": "tether",
}
