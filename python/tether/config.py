"""``tether-config``: what a C or C++ build needs to use tether's library."""

from __future__ import annotations

import argparse
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def includedir() -> str:
    return os.path.join(_HERE, "include")


def libdir() -> str:
    return _HERE


def _find_libdir() -> str:
    """The directory holding the core library (where ``find_libtvm_ffi`` finds it)."""
    from .libinfo import find_libtvm_ffi

    return os.path.dirname(find_libtvm_ffi())


def libs() -> str:
    return "-ltether_core"


def cxxflags() -> str:
    return f"-std=c++17 -I{includedir()}"


def ldflags() -> str:
    flags = f"-L{libdir()}"
    if sys.platform != "win32":
        flags += f" -Wl,-rpath,{libdir()}"
    return flags


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="tether-config", description=__doc__)
    for name in ("includedir", "libdir", "libs", "cxxflags", "ldflags"):
        parser.add_argument(f"--{name}", action="store_true", help=f"print the {name}")
    args = parser.parse_args(argv)
    printed = False
    for name, fn in (("includedir", includedir), ("libdir", libdir), ("libs", libs), ("cxxflags", cxxflags), ("ldflags", ldflags)):
        if getattr(args, name):
            print(fn())
            printed = True
    if not printed:
        parser.print_help()
        return 1
    return 0


def __main__() -> None:
    """tvm_ffi's name for the command's entry point."""
    sys.exit(main())


if __name__ == "__main__":
    sys.exit(main())
