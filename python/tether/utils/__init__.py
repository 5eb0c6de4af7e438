"""Helpers shared across the package and offered to its users.

``tether.utils`` holds :class:`FileLock` (a cross-process advisory file
lock), the :mod:`~tether.utils.kwargs_wrapper` module (keyword-argument
front ends for positional-only callables) and ``ObjectConvertible`` (the
base for Python classes that convert themselves to FFI objects).  Further
submodules are imported on demand: :mod:`~tether.utils.unpack_dataclass`
and :mod:`~tether.utils.embed_cubin`.
"""

from ..core import ObjectConvertible
from . import kwargs_wrapper
from .lockfile import FileLock

__all__ = ["FileLock", "ObjectConvertible", "kwargs_wrapper"]
