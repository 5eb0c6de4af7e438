"""Structural equality, hashing, keys and traversal (tvm_ffi's ``structural``).

Every function here is a thin front over one of the core's globals
(``ffi.StructuralEqual``, ``ffi.StructuralWalk``, ...): this module only turns
Python's calling conventions into the globals' argument lists. Callback
tables are given as a callable (a catch-all), a ``(type, callback)`` pair, a
``((type, ...), callback)`` group, or a sequence of pairs; a type is a
builtin, a registered object class, or ``typing.Any``/``object``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from enum import IntEnum
from typing import Any

from . import core
from .core import Object, register_object
from .type_schema import TypeSchema

__all__ = [
    "DefRegionKind", "InplaceMode", "StructuralKey", "StructuralMutator", "StructuralVisitor", "VisitInterrupt",
    "WalkOrder", "WalkResult", "get_first_structural_mismatch", "structural_equal", "structural_hash",
    "structural_map", "structural_mutate", "structural_visit", "structural_walk",
]

_U64 = (1 << 64) - 1


_API: dict = {}


def _api(name: str) -> core.Function:
    # Looked up once, as tvm_ffi's module-level ``_ffi_api`` functions are
    # (a lookup per call made the call itself a small part of a small
    # comparison).
    f = _API.get(name)
    if f is None:
        f = _API[name] = core.get_global_func(f"ffi.{name}")
    return f


class WalkOrder(IntEnum):
    """Whether callbacks run before (``PREORDER``) or after (``POSTORDER``)
    the node's children are traversed."""

    PREORDER = 0
    POSTORDER = 1


class WalkResult(IntEnum):
    """What a walk callback asks for: go on into the node's children
    (``ADVANCE``) or leave them out (``SKIP``). Stopping the whole walk is a
    :class:`VisitInterrupt`."""

    ADVANCE = 0
    SKIP = 1


class InplaceMode(IntEnum):
    """The third argument of a mutate callback: ``ALLOW`` when the value sits
    on a uniquely owned path (it may be changed in place), ``DISALLOW``
    otherwise (copy on write)."""

    DISALLOW = 0
    ALLOW = 1


class DefRegionKind(IntEnum):
    """The def region a traversal is in (``TVMFFIDefRegionKind``)."""

    NONE = 0
    DEF_PATTERN = 1
    DEF_SIMPLE = 2


def structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False, skip_tensor_content: bool = False) -> bool:
    """Whether ``lhs`` and ``rhs`` have the same structure and content."""
    return _api("StructuralEqual")(lhs, rhs, map_free_vars, skip_tensor_content)


def structural_hash(value: Any, map_free_vars: bool = False, skip_tensor_content: bool = False) -> int:
    """A hash consistent with :func:`structural_equal` under the same options,
    as an unsigned 64-bit integer (the core reports a signed one)."""
    return _api("StructuralHash")(value, map_free_vars, skip_tensor_content) & _U64


def get_first_structural_mismatch(lhs: Any, rhs: Any, map_free_vars: bool = False,
                                  skip_tensor_content: bool = False):
    """``None`` when the values are structurally equal, else the pair of
    :class:`~tether.access_path.AccessPath` naming where they first differ."""
    return _api("GetFirstStructuralMismatch")(lhs, rhs, map_free_vars, skip_tensor_content)


@register_object("ffi.StructuralKey")
class StructuralKey(Object):
    """A value wrapped to hash and compare structurally, with its hash
    computed once: usable as a key of Python dicts and of ``Map``."""

    __slots__ = ()

    def __init__(self, key: Any) -> None:
        self.__init_handle_by_constructor__(_api("StructuralKey"), key)

    def __hash__(self) -> int:
        return self.hash_i64 & _U64

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, StructuralKey) and bool(_api("StructuralKeyEqual")(self, other))

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)


