"""Access paths (tvm_ffi's ``access_path``): where a value sits inside an
object graph, as a chain of steps from the root. The objects are the core's
``ffi.reflection.AccessPath`` / ``ffi.reflection.AccessStep``; mismatch
diagnostics (``get_first_structural_mismatch``) return them, and they print
as ``<root>.field[0]["key"]``."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from .core import Object, register_object

__all__ = ["AccessKind", "AccessPath", "AccessStep"]


class AccessKind(IntEnum):
    """What an :class:`AccessStep` does: read an attribute, an array item or
    a map item, or name one that is absent (the ``*_MISSING`` kinds)."""

    ATTR = 0
    ARRAY_ITEM = 1
    MAP_ITEM = 2
    ATTR_MISSING = 3
    ARRAY_ITEM_MISSING = 4
    MAP_ITEM_MISSING = 5


@register_object("ffi.reflection.AccessStep")
class AccessStep(Object):
    """One step of a path: its ``kind`` (an :class:`AccessKind` value) and
    ``key`` (attribute name, index or map key)."""

    __slots__ = ()


@register_object("ffi.reflection.AccessPath")
class AccessPath(Object):
    """An immutable path from a root value: ``parent`` (``None`` at the
    root), the last ``step``, and the ``depth``. Extending a path makes a new
    one; paths compare equal when their steps do."""

    __slots__ = ()

    def __init__(self) -> None:
        raise ValueError("AccessPath can't be initialized directly. "
                         "Use AccessPath.root() to create a path to the root object")

    @staticmethod
    def root() -> "AccessPath":
        """The empty path, naming the root itself."""
        return AccessPath._root()

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, AccessPath) and bool(self._path_equal(other))

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    __hash__ = Object.__hash__

    def is_prefix_of(self, other: "AccessPath") -> bool:
        """Whether ``other`` starts with every step of this path."""
        return bool(self._is_prefix_of(other))

    def attr(self, attr_key: str) -> "AccessPath":
        return self._attr(attr_key)

    def attr_missing(self, attr_key: str) -> "AccessPath":
        return self._attr_missing(attr_key)

    def array_item(self, index: int) -> "AccessPath":
        return self._array_item(index)

    def array_item_missing(self, index: int) -> "AccessPath":
        return self._array_item_missing(index)

    def map_item(self, key: Any) -> "AccessPath":
        return self._map_item(key)

    def map_item_missing(self, key: Any) -> "AccessPath":
        return self._map_item_missing(key)

    def to_steps(self):
        """The steps from the root to here, in order."""
        return self._to_steps()
