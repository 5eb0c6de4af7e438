"""The ``TETHER_PROVIDE_TVM_FFI`` switch, read by ``tether-tvm-ffi.pth`` at
interpreter start-up: install a finder that makes tether serve as
``tvm_ffi`` the first time anything imports ``tvm_ffi`` -- and only then.

Importing tether itself at start-up would cost every Python process the
package's import (and PyTorch's, when installed) whether or not it ever
uses ``tvm_ffi``; child processes (build tools, test runners) start as
fast as without the switch. This module imports nothing but the standard
library until that first import.
"""

from __future__ import annotations

import importlib.abc
import os
import sys

_ALIAS = "tvm_ffi"


class _ProvideOnFirstImport(importlib.abc.MetaPathFinder):
    """Turns the first ``import tvm_ffi[.X]`` into
    ``tether.provide_tvm_ffi()``, then steps aside for tether's own finder."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _ALIAS and not fullname.startswith(_ALIAS + "."):
            return None
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
        from tether.provide import _finder_for_boot, provide_tvm_ffi

        provide_tvm_ffi()
        # provide_tvm_ffi() entered the tether modules imported so far under
        # the alias; this one is being imported now, so it must come from
        # the spec returned here (an entry already in sys.modules would make
        # the import system load the real module's spec a second time).
        sys.modules.pop(fullname, None)
        return _finder_for_boot().find_spec(fullname, path, target)


def install() -> None:
    """Install the finder when the switch is on (idempotent)."""
    if os.environ.get("TETHER_PROVIDE_TVM_FFI", "0") in ("", "0"):
        return
    if any(isinstance(f, _ProvideOnFirstImport) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _ProvideOnFirstImport())


install()