@register_object("ffi.VisitInterrupt")
class VisitInterrupt(Object):
    """Returned by a traversal callback to stop the traversal; its ``value``
    is handed back to the caller inside the interrupt."""

    __slots__ = ()

    def __init__(self, value: Any = None) -> None:
        self.__init_handle_by_constructor__(_api("VisitInterrupt"), value)


@register_object("ffi.StructuralVisitor")
class StructuralVisitor(Object):
    """The visitor a :func:`structural_visit` callback receives; only a
    running traversal makes one."""

    __slots__ = ()

    def visit(self, value: Any):
        """Visit ``value`` through this visitor's callbacks."""
        return _api("StructuralVisitorVisit")(self, value)

    def default_visit(self, value: Any):
        """Visit ``value``'s children (its ``__s_visit__`` hook or reflected
        fields) without dispatching ``value`` itself to a callback. Never
        call it on the value whose hook is running: that recurses forever."""
        return _api("StructuralVisitorDefaultVisit")(self, value)

    def def_region_kind(self) -> DefRegionKind:
        return DefRegionKind(_api("StructuralVisitorDefRegionKind")(self))

    def with_def_region_kind(self, kind: int, callback: Callable[[], Any]) -> Any:
        """Run ``callback()`` with ``kind`` as the active def region."""
        return _api("StructuralVisitorWithDefRegionKind")(self, kind, callback)


@register_object("ffi.StructuralMutator")
class StructuralMutator(Object):
    """The mutator a :func:`structural_mutate` callback (and a type's
    mutation hook) receives."""

    __slots__ = ()

    def mutate(self, value: Any) -> Any:
        """Mutate ``value`` through this mutator's callbacks (copy on write:
        an unchanged value comes back as itself)."""
        return _api("StructuralMutatorMutate")(self, value)

    def default_mutate(self, value: Any) -> Any:
        """Mutate ``value``'s children by its hook or reflected fields
        without dispatching ``value`` itself to a callback."""
        return _api("StructuralMutatorDefaultMutate")(self, value)

    def var_remap_get(self, var: Object) -> Any:
        """The replacement recorded for variable ``var``, or ``None``."""
        return _api("StructuralMutatorVarRemapGet")(self, var)

    def var_remap_set(self, var: Object, mapped_value: Any) -> None:
        """Record ``mapped_value`` as the replacement of variable ``var``."""
        _api("StructuralMutatorVarRemapSet")(self, var, mapped_value)

    def def_region_kind(self) -> DefRegionKind:
        return DefRegionKind(_api("StructuralMutatorDefRegionKind")(self))

    def with_def_region_kind(self, kind: int, callback: Callable[[], Any]) -> Any:
        """Run ``callback()`` with ``kind`` as the active def region."""
        return _api("StructuralMutatorWithDefRegionKind")(self, kind, callback)


def _order_index(order, api_name: str) -> int:
    if isinstance(order, WalkOrder):
        return int(order)
    if order == "pre":
        return int(WalkOrder.PREORDER)
    if order == "post":
        return int(WalkOrder.POSTORDER)
    raise ValueError(f"Unknown {api_name} order: {order!r}")


def _callback_entries(callbacks, api_name: str) -> list:
    """``[(type, fn), ...]`` from any of the accepted callback forms, groups
    expanded in place (so the first matching entry still wins)."""
    entries: list = []

    def add(entry: tuple) -> None:
        types, fn = entry
        for t in types if isinstance(types, tuple) else (types,):
            entries.append((t, fn))

    if callable(callbacks):
        entries.append((Any, callbacks))
    elif isinstance(callbacks, tuple) and len(callbacks) == 2 and callable(callbacks[1]):
        add(callbacks)
    elif isinstance(callbacks, Sequence) and not isinstance(callbacks, (str, bytes)):
        for entry in callbacks:
            if not (isinstance(entry, tuple) and len(entry) == 2 and callable(entry[1])):
                raise TypeError(f"{api_name} callbacks within a sequence must be (type, callback) tuples")
            add(entry)
    else:
        raise TypeError(
            f"{api_name} callbacks must be callbacks, (type, callback) entries, "
            "((type1, type2, ...), callback) entries, or sequences of tuple entries")
    return entries


