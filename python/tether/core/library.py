"""The core shared library this package runs on, for the few places that
call its C ABI through ctypes rather than the extension (type metadata
records, the DLPack exchange table of the test tensor wrapper).

The library sits in the package directory beside the extension, named by
the platform's convention; `libinfo` builds its answers on these names.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys

__all__ = ["library_file_names", "core_library_path", "core_library"]


def library_file_names(target_name: str) -> tuple:
    """The file names a shared library of build target ``target_name`` may
    have on this platform (``libX.so``, ``libX.dylib``, ``X.dll``)."""
    if sys.platform.startswith("win32"):
        return (f"{target_name}.dll",)
    if sys.platform.startswith("darwin"):
        return (f"lib{target_name}.dylib", f"lib{target_name}.so")
    return (f"lib{target_name}.so",)


def core_library_path() -> str:
    """Path of ``libtether_core`` in the package directory; RuntimeError
    naming the directory when it is not there."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    names = library_file_names("tether_core")
    for name in names:
        path = os.path.join(package, name)
        if os.path.isfile(path):
            return path
    raise RuntimeError(f"cannot find {' or '.join(names)} in {package}")


@functools.lru_cache(maxsize=None)
def core_library() -> ctypes.CDLL:
    """A ctypes handle on the core (the library the extension already
    loaded, so the same tables)."""
    return ctypes.CDLL(core_library_path())
