"""The Rust target of the stub generator: bindings for the ``tvm_ffi`` crate inside ``.rs`` files."""

from __future__ import annotations

from .generator import RustGenerator

__all__ = ["RustGenerator"]
