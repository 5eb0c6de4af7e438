"""Serving as ``tvm_ffi``: after ``provide_tvm_ffi()``, ``import tvm_ffi``
and every ``import tvm_ffi.X.Y`` yield tether's module of the same relative
name (``tvm_ffi.core`` *is* ``tether.core``), so a program written for
apache-tvm-ffi runs on tether unchanged.

It is opt-in: call ``tether.provide_tvm_ffi()``, or set
``TETHER_PROVIDE_TVM_FFI=1`` before the interpreter starts (read by the
``.pth`` file the wheel installs, which imports tether only when something
first imports ``tvm_ffi``: ``_tether_tvm_ffi``). A process never holds two cores: when
the real apache-tvm-ffi is already imported, activation is refused.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from typing import Optional

__all__ = ["provide_tvm_ffi", "is_providing_tvm_ffi"]

_ALIAS = "tvm_ffi"
_TARGET = "tether"


class _AliasLoader(importlib.abc.Loader):
    """Hands out an already imported tether module under the alias name."""

    def __init__(self, module) -> None:
        self._module = module

    def create_module(self, spec):
        return self._module

    def exec_module(self, module) -> None:
        # tether's module ran when it was imported under its own name.
        pass

    def get_code(self, fullname):
        """The real module's code, for ``python -m tvm_ffi.X`` (runpy runs
        it afresh as ``__main__``)."""
        spec = self._module.__spec__
        return spec.loader.get_code(spec.name)

    def is_package(self, fullname) -> bool:
        return hasattr(self._module, "__path__")


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Maps ``tvm_ffi[.X]`` to ``tether[.X]`` ahead of every other finder."""

    def find_spec(self, fullname: str, path=None, target=None) -> Optional[importlib.machinery.ModuleSpec]:
        if fullname != _ALIAS and not fullname.startswith(_ALIAS + "."):
            return None
        real_name = _TARGET + fullname[len(_ALIAS):]
        try:
            module = importlib.import_module(real_name)
        except ModuleNotFoundError as err:
            if err.name == real_name:
                return None  # a module tether does not have: let the import fail as usual
            raise
        real_spec = getattr(module, "__spec__", None)
        spec = importlib.machinery.ModuleSpec(fullname, _AliasLoader(module),
                                              origin=getattr(real_spec, "origin", None),
                                              is_package=hasattr(module, "__path__"))
        return spec


_finder: Optional[_AliasFinder] = None
_soname_library = None  # kept loaded for the life of the process


def _load_soname_library() -> None:
    """Make the C ABI visible process-wide, as apache-tvm-ffi's
    ``libtvm_ffi.so`` (loaded ``RTLD_GLOBAL``) makes it: code that looks the
    ``TVMFFI*`` functions up in the global scope (``dlsym(RTLD_DEFAULT)``,
    ``ctypes.CDLL(None)``, a JIT linker resolving an object file's
    undefined symbols against the process) finds tether's core.

    On ELF platforms this loads tether's ``libtvm_ffi.so`` (a filter on the
    core), so native libraries needing ``libtvm_ffi.so`` also bind to
    tether's core; elsewhere the core itself is loaded globally. Refused
    when another ``libtvm_ffi.so`` (apache-tvm-ffi's) is mapped already.
    Only serving does this: on its own tether stays ``RTLD_LOCAL`` and
    shares a process with another TVM-FFI runtime."""
    global _soname_library
    import ctypes
    from pathlib import Path

    path = Path(__file__).with_name("libtvm_ffi.so")
    if not path.is_file():
        here = Path(__file__).parent
        for name in ("libtether_core.dylib", "tether_core.dll", "libtether_core.so"):
            if (here / name).is_file():
                _soname_library = ctypes.CDLL(str(here / name), ctypes.RTLD_GLOBAL)
                return
        raise RuntimeError(f"cannot serve as tvm_ffi: tether's core library is missing from {here}")
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            mapped = {line.split()[-1] for line in maps if line.rstrip().endswith("/libtvm_ffi.so")}
    except OSError:
        mapped = set()
    others = {m for m in mapped if Path(m).resolve() != path.resolve()}
    if others:
        raise RuntimeError("cannot serve as tvm_ffi: another libtvm_ffi.so is loaded in this process "
                           f"({', '.join(sorted(others))})")
    _soname_library = ctypes.CDLL(str(path), ctypes.RTLD_GLOBAL)


def _finder_for_boot() -> "_AliasFinder":
    """The alias finder ``provide_tvm_ffi`` installed (for the start-up
    switch's finder, which hands the first ``tvm_ffi`` import over to it)."""
    assert _finder is not None, "provide_tvm_ffi() installs it"
    return _finder


def is_providing_tvm_ffi() -> bool:
    """Whether ``import tvm_ffi`` yields tether in this process."""
    return _finder is not None


def provide_tvm_ffi() -> None:
    """Make ``tvm_ffi`` and its submodules resolve to tether's modules.

    Idempotent. RuntimeError when apache-tvm-ffi itself was imported
    already (two cores in one process would each hold their own type and
    function tables).
    """
    global _finder
    if _finder is not None:
        return
    loaded = sys.modules.get(_ALIAS)
    if loaded is not None and loaded is not sys.modules.get(_TARGET):
        raise RuntimeError(
            "cannot serve as tvm_ffi: apache-tvm-ffi is already imported in this process "
            f"(from {getattr(loaded, '__file__', '?')}); call tether.provide_tvm_ffi() "
            "(or set TETHER_PROVIDE_TVM_FFI=1) before anything imports tvm_ffi")
    _load_soname_library()
    _finder = _AliasFinder()
    sys.meta_path.insert(0, _finder)
    # Modules already imported under tether's name become visible under the
    # alias now -- except the one `python -m` is about to run: runpy takes the
    # spec of a module it finds in sys.modules, and that spec's loader only
    # answers to tether's name; left out, it is found through the finder.
    # Without sys.orig_argv (CPython 3.9) that module cannot be known: only
    # the package is aliased now, submodules resolve through the finder.
    main_module = _module_run_as_main()
    for name, module in list(sys.modules.items()):
        if name == _TARGET or name.startswith(_TARGET + "."):
            alias = _ALIAS + name[len(_TARGET):]
            if alias != main_module and (name == _TARGET or hasattr(sys, "orig_argv")):
                sys.modules.setdefault(alias, module)


def _module_run_as_main() -> Optional[str]:
    """The module named by the interpreter's ``-m`` option, if any."""
    argv = list(getattr(sys, "orig_argv", ()))[1:]
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "-m":
            return argv[i + 1] if i + 1 < len(argv) else None
        if arg.startswith("-m"):
            return arg[2:]
        if arg in ("-c", "-") or not arg.startswith("-"):
            return None  # a command, stdin or a script: no module
        i += 2 if arg in ("-X", "-W") else 1  # options that take the next word
    return None
