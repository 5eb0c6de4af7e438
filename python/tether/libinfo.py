"""Where tether's library, headers and CMake files are, and loading shared
libraries by their build target's name (tvm_ffi's ``libinfo`` names).

``_find_library_by_basename(package, target)`` looks in the installed
distribution's file list first (``importlib.metadata``), then in the
directories the caller passes, the package's own and development build
directories, and finally the platform's library search variables — so a
client such as Apache TVM finds its ``libtvm_runtime`` the same way on
tether as on tvm_ffi.
"""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path
from typing import Callable, List, Optional, Union

from .core.library import library_file_names

__all__ = [
    "find_libtvm_ffi", "find_include_path", "find_dlpack_include_path", "include_paths", "find_cmake_path",
    "find_source_path", "find_python_helper_include_path", "find_cython_lib", "find_windows_implib",
    "load_lib_ctypes", "load_lib_module",
]


#: Environment variable naming the directory of TVM-FFI's C++ headers (the
#: one holding ``tvm/ffi/`` and ``dlpack/``); read here, by tether-config and by the CMake package.
TVM_FFI_INCLUDE_ENV = "TETHER_TVM_FFI_INCLUDE_DIR"


def _holds_tvm_ffi_headers(path: str) -> bool:
    return all(os.path.isfile(os.path.join(path, *rel)) for rel in
               (("tvm", "ffi", "c_api.h"), ("tvm", "ffi", "function.h"), ("dlpack", "dlpack.h")))


def tvm_ffi_includedir() -> Optional[str]:
    """The directory of TVM-FFI's C++ headers, or None when none is found.

    ``$TETHER_TVM_FFI_INCLUDE_DIR`` when set (ValueError when it holds no
    such headers: an explicit choice is never replaced by a guess), else
    the package's own ``include`` directory, which carries the headers of
    the apache-tvm-ffi release tether implements (taken from its sdist when
    the package was built), else the ``include`` directory of an
    apache-tvm-ffi installed on ``sys.path``, found without importing it
    (``PathFinder`` looks past tether's own ``tvm_ffi`` alias). Only the
    headers are used.
    """
    given = os.environ.get(TVM_FFI_INCLUDE_ENV, "")
    if given:
        path = os.path.abspath(given)
        if not _holds_tvm_ffi_headers(path):
            raise ValueError(f"{TVM_FFI_INCLUDE_ENV}={given!r} holds no TVM-FFI headers "
                             "(tvm/ffi/c_api.h, tvm/ffi/function.h, dlpack/dlpack.h)")
        return path
    bundled = _bundled_tvm_ffi_includedir()
    if bundled is not None:
        return bundled
    for root in _installed_tvm_ffi_roots():
        path = os.path.join(root, "include")
        if _holds_tvm_ffi_headers(path):
            return path
    return None


def _bundled_tvm_ffi_includedir() -> Optional[str]:
    """The package's own copy of the headers (with upstream's LICENSE and
    NOTICE under ``licenses/apache-tvm-ffi``), when it was built with them."""
    path = os.path.join(package_dir(), "include")
    return path if _holds_tvm_ffi_headers(path) else None


def _installed_tvm_ffi_roots() -> list:
    """The package directories of an apache-tvm-ffi installed on sys.path."""
    import importlib.machinery

    spec = importlib.machinery.PathFinder.find_spec("tvm_ffi")
    return list(spec.submodule_search_locations or []) if spec else []


_MISSING_HEADERS = (
    "TVM-FFI's C++ headers were not found: this tether package was built without its copy of them; set "
    f"{TVM_FFI_INCLUDE_ENV} to the directory holding tvm/ffi/ and dlpack/, or install apache-tvm-ffi beside "
    "tether (only its headers are used)")


def package_dir() -> str:
    """The installed package's directory: the core library and the headers live here."""
    return os.path.dirname(os.path.abspath(__file__))


def _rel_top_directory() -> Path:
    """The installed package's directory."""
    return Path(__file__).parent


def _dev_top_directory() -> Path:
    """The source checkout's top directory (when running from a checkout)."""
    return _rel_top_directory() / ".." / ".."


def _split_env_var(env_var: str, split: str) -> List[str]:
    """The entries of environment variable ``env_var`` split on ``split`` ([] when unset or empty)."""
    value = os.environ.get(env_var)
    return [p.strip() for p in value.split(split)] if value else []


