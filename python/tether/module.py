"""Loaded libraries as FFI modules (tvm_ffi's ``module``).

A :class:`Module` is the wrapper of an ``ffi.Module`` object: its functions
are the library's exported ``__tvm_ffi_<name>`` symbols, reachable as
attributes, by ``module[name]`` or ``get_function``. When the core provides
the module globals (``ffi.ModuleLoadFromFile``, ``ffi.ModuleGetFunction``,
``ffi.SystemLib``, ...), modules are core objects and every method goes
through them. A core without them still loads libraries: the module is then
a wrapper without a native object, whose library is opened with ctypes and
whose imports are kept on the Python side, with the same methods and
messages.

Either way a library is opened by :func:`load_module` with tether's
``dlopen`` flags (``RTLD_LOCAL``, and ``RTLD_DEEPBIND`` on Linux unless turned
off, see :meth:`Module._dlopen_mode`), so its ``TVMFFI*`` references bind to
tether's core even when another TVM-FFI runtime is loaded globally; the
core's loader, opening the same file afterwards, gets that same handle.
"""

from __future__ import annotations

import ctypes
import json
import os
from enum import IntEnum
from typing import Any, ClassVar, Optional

from . import _ffi
from . import core  # noqa: F401  (tvm_ffi.module's name)
from .core import Function, Object, convert, get_global_func, object_repr, register_object

__all__ = ["Module", "ModulePropertyMask", "load_module", "system_lib"]

_SYMBOL_PREFIX = "__tvm_ffi_"
_METADATA_PREFIX = "__tvm_ffi__metadata_"
_DOC_PREFIX = "__tvm_ffi__doc_"

# Modules loaded with keep_module_alive: never unloaded while the process lives.
_kept_alive: list = []


class ModulePropertyMask(IntEnum):
    """Bits of :meth:`Module.get_property_mask`."""

    BINARY_SERIALIZABLE = 0b001
    RUNNABLE = 0b010
    COMPILATION_EXPORTABLE = 0b100


def _core_api(name: str) -> Optional[Function]:
    """The core's ``ffi.<name>`` global, or ``None`` on a core without it."""
    return get_global_func(f"ffi.{name}", allow_missing=True)


