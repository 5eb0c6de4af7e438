"""Deferred ``py_class`` registration: a class whose annotations name a
class not defined yet (``next: Later``, mutual references) waits, as
TVM-FFI's decorator does, until a later ``py_class`` or its first
instantiation can resolve them.

``py_class`` registers each class it finishes under its module's name, so
the annotations of waiting classes in that module can name it even before
the module binds the name (at module scope the decorator runs first).
While a class waits, a placeholder ``__new__`` on it retries the
registration and, when names are still missing, raises TypeError
("Cannot instantiate X: unresolved forward references: [...]").
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List

__all__ = ["UnresolvedAnnotations", "by_module", "defer", "from_other_modules", "flush", "is_pending", "note_registered"]

# {module name: {class name: py_class}}
_BY_MODULE: Dict[str, Dict[str, type]] = {}
# (class, finish) in decoration order; ``finish()`` registers the class.
_PENDING: List[tuple] = []


class UnresolvedAnnotations(TypeError):
    """Annotations of a class that cannot be evaluated yet."""

    def __init__(self, cls: type, problems: List[str]) -> None:
        super().__init__(f"Cannot instantiate {cls.__name__}: unresolved forward references: {problems}")
        self.problems = problems


def by_module(module: str) -> Dict[str, type]:
    """The py_classes registered so far in ``module``, by class name."""
    return _BY_MODULE.get(module, {})


def from_other_modules(module: str) -> Dict[str, type]:
    """The py_classes of every other module by class name (the fallback
    for a name its module only imports under ``TYPE_CHECKING``)."""
    out: Dict[str, type] = {}
    for name, classes in list(_BY_MODULE.items()):
        if name != module:
            for cls_name, cls in classes.items():
                out.setdefault(cls_name, cls)
    return out


def note_registered(cls: type) -> None:
    _BY_MODULE.setdefault(cls.__module__, {})[cls.__name__] = cls


def is_pending(cls: type) -> bool:
    """Whether ``cls`` or one of its bases waits for its annotations."""
    return any(p[0] in cls.__mro__ for p in _PENDING)


def _complete(cls: type, finish: Callable[[], Any]) -> None:
    finish()  # UnresolvedAnnotations while names are still missing
    _PENDING[:] = [p for p in _PENDING if p[0] is not cls]
    placeholder = cls.__dict__.get("__new__")
    if isinstance(placeholder, staticmethod) and placeholder.__func__ is _placeholder_new:
        delattr(cls, "__new__")


def _try(cls: type, finish: Callable[[], Any]) -> bool:
    try:
        _complete(cls, finish)
    except UnresolvedAnnotations:
        return False
    return True


def flush() -> None:
    """Register every waiting class whose annotations now resolve (repeats
    until no more progress: one registration may unblock another)."""
    progress = True
    while progress and _PENDING:
        progress = any([_try(cls, finish) for cls, finish in list(_PENDING)])


def _placeholder_new(cls: type, *args: Any, **kwargs: Any) -> Any:
    for owner in reversed(cls.__mro__):
        entry = next((p for p in _PENDING if p[0] is owner), None)
        if entry is not None:
            _complete(*entry)
    flush()
    return cls.__new__(cls, *args, **kwargs)


def defer(cls: type, finish: Callable[[], Any]) -> None:
    """Keep ``cls`` waiting; ``finish()`` registers it once its annotations
    resolve (and raises :class:`UnresolvedAnnotations` before that)."""
    _PENDING.append((cls, finish))
    cls.__new__ = staticmethod(_placeholder_new)
