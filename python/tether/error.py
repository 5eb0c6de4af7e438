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
from .core.error import _py_error_of, _kind_of  # noqa: F401  (tether's older homes of these)

__all__ = ["register_error", "ERROR_NAME_TO_TYPE", "ERROR_TYPE_TO_NAME", "TracebackManager"]

ERROR_NAME_TO_TYPE: dict = core.ERROR_NAME_TO_TYPE
ERROR_TYPE_TO_NAME: dict = core.ERROR_TYPE_TO_NAME

_FRAME = re.compile(r'File "(.+?)", line (\d+), in (.+)')


def _parse_backtrace(backtrace: str) -> list:
    """``(filename, lineno, func)`` for every ``File "f", line n, in func``
    line of a native backtrace, in order."""
    frames = []
    for line in backtrace.split("\n"):
        m = _FRAME.match(line.strip())
        if m:
            frames.append((m.group(1), int(m.group(2)), m.group(3)))
    return frames


class TracebackManager:
    """Turns native backtrace lines into Python traceback entries, so a
    native error's frames show in the Python traceback (one code object per
    distinct frame, cached)."""

    def __init__(self) -> None:
        self._code_cache: dict = {}

    def _get_cached_code_object(self, filename: str, lineno: int, func: str) -> types.CodeType:
        key = (filename, lineno, func)
        code = self._code_cache.get(key)
        if code is None:
            code = compile("\n" * (lineno - 1) + "_getframe()", filename, "eval").replace(co_name=func)
            self._code_cache[key] = code
        return code

    def _create_frame(self, filename: str, lineno: int, func: str) -> types.FrameType:
        import sys

        context = {"_getframe": sys._getframe}
        return eval(self._get_cached_code_object(filename, lineno, func), context, context)  # noqa: S307

    def append_traceback(self, tb: Optional[types.TracebackType], filename: str, lineno: int,
                         func: str) -> types.TracebackType:
        """``tb`` with one more entry, for ``func`` at ``filename:lineno``."""
        frame = self._create_frame(filename, lineno, func)
        return types.TracebackType(tb, frame, frame.f_lasti, lineno)


_TRACEBACK_MANAGER = TracebackManager()


def _with_append_backtrace(py_error: BaseException, backtrace: str) -> BaseException:
    """``py_error`` with the native frames of ``backtrace`` (most recent call
    first) appended to its traceback (most recent call last): each frame
    becomes the head of the chain built so far."""
    # The new frames' f_back chains reach this frame (and its caller's):
    # dropping the locals that hold the exception keeps it out of a
    # reference cycle through its own traceback, so it is freed by
    # reference counting rather than left to the collector.
    try:
        tb = py_error.__traceback__
        for filename, lineno, func in _parse_backtrace(backtrace):
            tb = _TRACEBACK_MANAGER.append_traceback(tb, filename, lineno, func)
        return py_error.with_traceback(tb)
    finally:
        del py_error, tb


def _traceback_to_backtrace_str(tb: Optional[types.TracebackType]) -> str:
    """A Python traceback in the native backtrace format: most recent call
    first, as native frames are stored (``_with_append_backtrace`` turns it
    back into traceback order)."""
    lines = []
    while tb is not None:
        code = tb.tb_frame.f_code
        lines.append(f'  File "{code.co_filename}", line {tb.tb_lineno}, in {code.co_name}\n')
        tb = tb.tb_next
    return "".join(reversed(lines))


core._WITH_APPEND_BACKTRACE = _with_append_backtrace
core._TRACEBACK_TO_BACKTRACE_STR = _traceback_to_backtrace_str


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
