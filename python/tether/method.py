"""``tether.method``: a method whose annotated parameters are checked and
converted to their declared types (``TypeSchema``) on every call."""

from __future__ import annotations

import functools
import inspect
import typing

from .type_schema import TypeSchema

__all__ = ["method"]


def method(fn=None, *, static: bool = False):
    """Decorate a method so that annotated arguments are converted to their
    declared types (``x: int`` accepts ``np.int32(3)``, ``xs: List[int]``
    rejects ``["a"]`` with TypeError) before the body runs."""

    def wrap(f):
        sig = inspect.signature(f)
        hints = typing.get_type_hints(f)
        schemas = {n: TypeSchema.from_annotation(t) for n, t in hints.items() if n != "return"}

        @functools.wraps(f)
        def typed(*args, **kwargs):
            bound = sig.bind(*args, **kwargs)
            for name, value in bound.arguments.items():
                schema = schemas.get(name)
                if schema is not None:
                    bound.arguments[name] = schema.convert_value(value)
            return f(*bound.args, **bound.kwargs)

        typed.__tvm_ffi_method__ = True
        return staticmethod(typed) if static else typed

    return wrap(fn) if fn is not None else wrap