def _resolve_and_validate(paths: List[Path], cond: Callable[[Path], Union[bool, Path]]) -> Optional[str]:
    """The first of ``paths`` (resolved) that ``cond`` accepts, as a string:
    ``cond`` returns True to take the path, False to go on, or another Path
    to return instead. None when no candidate is accepted."""
    for p in paths:
        try:
            resolved = Path(p).resolve()
        except OSError:
            continue
        verdict = cond(resolved)
        if isinstance(verdict, Path):
            return str(verdict)
        if verdict:
            return str(resolved)
    return None


def _library_file_names(target_name: str) -> tuple:
    return library_file_names(target_name)


def _find_library_by_basename(package: str, target_name: str, extra_lib_paths: Optional[List[Path]] = None, *,
                              use_fallback_build_path: bool = True, use_env_path: bool = True) -> Path:
    """The resolved path of the shared library of build target ``target_name``
    (``libX.so`` / ``libX.dylib`` / ``X.dll``) belonging to distribution
    ``package``. RuntimeError listing every directory searched when absent;
    TypeError when an ``extra_lib_paths`` entry is not a ``pathlib.Path``."""
    for i, p in enumerate(extra_lib_paths or ()):
        if not isinstance(p, Path):
            raise TypeError(f"extra_lib_paths[{i}] must be a pathlib.Path, got {type(p).__name__}: {p!r}")
    names = _library_file_names(target_name)
    import importlib.metadata as im  # here, not at import: it costs a third of `import tether`

    try:
        dist = im.distribution(package)
        for entry in dist.files or ():
            if entry.name in names:
                try:
                    path = Path(dist.locate_file(entry)).resolve()
                except OSError:
                    continue
                if path.is_file():
                    return path
    except (im.PackageNotFoundError, OSError):
        pass
    dirs: List[Path] = list(extra_lib_paths or ())
    if use_fallback_build_path:
        top, dev = _rel_top_directory(), _dev_top_directory()
        dirs += [top, top / "build" / "lib", top / "lib", dev / "build" / "lib", dev / "lib"]
    if use_env_path:
        if sys.platform.startswith("win32"):
            dirs += [Path(p) for p in _split_env_var("PATH", ";")]
        else:
            var = "DYLD_LIBRARY_PATH" if sys.platform.startswith("darwin") else "LD_LIBRARY_PATH"
            dirs += [Path(p) for p in _split_env_var(var, ":")] + [Path(p) for p in _split_env_var("PATH", ":")]
    for d in dirs:
        for name in names:
            try:
                path = (d / name).resolve()
            except OSError:
                continue
            if path.is_file():
                return path
    raise RuntimeError(f"Cannot find library {', '.join(names)}; searched directories:\n  "
                       + "\n  ".join(str(d) for d in dirs))


def _mode_flag(mode: str) -> int:
    if not isinstance(mode, str) or not mode.startswith("RTLD_") or not hasattr(ctypes, mode):
        raise ValueError(f"mode must name a ctypes loading mode such as 'RTLD_LOCAL' or 'RTLD_GLOBAL', got {mode!r}")
    return getattr(ctypes, mode)


def load_lib_ctypes(package: str, target_name: str, mode: str,
                    extra_lib_paths: Optional[List[Path]] = None) -> ctypes.CDLL:
    """Load the shared library of ``target_name`` from ``package`` with
    ctypes, in loading mode ``mode`` (``"RTLD_LOCAL"`` or ``"RTLD_GLOBAL"``)."""
    flag = _mode_flag(mode)
    if (package, target_name) in (("tether", "tether"), ("tether", "tether_core")):
        path = Path(find_libtvm_ffi())
    else:
        path = _find_library_by_basename(package, target_name, extra_lib_paths)
    if sys.platform.startswith("win32"):
        os.add_dll_directory(str(path.parent))
    return ctypes.CDLL(str(path), flag)


def load_lib_module(package: str, target_name: str, keep_module_alive: bool = True,
                    extra_lib_paths: Optional[List[Path]] = None):
    """Load the shared library of ``target_name`` from ``package`` as an FFI ``Module``."""
    from .module import load_module

    path = _find_library_by_basename(package, target_name, extra_lib_paths)
    if sys.platform.startswith("win32"):
        os.add_dll_directory(str(path.parent))
    return load_module(str(path), keep_module_alive=keep_module_alive)


