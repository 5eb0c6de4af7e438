"""Stub generation for FFI bindings.

Fills marked regions of Python (``.py``/``.pyi``) and Rust (``.rs``) source
files with declarations derived from the reflection registry: the global
functions and object types that loaded libraries registered. The command is
:mod:`tether.stub.cli` (``tether-stub``); it follows the ``tvm-ffi-stubgen``
marker protocol, so a tree annotated for one works with the other.
"""