@register_object("ffi.Module")
class Module(Object):
    """A library of FFI functions: ``mod.name(...)``, ``mod["name"](...)``,
    ``mod(...)`` for its ``main`` entry. Keep a module alive while objects
    its code made are alive: their deleters live in its library."""

    __slots__ = ("__dict__",)
    entry_name: ClassVar[str] = "main"

    # -- the library behind a module without a native object ----------------

    @classmethod
    def _from_library(cls, lib: ctypes.CDLL, path: str, prefix: str = "") -> "Module":
        mod = cls.__new__(cls)
        mod.__dict__.update(_lib=lib, path=path, _prefix=prefix, _imports=[])
        return mod

    def _is_native(self) -> bool:
        return _ffi.chandle(self) != 0

    def _own_symbol(self, prefix: str, name: str) -> Optional[int]:
        """Address of ``prefix + [symbol prefix] + name`` in this library."""
        candidates = [self._prefix + name, name] if self._prefix else [name]
        for candidate in candidates:
            try:
                return ctypes.cast(getattr(self._lib, prefix + candidate), ctypes.c_void_p).value
            except AttributeError:
                continue
        return None

    def _search(self, prefix: str, name: str, query_imports: bool):
        """(module, address) of the first definition, in this library then
        (depth first, in import order) its imports."""
        address = self._own_symbol(prefix, name)
        if address is not None:
            return self, address
        if query_imports:
            for imported in self._imports:
                if imported._is_native():
                    continue
                found = imported._search(prefix, name, True)
                if found is not None:
                    return found
        return None

    def same_as(self, other: object) -> bool:
        # A module without a native object is only ever itself.
        if not self._is_native():
            return self is other
        return super().same_as(other)

    def _reaches(self, other: "Module") -> bool:
        if self.same_as(other):
            return True
        return any(m._reaches(other) for m in self.imports)

    # -- tvm_ffi's API -----------------------------------------------------

    @property
    def kind(self) -> str:
        """The module's kind (``"library"`` for a loaded shared library)."""
        if self._is_native():
            return _core_api("ModuleGetKind")(self)
        return "library"

    @property
    def imports(self):
        """The modules this one imports (an Array; a tuple for modules
        without a native object, which an Array cannot hold)."""
        if self._is_native():
            return self.imports_
        return tuple(self._imports)

    def implements_function(self, name: str, query_imports: bool = False) -> bool:
        """Whether the module (or, with ``query_imports``, an import) defines ``name``."""
        if self._is_native():
            return bool(_core_api("ModuleImplementsFunction")(self, name, query_imports))
        return self._search(_SYMBOL_PREFIX, name, query_imports) is not None

    def get_function(self, name: str, query_imports: bool = False) -> Function:
        """The function ``name``; ``AttributeError`` when the module lacks it."""
        if self._is_native():
            # The core makes a new Function per lookup; keep the first, so
            # the same name gives the same wrapper (as tether's globals do).
            cache = self.__dict__.setdefault("_funcs", {})
            func = cache.get((name, query_imports))
            if func is None:
                func = _core_api("ModuleGetFunction")(self, name, query_imports)
                if func is not None:
                    cache[(name, query_imports)] = func
        else:
            func = self._library_function(name, query_imports)
        if func is None:
            raise AttributeError(f"Module has no function '{name}'")
        return func

    def _library_function(self, name: str, query_imports: bool) -> Optional[Function]:
        cache = self.__dict__.setdefault("_funcs", {})
        if name in cache:
            return cache[name]
        found = self._search(_SYMBOL_PREFIX, name, query_imports)
        if found is None:
            return None
        func = _ffi.function_from_symbol(found[1])
        if found[0] is self:
            cache[name] = func
        return func

    def _call_getter(self, prefix: str, name: str, query_imports: bool) -> Optional[str]:
        """Call a ``__tvm_ffi__metadata_``/``__tvm_ffi__doc_`` getter (a
        packed function of no arguments returning a string)."""
        found = self._search(prefix, name, query_imports)
        if found is None:
            return None
        return _ffi.function_from_symbol(found[1])()

    def get_function_metadata(self, name: str, query_imports: bool = False) -> Optional[dict]:
        """The metadata ``TVM_FFI_DLL_EXPORT_TYPED_FUNC`` recorded for ``name``
        (built with ``TVM_FFI_DLL_EXPORT_INCLUDE_METADATA``), as a dict with
        its ``type_schema``; ``None`` when there is none."""
        if self._is_native():
            text = _core_api("ModuleGetFunctionMetadata")(self, name, query_imports)
        else:
            text = self._call_getter(_METADATA_PREFIX, name, query_imports)
        return None if text is None else json.loads(text)

    def get_function_doc(self, name: str, query_imports: bool = False) -> Optional[str]:
        """The docstring ``TVM_FFI_DLL_EXPORT_TYPED_FUNC_DOC`` recorded for ``name``, or ``None``."""
        if self._is_native():
            doc = _core_api("ModuleGetFunctionDoc")(self, name, query_imports)
        else:
            doc = self._call_getter(_DOC_PREFIX, name, query_imports)
        return doc if doc else None

    def import_module(self, module: "Module") -> None:
        """Add ``module`` to this one's imports (searched by ``query_imports``)."""
        if self._is_native() and module._is_native():
            _core_api("ModuleImportModule")(self, module)
            return
        if not isinstance(module, Module):
            raise TypeError(f"import_module needs a Module, got {type(module).__name__}")
        if self._is_native():
            raise TypeError("a core module cannot import a module the core does not know")
        if module._reaches(self):
            raise RuntimeError("Cyclic dependency detected during import")
        self._imports.append(module)

    def clear_imports(self) -> None:
        """Forget every import."""
        if self._is_native():
            _core_api("ModuleClearImports")(self)
        else:
            self._imports.clear()

    def inspect_source(self, fmt: str = "") -> str:
        """The module's source in format ``fmt``; empty for compiled libraries."""
        if self._is_native():
            return _core_api("ModuleInspectSource")(self, fmt)
        return ""

    def get_write_formats(self):
        """The formats :meth:`write_to_file` accepts (none for libraries)."""
        if self._is_native():
            return _core_api("ModuleGetWriteFormats")(self)
        return convert([])

    def get_property_mask(self) -> int:
        """Bits of :class:`ModulePropertyMask`."""
        if self._is_native():
            return int(_core_api("ModuleGetPropertyMask")(self))
        return int(ModulePropertyMask.BINARY_SERIALIZABLE | ModulePropertyMask.RUNNABLE)

    def is_binary_serializable(self) -> bool:
        return bool(self.get_property_mask() & ModulePropertyMask.BINARY_SERIALIZABLE)

    def is_runnable(self) -> bool:
        return bool(self.get_property_mask() & ModulePropertyMask.RUNNABLE)

    def is_compilation_exportable(self) -> bool:
        return bool(self.get_property_mask() & ModulePropertyMask.COMPILATION_EXPORTABLE)

    def write_to_file(self, file_name: str, fmt: str = "") -> None:
        """Write the module to ``file_name`` (modules holding source or objects)."""
        if self._is_native():
            _core_api("ModuleWriteToFile")(self, file_name, fmt)
            return
        raise RuntimeError(f"Module[{self.kind}] does not support WriteToFile")

    def __getattr__(self, name: str) -> Function:
        if name.startswith("__") or name in ("_lib", "_prefix", "_imports", "_funcs", "path"):
            raise AttributeError(name)
        try:
            func = self.get_function(name)
        except AttributeError as exc:
            raise AttributeError(f"Module has no function '{name}'") from exc
        setattr(self, name, func)
        return func

    def __getitem__(self, name: str) -> Function:
        if not isinstance(name, str):
            raise ValueError("Can only take string as function name")
        return self.get_function(name)

    def __call__(self, *args: Any) -> Any:
        return self.get_function(self.entry_name)(*args)

    def __repr__(self) -> str:
        if self._is_native():
            return object_repr(self)
        return f"ffi.Module(imports_={tuple(self._imports)!r})"

    @staticmethod
    def _dlopen_mode(deep_bind: Optional[bool]) -> int:
        """The ``dlopen`` flags for a library built against tether's core.

        On ELF systems a library's undefined ``TVMFFI*`` references resolve
        against the global scope first, where another FFI runtime (e.g.
        ``tvm_ffi``'s ``libtvm_ffi.so``, loaded ``RTLD_GLOBAL``) may already
        sit. ``RTLD_DEEPBIND`` makes the library search its own dependencies
        (the ``libtether_core`` it linked) before the global scope, so it
        registers its globals and types with tether. The price: *every*
        symbol it uses prefers its dependencies, including ``malloc`` /
        ``operator new`` that a sanitizer, jemalloc or tcmalloc interposes
        through ``LD_PRELOAD`` (AddressSanitizer refuses such loads
        outright). ``deep_bind=False`` or ``TETHER_LOAD_DEEPBIND=0`` turns
        it off; the library then binds to whatever the global scope offers.

        The library is loaded ``RTLD_LOCAL`` either way: its functions are
        found through its own handle, and publishing it (and with it
        ``libtether_core``'s ``TVMFFI*`` names) globally would capture the
        references of another runtime's libraries loaded afterwards.
        Platforms without ``RTLD_DEEPBIND`` (macOS's two-level namespace,
        Windows' per-DLL imports) already bind a library to the core it
        linked, so ``deep_bind`` changes nothing there.
        """
        mode = ctypes.RTLD_LOCAL
        if deep_bind is None:
            deep_bind = os.environ.get("TETHER_LOAD_DEEPBIND", "1").strip().lower() not in ("0", "false", "no", "off")
        if deep_bind and hasattr(os, "RTLD_DEEPBIND"):
            mode |= os.RTLD_DEEPBIND
        return mode


