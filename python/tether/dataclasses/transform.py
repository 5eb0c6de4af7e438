"""``dataclass_transform`` (PEP 681) for the decorators: type checkers read
``py_class``/``c_class`` as dataclass makers whose fields are given by
:class:`Field`/``field`` and converted (``kwargs["converter"]``)."""

try:
    from typing import dataclass_transform  # Python 3.11+
except ImportError:  # pragma: no cover - Python 3.9 / 3.10
    try:
        from typing_extensions import dataclass_transform
    except ImportError:

        def dataclass_transform(**kwargs):
            def mark(fn):
                fn.__dataclass_transform__ = {"eq_default": kwargs.get("eq_default", False),
                                              "order_default": kwargs.get("order_default", False),
                                              "kw_only_default": kwargs.get("kw_only_default", False),
                                              "field_specifiers": kwargs.get("field_specifiers", ()),
                                              "kwargs": {k: v for k, v in kwargs.items() if k not in (
                                                  "eq_default", "order_default", "kw_only_default",
                                                  "field_specifiers")}}
                return fn

            return mark

__all__ = ["dataclass_transform"]
