"""Error kinds and Python exception classes, both ways (``register_error``).

An FFI error has a *kind* (a string such as ``"ValueError"``). Raised into
Python, it becomes an instance of the class registered for its kind
(RuntimeError when none is), with the native backtrace appended to the
Python traceback as frames, as tvm_ffi shows it; the ``ffi.Error`` object
stays reachable as ``exc.__tvm_ffi_error__``. A Python exception crossing
into native code gets the kind registered for its class (RuntimeError
otherwise); an exception that started in Python comes back as the very
same exception object.
"""

from __future__ import annotations

import re
import types
from typing import Any, Optional

from . import core

__all__ = ["register_error", "ERROR_NAME_TO_TYPE", "ERROR_TYPE_TO_NAME"]

ERROR_NAME_TO_TYPE: dict = core.ERROR_NAME_TO_TYPE
ERROR_TYPE_TO_NAME: dict = core.ERROR_TYPE_TO_NAME


def register_error(name_or_cls=None, cls: Optional[type] = None) -> Any:
    """Map an error kind to a Python exception class, both ways.

    ``@register_error`` (kind = class name), ``@register_error("Kind")`` or
    ``register_error("Kind", cls)``.
    """
    if isinstance(name_or_cls, type):
        cls, name_or_cls = name_or_cls, name_or_cls.__name__

    def register(mycls: type) -> type:
        if not (isinstance(mycls, type) and issubclass(mycls, BaseException)):
            raise TypeError(f"register_error needs an exception class, got {mycls!r}")
        name = name_or_cls if isinstance(name_or_cls, str) else mycls.__name__
        ERROR_NAME_TO_TYPE[name] = mycls
        ERROR_TYPE_TO_NAME[mycls] = name
        return mycls

    return register if cls is None else register(cls)


for _cls in (RuntimeError, ValueError, TypeError, AttributeError, KeyError, IndexError, AssertionError, MemoryError):
    register_error(_cls.__name__, _cls)
del _cls

_FRAME = re.compile(r'File "(.+?)", line (\d+), in (.+)')
_code_cache: dict = {}


def _frame_for(filename: str, lineno: int, func: str) -> types.FrameType:
    """A frame whose code claims to be ``func`` at ``filename:lineno``."""
    key = (filename, lineno, func)
    code = _code_cache.get(key)
    if code is None:
        code = compile("\n" * (lineno - 1) + "_getframe()", filename, "eval").replace(co_name=func)
        _code_cache[key] = code
    import sys

    context = {"_getframe": sys._getframe}
    return eval(code, context, context)  # noqa: S307 - a fixed expression


def _append_backtrace(exc: BaseException, backtrace: str) -> BaseException:
    """Append the native frames of ``backtrace`` (TVM-FFI's ``File "f",
    line n, in func`` lines) to ``exc``'s traceback."""
    tb = exc.__traceback__
    for line in backtrace.split("\n"):
        m = _FRAME.match(line.strip())
        if not m:
            continue
        frame = _frame_for(m.group(1), int(m.group(2)), m.group(3))
        tb = types.TracebackType(tb, frame, frame.f_lasti, int(m.group(2)))
    return exc.with_traceback(tb)


def _py_error_of(err: "core.Error") -> BaseException:
    cls = ERROR_NAME_TO_TYPE.get(err.kind, RuntimeError)
    try:
        exc = cls(err.message)
    except Exception:  # a registered class with another constructor
        exc = RuntimeError(err.message)
    backtrace = err.backtrace
    if backtrace:
        exc = _append_backtrace(exc, backtrace)
    try:
        exc.__tvm_ffi_error__ = err
    except AttributeError:
        pass
    return exc


def _kind_of(exc: BaseException) -> str:
    """The error kind a Python exception crosses with (its class's
    registered name; RuntimeError otherwise, as tvm_ffi)."""
    return ERROR_TYPE_TO_NAME.get(type(exc), "RuntimeError")