def _type_index(callback_type, api_name: str) -> int:
    """The core's type index for a callback's type; -1 matches everything."""
    annotation = Any if callback_type is object else callback_type
    try:
        index = TypeSchema.from_annotation(annotation).origin_type_index
    except TypeError as err:
        raise TypeError(f"{api_name} callback type must be a supported builtin, "
                        "typing.Any/object, or an FFI-registered object class") from err
    if index < 0 and annotation is not Any:
        raise TypeError(f"{api_name} callback type_index is negative, the only "
                        "acceptable negative type_index is -1 for Any")
    return index


def _indexed(callbacks, api_name: str, wrap=None) -> list:
    return [(_type_index(t, api_name), wrap(fn) if wrap else fn) for t, fn in _callback_entries(callbacks, api_name)]


def _with_region_enum(fn: Callable) -> Callable:
    # The core passes the region as an int; callers compare it with the enum.
    return lambda value, kind: fn(value, DefRegionKind(kind))


def _takes_inplace_mode(callback: Callable) -> bool:
    """Whether a mutate callback takes the third ``inplace_mode`` argument."""
    try:
        sig = inspect.signature(callback)
    except (TypeError, ValueError):  # no signature to read: the two-argument form
        return False
    try:
        sig.bind(None, None, InplaceMode.DISALLOW)
        return True
    except TypeError:
        pass
    try:
        sig.bind(None, None)
    except TypeError as err:
        raise TypeError("structural_mutate callback must accept (value, mutator) or "
                        "(value, mutator, inplace_mode)") from err
    return False


def structural_walk(root: Any, callbacks=(), with_def_region_kind=(), order="post"):
    """Walk ``root`` as a tree, calling the first matching callback on each
    value (``callbacks`` get the value; ``with_def_region_kind`` callbacks get
    the value and its :class:`DefRegionKind`). A callback returns ``None`` or
    :attr:`WalkResult.ADVANCE` to go on, :attr:`WalkResult.SKIP` to leave out
    the children (pre-order), or a :class:`VisitInterrupt` to stop; the walk
    returns that interrupt, or ``None`` when it ran to the end."""
    order_index = _order_index(order, "structural walk")
    plain = _indexed(callbacks, "structural_walk")
    regional = _indexed(with_def_region_kind, "structural_walk", _with_region_enum)
    return _api("StructuralWalk")(root, plain, regional, order_index)


def structural_visit(root: Any, callbacks=()):
    """Visit ``root`` with callbacks ``(value, visitor)`` that decide the
    descent themselves (:meth:`StructuralVisitor.visit` for chosen children,
    :meth:`StructuralVisitor.default_visit` for all; neither prunes)."""
    return _api("StructuralVisit")(root, _indexed(callbacks, "structural_visit"))


def structural_mutate(root: Any, callbacks=()) -> Any:
    """Rewrite ``root`` with callbacks ``(value, mutator[, inplace_mode])``
    that own the descent; what a callback returns is final. ``root._move()``
    lets uniquely owned parts change in place."""
    entries = [(_type_index(t, "structural_mutate"), fn, _takes_inplace_mode(fn))
               for t, fn in _callback_entries(callbacks, "structural_mutate")]
    return _api("StructuralMutate")(root, entries)


def structural_map(root: Any, callbacks=(), with_def_region_kind=(), order="post") -> Any:
    """Rewrite ``root`` by replacement callbacks run at every occurrence
    (``post(descend(pre(x)))``); a value nothing changed comes back as the
    same object. ``root._move()`` lets uniquely owned parts change in place."""
    order_index = _order_index(order, "structural map")
    plain = _indexed(callbacks, "structural_map")
    regional = _indexed(with_def_region_kind, "structural_map", _with_region_enum)
    return _api("StructuralMap")(root, plain, regional, order_index)
