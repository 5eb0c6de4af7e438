"""Field-wise equality, hashing and ordering of FFI objects, as TVM-FFI's
``RecursiveEq``/``RecursiveHash``/``RecursiveLt`` define them for ``eq=``,
``unsafe_hash=`` and ``order=``.

The comparisons are the core's own global functions (``ffi.RecursiveEq``,
``ffi.RecursiveHash``, ``ffi.RecursiveLt`` ...), as upstream's dunders use
them: they run on an explicit work stack, so million-deep chains and cycles
through one object compare without Python recursion. Objects with
reflected fields compare their fields in declaration order (parents'
first), skipping fields registered with ``compare=False`` or, for hashing,
``hash=False``; ``Array``/``List`` compare element-wise, ``Map``/``Dict`` by
keys.
"""

from __future__ import annotations

from typing import Any

from .. import core

__all__ = ["recursive_eq", "recursive_hash", "recursive_compare"]

def _global(name: str) -> Any:
    return core._get_global_func(name, True)


_recursive_eq = _global("ffi.RecursiveEq")
_recursive_lt = _global("ffi.RecursiveLt")
_recursive_hash = _global("ffi.RecursiveHash")


def recursive_eq(a: Any, b: Any) -> bool:
    return bool(_recursive_eq(a, b))


def recursive_hash(x: Any) -> int:
    return int(_recursive_hash(x))


def recursive_compare(a: Any, b: Any) -> int:
    """-1, 0 or 1, TypeError for values that have no order."""
    if _recursive_lt(a, b):
        return -1
    return 0 if _recursive_eq(a, b) else 1
