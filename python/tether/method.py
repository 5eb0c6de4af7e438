"""``tether.method`` (``tvm_ffi.method``): marks a method of a ``py_class``
body for registration as a reflected type method (``TypeInfo.methods``,
callable by name from any FFI consumer), and converts its annotated
parameters to their declared types (``TypeSchema``) on every call.

``@method`` over ``@staticmethod`` registers a static method; classmethods
and non-callables are refused (TVM-FFI's messages)."""

from __future__ import annotations

import functools
import inspect
import typing

from .type_schema import TypeSchema

__all__ = ["method"]


def _typed(f):
    from .core import CAny, _to_py_class_value  # noqa: PLC0415 - core imports this module's users

    sig = inspect.signature(f)
    schemas = None

    def resolved() -> dict:
        nonlocal schemas
        if schemas is None:
            # Annotations may name classes defined after the method (its own
            # class, in a class body): resolved at the first call.
            try:
                hints = typing.get_type_hints(f)
            except Exception:  # noqa: BLE001 - unresolvable annotations are not checked
                hints = {}
            out = {}
            for n, t in hints.items():
                if n == "return":
                    continue
                try:
                    out[n] = TypeSchema.from_annotation(t)
                except (TypeError, ValueError):
                    continue
            schemas = out
        return schemas

    @functools.wraps(f)
    def typed(*args, **kwargs):
        checks = resolved()
        if not checks:
            return f(*args, **kwargs)
        bound = sig.bind(*args, **kwargs)
        for name, value in bound.arguments.items():
            schema = checks.get(name)
            if schema is not None:
                converted = schema.convert(value)
                if isinstance(converted, CAny):  # ``Any``: the value as it crosses, back in Python
                    converted = _to_py_class_value(converted)
                bound.arguments[name] = converted
        return f(*bound.args, **bound.kwargs)

    typed.__ffi_method__ = True
    return typed


def method(fn=None, *, static: bool = False):
    """Mark a method for type-method registration by ``py_class`` and
    convert its annotated arguments (``x: int`` accepts ``np.int32(3)``,
    ``xs: List[int]`` rejects ``["a"]`` with TypeError) before the body runs."""

    def wrap(f):
        if isinstance(f, staticmethod):
            return staticmethod(_typed(f.__func__))
        if isinstance(f, classmethod):
            raise TypeError(
                "@tvm_ffi.method: @classmethod is not supported for FFI TypeMethod registration — the "
                "classmethod's ``cls`` first arg does not match the packed-call convention. Use "
                "@staticmethod or a plain instance method instead.")
        if not callable(f):
            raise TypeError(f"@tvm_ffi.method: expected a callable, got {type(f).__name__}.")
        typed = _typed(f)
        return staticmethod(typed) if static else typed

    return wrap(fn) if fn is not None else wrap
