"""Errors: the ``Error`` object and the mapping between error kinds and
Python exception classes, both ways (``ERROR_NAME_TO_TYPE`` /
``ERROR_TYPE_TO_NAME``; ``tether.error.register_error`` fills them).

A native error crossing into Python becomes an instance of the class
registered for its kind, with the native backtrace appended to its
traceback (``_WITH_APPEND_BACKTRACE``, installed by ``tether.error``); a
Python exception crossing out becomes an ``Error`` whose backtrace is its
traceback (``_TRACEBACK_TO_BACKTRACE_STR``).
"""

from __future__ import annotations

import traceback
import types
from typing import Callable, Optional

from .. import _ffi
from .object import Object, _register_class

__all__ = ["Error", "ERROR_NAME_TO_TYPE", "ERROR_TYPE_TO_NAME"]

ERROR_NAME_TO_TYPE: dict = {}  # error kind -> exception class
ERROR_TYPE_TO_NAME: dict = {}  # exception class -> error kind
for _cls in (RuntimeError, ValueError, TypeError, AttributeError, KeyError, IndexError, AssertionError, MemoryError):
    ERROR_NAME_TO_TYPE[_cls.__name__] = _cls
    ERROR_TYPE_TO_NAME[_cls] = _cls.__name__
del _cls


def _default_traceback_to_backtrace_str(tb: Optional[types.TracebackType]) -> str:
    # Most recent call first, as native backtraces are stored.
    return "".join(reversed(traceback.format_tb(tb))) if tb is not None else ""


# Replaced by tether.error with its frame-synthesising versions.
_WITH_APPEND_BACKTRACE: Optional[Callable[[BaseException, str], BaseException]] = None
_TRACEBACK_TO_BACKTRACE_STR: Optional[Callable[[Optional[types.TracebackType]], str]] = None


class Error(Object):
    """An FFI error object (as a value, e.g. inside a container)."""

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        # As tvm_ffi: __new__ alone gives a wrapper without a handle
        # (``Error.__new__(Error).__chandle__() == 0``); __init__ makes the error.
        return _ffi.CObject.__new__(cls)

    def __init__(self, kind: str = "RuntimeError", message: str = "", backtrace: str = ""):
        self.__move_handle_from__(_ffi.error_new(kind, message, backtrace))

    @property
    def kind(self) -> str:
        return _error_parts(self)[0]

    @property
    def message(self) -> str:
        return _error_parts(self)[1]

    @property
    def backtrace(self) -> str:
        return _ffi.error_backtrace(self)

    def update_backtrace(self, backtrace: str) -> None:
        """Replace the stored backtrace with ``backtrace``."""
        if not isinstance(backtrace, str):
            raise TypeError(f"backtrace must be a str, got {type(backtrace).__name__}")
        _ffi.error_update_backtrace(self, backtrace, False)

    @property
    def extra_context(self):
        """The payload native code attached to this error, or None."""
        return _ffi.error_extra_context(self)

    def py_error(self) -> BaseException:
        """The Python exception for this error: the class registered for its
        kind (``register_error``; RuntimeError otherwise), with the native
        backtrace appended to its traceback."""
        return _py_error_of(self)

    def __reduce__(self):
        if not _ffi.chandle(self):
            return (_error_without_handle, (type(self),))
        return (type(self), (self.kind, self.message, self.backtrace))


def _error_without_handle(cls: type) -> Error:
    """What an unpickled handle-less Error is: again one without a handle."""
    return cls.__new__(cls)


def _error_parts(err: Error):
    return _ffi.error_parts(err)


_register_class(67, Error)


def _py_error_of(err: Error) -> BaseException:
    """The Python exception an FFI error becomes."""
    cls = ERROR_NAME_TO_TYPE.get(err.kind, RuntimeError)
    try:
        exc = cls(err.message)
    except Exception:  # a registered class with another constructor
        exc = RuntimeError(err.message)
    backtrace = err.backtrace
    append = _package_attr("_WITH_APPEND_BACKTRACE")
    try:
        if backtrace and append is not None:
            exc = append(exc, backtrace)
        try:
            exc.__tvm_ffi_error__ = err
            # The frames appended so far are the error's own: when the
            # exception goes back into native code, only the traceback
            # entries added after these join the error's backtrace. The
            # entry is named by its id (it stays in the chain, so alive), so
            # the exception still pickles and copies.
            exc.__tether_backtrace_mark__ = id(exc.__traceback__)
        except AttributeError:
            pass
        return exc
    finally:
        # Out of the reach of the appended frames' f_back chains (see
        # tether.error._with_append_backtrace).
        del exc


def _kind_of(exc: BaseException) -> str:
    """The error kind a Python exception crosses with (its class's
    registered name; RuntimeError otherwise, as tvm_ffi)."""
    return ERROR_TYPE_TO_NAME.get(type(exc), "RuntimeError")


def _convert_to_ffi_error(error: BaseException) -> Error:
    """The ``Error`` a Python exception crosses as (the one it came from,
    when it was raised by native code)."""
    if not isinstance(error, BaseException):
        raise TypeError(f"_convert_to_ffi_error needs an exception, got {type(error).__name__}")
    to_str = _package_attr("_TRACEBACK_TO_BACKTRACE_STR") or _default_traceback_to_backtrace_str
    backtrace = to_str(error.__traceback__)
    carried = getattr(error, "__tvm_ffi_error__", None)
    if isinstance(carried, Error):
        # The traceback holds the native frames appended when it was raised,
        # and now the Python frames it went through since.
        carried.update_backtrace(backtrace)
        return carried
    return Error(_kind_of(error), str(error), backtrace)


def _package_attr(name: str):
    # Read through the package, where clients (and tether.error) assign them.
    import sys

    return getattr(sys.modules[__package__], name, None)