def _serving_library() -> Optional[Path]:
    """``libtvm_ffi.so`` beside the core while tether serves as tvm_ffi (ELF
    platforms; None otherwise). It is a filter library on the core: its
    symbol table lists the core's exports, so ``-ltvm_ffi`` links, and the
    dynamic linker resolves every one of them in ``libtether_core`` (see
    python/build.rs), so a program linked so runs on tether's one core."""
    from .provide import is_providing_tvm_ffi

    if not is_providing_tvm_ffi():
        return None
    path = Path(package_dir()) / "libtvm_ffi.so"
    return path if path.is_file() else None


def find_libtvm_ffi() -> str:
    """Path of the library a native build links: ``libtvm_ffi.so`` while
    tether serves as tvm_ffi (where the wheel ships it), else the core
    (``libtether_core``). Both load the same core."""
    serving = _serving_library()
    if serving is not None:
        return str(serving.resolve())
    names = _library_file_names("tether_core")
    found = _resolve_and_validate([Path(package_dir()) / n for n in names], lambda p: p.is_file())
    if found is None:
        raise RuntimeError(f"cannot find {' or '.join(names)} in {package_dir()}")
    return found


def find_windows_implib() -> str:
    """Path of the core's import library on Windows (``tether_core.dll.lib``)."""
    lib_dir = Path(find_libtvm_ffi()).parent
    found = _resolve_and_validate([lib_dir / "tether_core.dll.lib", lib_dir / "tether_core.lib"], lambda p: p.is_file())
    if found is None:
        raise RuntimeError(f"cannot find tether_core's import library in {lib_dir}")
    return found


def find_include_path() -> str:
    """The directory of tether's C and C++ headers."""
    return os.path.join(package_dir(), "include")


def find_dlpack_include_path() -> str:
    """The directory holding ``dlpack/dlpack.h``: TVM-FFI's header directory
    (tether does not ship DLPack's header; see ``tvm_ffi_includedir``).
    RuntimeError when none is found."""
    found = tvm_ffi_includedir()
    if found is None:
        raise RuntimeError(_MISSING_HEADERS)
    return found


def find_python_helper_include_path() -> str:
    """The directory of ``tvm_ffi_python_helpers.h``, the C helpers a Python
    extension module uses to call FFI functions with Python values and to
    hand Python callables to the FFI (tether's include directory)."""
    found = _resolve_and_validate([Path(find_include_path())],
                                  lambda p: (p / "tvm_ffi_python_helpers.h").is_file())
    if found is None:
        raise RuntimeError(f"cannot find tvm_ffi_python_helpers.h in {find_include_path()}")
    return found


def find_cmake_path() -> str:
    """The directory of tether's CMake package files."""
    found = _resolve_and_validate(
        [_rel_top_directory() / "share" / "cmake" / "tvm_ffi", _rel_top_directory() / "cmake",
         _dev_top_directory() / "cmake"], lambda p: p.is_dir())
    if found is None:
        raise RuntimeError("cannot find tether's CMake package directory")
    return found


def find_source_path() -> str:
    """The top of the core's source tree: ``src`` inside the package (the
    wheel carries the core's Rust crates there, with a workspace manifest:
    ``cargo build --release --manifest-path <dir>/Cargo.toml`` builds
    ``libtether_core``), or the checkout the package runs from."""
    found = _resolve_and_validate([_rel_top_directory() / "src", _dev_top_directory()],
                                  lambda p: (p / "rust" / "core" / "Cargo.toml").is_file())
    if found is None:
        raise RuntimeError("cannot find tether's source tree (this installation carries no sources)")
    return found


def find_cython_lib() -> str:
    """Path of the compiled extension module (``tether._ffi``), found without importing it."""
    import importlib.machinery

    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        candidate = _rel_top_directory() / f"_ffi{suffix}"
        if candidate.is_file():
            return str(candidate.resolve())
    raise RuntimeError(f"cannot find tether's extension module in {_rel_top_directory()}")


def include_paths() -> List[str]:
    """Every include directory a C++ build against tether needs (DLPack's
    when TVM-FFI's headers are found)."""
    paths = {find_include_path(), find_python_helper_include_path()}
    try:
        paths.add(find_dlpack_include_path())
    except RuntimeError:
        pass
    return sorted(paths)
