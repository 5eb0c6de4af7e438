"""The Python target of the stub generator: type stubs inside ``.py``/``.pyi`` files."""

from __future__ import annotations

from .generator import PythonGenerator

__all__ = ["PythonGenerator"]
