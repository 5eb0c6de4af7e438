"""``tether-config``: what a C or C++ build needs to use tether's library.

The options are ``tvm-ffi-config``'s (``python -m tvm_ffi.config`` answers
from here while tether serves as tvm_ffi), so a build script written for
TVM-FFI (``g++ $(tvm-ffi-config --cxxflags) ... $(tvm-ffi-config --ldflags)
$(tvm-ffi-config --libs)``) builds against tether. Sources written for
TVM-FFI include its C++ headers (``<tvm/ffi/...>``), which tether does not
ship: ``--cxxflags``/``--cflags`` add them when found (see
``tvm_ffi_includedir``). ``--cmakedir`` is tether's CMake package under the
name ``tvm_ffi`` (``find_package(tvm_ffi CONFIG)``).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Optional

from . import libinfo

#: Environment variable naming the directory of TVM-FFI's C++ headers (the
#: one holding ``tvm/ffi/`` and ``dlpack/``); read by libinfo and the CMake package.
TVM_FFI_INCLUDE_ENV = libinfo.TVM_FFI_INCLUDE_ENV


def includedir() -> str:
    """tether's own headers (``<tether/...>``)."""
    return libinfo.find_include_path()


def tvm_ffi_includedir() -> Optional[str]:
    """The directory of TVM-FFI's C++ headers, or None (see ``libinfo.tvm_ffi_includedir``)."""
    return libinfo.tvm_ffi_includedir()


def _include_dirs() -> list:
    dirs = [includedir()]
    tvm_ffi = tvm_ffi_includedir()
    # Named again when it is tether's own directory (the package's copy of
    # TVM-FFI's headers sits beside tether's): tvm-ffi-config's answer
    # always names the include and the DLPack directory.
    if tvm_ffi is not None:
        dirs.append(tvm_ffi)
    return dirs


def libdir() -> str:
    return libinfo.package_dir()


def _find_libdir() -> str:
    """The directory holding the core library (where ``find_libtvm_ffi`` finds it)."""
    return os.path.dirname(libinfo.find_libtvm_ffi())


def libs() -> str:
    """The library to link, as a linker flag: ``-ltvm_ffi`` while tether
    serves as tvm_ffi (tvm-ffi-config's answer; the wheel's ``libtvm_ffi.so``
    resolves to the core), else ``-ltether_core``; on Windows the import
    library's path."""
    if sys.platform == "win32":
        return libinfo.find_windows_implib()
    name = os.path.basename(libinfo.find_libtvm_ffi())
    stem = name[len("lib"):] if name.startswith("lib") else name
    return "-l" + stem.split(".", 1)[0]


def cxxflags() -> str:
    return " ".join([f"-I{d}" for d in _include_dirs()] + ["-std=c++17"])


def cflags() -> str:
    """tether's include directory, then TVM-FFI's (which holds DLPack's
    header) when found: ``-I<find_include_path()> -I<find_dlpack_include_path()>``."""
    return " ".join(f"-I{d}" for d in _include_dirs())


def dlpack_includedir() -> str:
    """The directory holding ``dlpack/dlpack.h`` (TVM-FFI's header directory)."""
    return libinfo.find_dlpack_include_path()


def libfiles() -> str:
    """The library a build links: the core (its import library on Windows)."""
    return libinfo.find_windows_implib() if sys.platform == "win32" else libinfo.find_libtvm_ffi()


def cmakedir() -> str:
    """tether's CMake package directory (package name ``tvm_ffi``)."""
    return libinfo.find_cmake_path()


def sourcedir() -> str:
    return libinfo.find_source_path()


def cython_lib_path() -> str:
    """The compiled extension module (``tether._ffi``; tvm_ffi's option name)."""
    return libinfo.find_cython_lib()


def ldflags() -> str:
    """``-L<libdir>``, and on Unix tether-config adds an rpath to it so the
    program finds the core at run time. While tether serves as tvm_ffi the
    answer is tvm-ffi-config's: ``-L<libdir>`` alone, nothing on Windows."""
    from .provide import is_providing_tvm_ffi

    if is_providing_tvm_ffi():
        return "" if sys.platform == "win32" else f"-L{_find_libdir()}"
    flags = f"-L{libdir()}"
    if sys.platform != "win32":
        flags += f" -Wl,-rpath,{libdir()}"
    return flags


# Each option, in the order answers are printed (tvm-ffi-config's order),
# with what it prints.
_OPTIONS = (
    ("includedir", includedir, "tether's include directory (<tether/...>)"),
    ("tvm-ffi-includedir", dlpack_includedir, "TVM-FFI's C++ header directory (<tvm/ffi/...>)"),
    ("dlpack-includedir", dlpack_includedir, "the directory holding dlpack/dlpack.h"),
    ("cmakedir", cmakedir, "the CMake package directory (find_package(tvm_ffi CONFIG))"),
    ("libdir", libdir, "the directory of the library to link"),
    ("libfiles", libfiles, "the full path of the library to link"),
    ("sourcedir", sourcedir, "tether's source tree (installs from a checkout only)"),
    ("cython-lib-path", cython_lib_path, "the compiled extension module"),
    ("cxxflags", cxxflags, "C++ compiler flags"),
    ("cflags", cflags, "C compiler flags"),
    ("libs", libs, "libraries to link"),
    ("ldflags", ldflags, "linker flags"),
)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="tether-config", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, _, what in _OPTIONS:
        parser.add_argument(f"--{name}", action="store_true", help=f"print {what}")
    args = parser.parse_args(argv)
    chosen = [(name, fn) for name, fn, _ in _OPTIONS if getattr(args, name.replace("-", "_"))]
    if not chosen:
        parser.print_help()
        return 1
    for name, fn in chosen:
        try:
            print(fn())
        except (LookupError, RuntimeError, ValueError) as err:
            print(f"{parser.prog}: --{name}: {err}", file=sys.stderr)
            return 1
    return 0


def __main__() -> None:
    """tvm_ffi's name for the command's entry point."""
    sys.exit(main())


if __name__ == "__main__":
    sys.exit(main())
