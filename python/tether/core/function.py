"""Functions: the ``Function`` wrapper, the global function table and the
conversion of Python values and callables to their FFI form."""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Optional

from .. import _ffi
from .object import Object, OpaquePyObject, _register_class
from .string import Bytes, PyNativeObject, String

__all__ = ["Function", "convert", "convert_func", "get_global_func", "register_global_func"]


class Function(_ffi.FunctionBase, Object):
    """An FFI function; calling it calls the native code (positional
    arguments; ``x._move()`` passes ``x`` by move). ``FunctionBase`` gives
    the wrappers their vectorcall entry (calls without an argument tuple)
    and ``release_gil``: whether calls give the GIL away while the native
    code runs (on by default; ``TVM_FFI_RELEASE_GIL_BY_DEFAULT=0`` turns the
    default off, as for tvm_ffi)."""

    __slots__ = ()

    def __call__(self, *args):  # replaced by a native tp_call below
        return _ffi.call(self, *args)

    @staticmethod
    def __from_extern_c__(c_symbol: int, *, keep_alive_object: Any = None) -> "Function":
        """A Function over a C safe-call function (``TVMFFISafeCallType``) at
        address ``c_symbol``; ``keep_alive_object`` (e.g. the JIT engine that
        made the code) lives as long as the Function."""
        return _kept_alive(_ffi.function_from_symbol(_address(c_symbol)), keep_alive_object)

    @staticmethod
    def __from_mlir_packed_safe_call__(mlir_packed_symbol: int, *, keep_alive_object: Any = None) -> "Function":
        """A Function over an MLIR packed safe-call entry point (``void
        f(void** packed)``, as MLIR's ExecutionEngine exports one) at address
        ``mlir_packed_symbol``; ``keep_alive_object`` lives as long as the Function."""
        return _kept_alive(_ffi.function_from_mlir_packed(_address(mlir_packed_symbol)), keep_alive_object)


def _address(symbol: Any) -> int:
    if isinstance(symbol, bool) or not isinstance(symbol, int):
        raise TypeError(f"c_symbol must be an int address, got {type(symbol).__name__}")
    return symbol


def _kept_alive(func: "Function", keep_alive_object: Any) -> "Function":
    """``func``, or a Function calling it that holds ``keep_alive_object``."""
    if keep_alive_object is None:
        return func

    def call(*args, _func=func, _keep=keep_alive_object):
        return _func(*args)

    return convert_func(call)


_ffi.install_function_call(Function)


_register_class(68, Function)


_FFI_FORMS = (type(None), bool, int, float, str, bytes, _ffi.CObject, _ffi.RValueRef, ctypes.c_void_p)


def _has_ffi_form(value: Any) -> bool:
    """Whether ``value`` is itself an FFI value (else it crosses opaquely)."""
    if isinstance(value, _FFI_FORMS) or hasattr(value, "type_code"):  # a dtype is one too
        return True
    from .device import Device  # above this module; imported when first needed

    return isinstance(value, Device)


def convert(value: Any) -> Any:
    """Convert a Python value to its FFI form (lists to Array, dicts to Map,
    callables to Function, ...) and return the result as Python sees it.
    Strings and bytes come back as ``String``/``Bytes`` holding their FFI
    object, as tvm_ffi returns them."""
    if isinstance(value, (str, bytes, bytearray)) and not isinstance(value, PyNativeObject) \
            and not hasattr(value, "type_code"):  # a dtype is a str too, but crosses as a DataType
        cls = String if isinstance(value, str) else Bytes
        obj = _ffi.to_object(value)
        if obj is None:  # stored inline in the value: no object to keep
            return cls(value)
        return cls.__from_tvm_ffi_object__(obj)
    if isinstance(value, BaseException):
        # As tvm_ffi: an Error with the exception's kind, message and
        # traceback (the one it came from, if it was raised natively).
        from .error import _convert_to_ffi_error

        return _convert_to_ffi_error(value)
    out = _ffi.convert(value)
    if out is value and not _has_ffi_form(out):
        # No FFI form: it crosses as an opaque object, which is what
        # convert gives (as tvm_ffi), not the value itself.
        return _ffi.opaque_object(out)
    return out


def convert_func(pyfunc: Callable, tensor_cls: Optional[type] = None) -> "Function":
    """A Python callable as an FFI Function. ``tensor_cls`` must speak
    DLPack's C exchange API (``__dlpack_c_exchange_api__``), as tvm_ffi
    requires; callbacks receive ``tether.Tensor`` arguments either way."""
    if tensor_cls is not None and not hasattr(tensor_cls, "__dlpack_c_exchange_api__"):
        raise TypeError(f"tensor_cls {tensor_cls!r} must expose __dlpack_c_exchange_api__")
    if not callable(pyfunc):
        raise TypeError(f"convert_func needs a callable, got {type(pyfunc).__name__}")
    if isinstance(pyfunc, Function):
        return pyfunc
    return _ffi.convert(pyfunc)


_global_funcs: dict = {}


def get_global_func(name: str, allow_missing: bool = False) -> Optional[Function]:
    """The global function ``name`` (the same wrapper every time)."""
    if not isinstance(name, str):
        raise TypeError(f"function name must be a str, got {type(name).__name__}")
    f = _ffi.get_global(name)
    if f is None:
        if allow_missing:
            return None
        raise ValueError(f"global function {name!r} is not registered")
    cached = _global_funcs.get(name)
    if cached is not None and cached.same_as(f):
        return cached
    _global_funcs[name] = f
    return f


def register_global_func(func_name, f: Optional[Callable] = None, override: bool = False):
    """Register a Python callable as global function ``func_name`` and
    return the registered ``Function``. Usable as ``@register_global_func``
    (the name is the function's ``__name__``), ``@register_global_func("name")``
    or ``register_global_func("name", f)``."""
    if not isinstance(func_name, str) and callable(func_name) and f is None:
        f, func_name = func_name, getattr(func_name, "__name__", None)
    if not isinstance(func_name, str):
        raise ValueError(f"expect string function name, got {type(func_name).__name__}")

    def register(func: Callable) -> "Function":
        if not callable(func):
            raise TypeError(f"register_global_func needs a callable, got {type(func).__name__}")
        _ffi.set_global(func_name, func, override)
        _global_funcs.pop(func_name, None)
        return get_global_func(func_name)

    return register(f) if f is not None else register


def _get_global_func(name: str, allow_missing: bool) -> Optional[Function]:
    return get_global_func(name, allow_missing)


def _register_global_func(name: str, pyfunc: Callable, override: bool) -> Function:
    """Register ``pyfunc`` (a callable or Function) as global ``name`` and
    return the registered Function."""
    return register_global_func(name, pyfunc, override)


def _convert_to_ffi_func(pyfunc: Callable, tensor_cls: Optional[type] = None) -> Function:
    """A Python callable as an FFI Function (``tensor_cls`` is checked as
    ``convert_func`` checks it; callbacks receive ``tether.Tensor`` arguments)."""
    return convert_func(pyfunc, tensor_cls)


def _convert_to_opaque_object(pyobject: Any) -> OpaquePyObject:
    """Wrap any Python object in an ``ffi.OpaquePyObject`` (the wrapper,
    whose ``pyobject()`` gives the object back)."""
    return _ffi.opaque_object(pyobject)