#: Suffixes the core's loader treats as shared libraries (``ffi.Module.load_from_file.so``).
_SHARED_LIBRARY_SUFFIXES = (".so", ".dll", ".dylib", ".dso")


def _is_shared_library_name(path: str) -> bool:
    return os.path.splitext(path)[1] in _SHARED_LIBRARY_SUFFIXES


def load_module(path, keep_module_alive: bool = True, deep_bind: Optional[bool] = None) -> Module:
    """Load a module from a file: a shared library built against tether's
    (or TVM-FFI's) C ABI, or any format a loader is registered for
    (``ffi.Module.load_from_file.<suffix>``, e.g. TVM's ``.ll``).

    Loading a shared library runs the library's static registrations (types, globals). With
    ``keep_module_alive`` the module stays loaded for the life of the
    process. On Linux the library is opened with ``RTLD_DEEPBIND`` so that
    it reaches tether's core even when another library exporting the
    ``TVMFFI*`` names is loaded globally; pass ``deep_bind=False`` (or set
    ``TETHER_LOAD_DEEPBIND=0``) when an ``LD_PRELOAD`` allocator or sanitizer
    must interpose the library's symbols. See ``Module._dlopen_mode``.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no file at {path!r}")
    core_load = _core_api("ModuleLoadFromFile")
    if core_load is not None and not _is_shared_library_name(path):
        # Other formats (`.ll`, `.bc`, ...) go to the loader registered for
        # their suffix (`ffi.Module.load_from_file.<ext>`), as upstream's
        # Module::LoadFromFile dispatches; its error names the suffix.
        mod = core_load(path)
        if keep_module_alive:
            _kept_alive.append(mod)
        return mod
    # Opened here first, with tether's flags: a later dlopen of the same file
    # (the core's loader) returns this handle, bound as it was bound here.
    lib = ctypes.CDLL(path, mode=Module._dlopen_mode(deep_bind))
    if core_load is not None:
        mod = core_load(path)
        mod.__dict__["_lib"] = lib  # the ctypes handle keeps the library open
        mod.__dict__["path"] = path
        if keep_module_alive:
            keep = _core_api("ModuleGlobalsAdd")
            if keep is not None:
                keep(mod)
    else:
        mod = Module._from_library(lib, path)
    if keep_module_alive:
        _kept_alive.append(mod)
    return mod


_system_libs: dict = {}


def system_lib(symbol_prefix: str = "") -> Module:
    """The functions linked into the process itself (the system library):
    ``mod[name]`` finds ``__tvm_ffi_<symbol_prefix><name>``, then
    ``__tvm_ffi_<name>``. Over ``ffi.SystemLib`` (symbols registered through
    ``TVMFFIEnvModRegisterSystemLibSymbol``) when the core has it, else over
    the symbols the process exports."""
    core_system_lib = _core_api("SystemLib")
    if core_system_lib is not None:
        return core_system_lib(symbol_prefix)
    if symbol_prefix not in _system_libs:
        _system_libs[symbol_prefix] = Module._from_library(ctypes.CDLL(None), "<system lib>", symbol_prefix)
    return _system_libs[symbol_prefix]
