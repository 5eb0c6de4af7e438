"""Compiling C++ into FFI modules at run time (tvm_ffi's ``cpp``):
``load_inline`` / ``build_inline`` from source text, ``load`` / ``build`` from
files. The libraries link tether's core and are loaded with
``tether.load_module``; see :mod:`tether.cpp.extension` for the headers and
the cache."""

from .dtype import to_cpp_dtype
from .extension import build, build_inline, load, load_inline

__all__ = ["build", "build_inline", "load", "load_inline", "to_cpp_dtype"]
