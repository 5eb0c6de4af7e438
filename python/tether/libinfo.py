"""Where tether's library and headers are (tvm_ffi's ``libinfo`` names)."""

from __future__ import annotations

import os

from . import config

__all__ = ["find_libtvm_ffi", "find_include_path", "find_dlpack_include_path", "include_paths"]


def find_libtvm_ffi() -> str:
    """Path of the core shared library Python uses (``libtether_core``)."""
    for name in os.listdir(config.libdir()):
        if name.startswith(("libtether_core.", "tether_core.")):
            return os.path.join(config.libdir(), name)
    raise RuntimeError(f"cannot find libtether_core in {config.libdir()}")


def find_include_path() -> str:
    return config.includedir()


def find_dlpack_include_path() -> str:
    return config.includedir()


def include_paths() -> list:
    return [find_include_path()]
