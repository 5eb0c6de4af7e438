"""Loaded libraries as FFI modules (tvm_ffi's ``module`` names)."""

from __future__ import annotations

import ctypes

from .core import Module, load_module

__all__ = ["Module", "load_module", "system_lib"]


class _SystemLib(Module):
    """The functions linked into the running process itself."""

    def __init__(self, symbol_prefix: str = ""):
        self.path = "<system lib>"
        self._lib = ctypes.CDLL(None)
        self._funcs = {}
        self._prefix = symbol_prefix

    def get_function(self, name: str, allow_missing: bool = False):
        return super().get_function(self._prefix + name, allow_missing)


def system_lib(symbol_prefix: str = "") -> Module:
    """A Module over the ``__tvm_ffi_<prefix><name>`` symbols linked into
    the process (statically linked kernels)."""
    return _SystemLib(symbol_prefix)
