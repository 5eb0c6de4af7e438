"""Resolving the annotations of a ``py_class`` body into field types, by
owner class (the class and the unregistered mixins whose annotations
become its fields), with the names tvm_ffi's ``_resolve_fields`` gives them.

tether resolves a class's fields when ``py_class`` runs, in one step with
its registration (names local to the defining function included), so there
is no pending queue: a forward reference that cannot be resolved then is
an error naming the field.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from .. import core  # noqa: F401  (tvm_ffi.dataclasses._resolve_fields's name)

# (owner classes in field order, {owner: {field name: resolved annotation}})
ResolvedFields = Tuple[List[type], Dict[type, Dict[str, Any]]]

__all__ = ["ResolvedFields", "own_annotations", "resolve_type_hints_by_owner"]


def _build_localns(cls: type, *, cross_module: bool = False) -> Dict[str, Any]:
    """Names an annotation of ``cls`` may use beyond its module's globals:
    the class itself and the classes of its MRO (with ``cross_module``,
    the globals of the modules that define those bases too)."""
    import sys

    ns: Dict[str, Any] = {}
    for base in reversed(cls.__mro__):
        if cross_module:
            module = sys.modules.get(base.__module__)
            if module is not None:
                ns.update(vars(module))
        ns[base.__name__] = base
    return ns


def own_annotations(cls: type) -> Dict[str, Any]:
    """The annotations written in ``cls``'s own body (not its bases')."""
    return dict(cls.__dict__.get("__annotations__", {}))


def resolve_type_hints_by_owner(cls: type, globalns: Optional[dict] = None,
                                localns: Optional[dict] = None) -> ResolvedFields:
    """The owners of ``cls``'s fields and their resolved annotations.
    TypeError naming the field when an annotation cannot be resolved."""
    from .py_class import _owners, _registered_parent, _resolve

    owners = _owners(cls, _registered_parent(cls))
    scope = dict(globalns or {})
    scope.update(localns or {})
    return owners, {owner: _resolve(owner, cls, scope) for owner in owners}
