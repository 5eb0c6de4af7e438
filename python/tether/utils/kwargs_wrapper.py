"""Keyword-argument front ends for positional-only callables.

FFI functions take their arguments by position.  :func:`make_kwargs_wrapper`
(and :func:`make_kwargs_wrapper_from_signature`, which reads the parameters
off an ``inspect.Signature``) builds a real Python function with the wanted
signature -- positional parameters with right-aligned defaults, then
keyword-only ones -- whose body forwards everything positionally to the
target.  The function is generated from source text, so calling it costs
one ordinary Python call; ``inspect.signature`` reports the declared
parameters.

Defaults that are ``None`` or a bool appear in the generated signature
literally.  Every other default shows as the ``MISSING`` sentinel and is
looked up in a side table when the argument is omitted, so no ``repr`` of a
user value ever becomes source text.  Parameter names are checked to be
identifiers that are not keywords and do not collide with the generated
body's own names (those begin with ``__i_``).
"""

from __future__ import annotations

import functools
import inspect
import keyword
from collections.abc import Iterable
from typing import Any, Callable, Optional

from .unpack_dataclass import unpack_dataclass_to_tuple

# Names the generated code uses for itself; user parameters may not take them.
_INTERNAL_TARGET_FUNC = "__i_target_func"
_INTERNAL_MISSING = "__i_MISSING"
_INTERNAL_DEFAULTS_DICT = "__i_arg_defaults"
_INTERNAL_UNPACK = "__i_unpack"
_INTERNAL_NAMES = {_INTERNAL_TARGET_FUNC, _INTERNAL_MISSING, _INTERNAL_DEFAULTS_DICT, _INTERNAL_UNPACK}


def _missing_sentinel() -> Any:
    """The package-wide ``MISSING`` sentinel (read when first needed, so
    importing this module pulls in nothing beyond the standard library)."""
    try:
        from ..core import MISSING  # noqa: PLC0415
    except ImportError:
        from ..dataclasses.missing import MISSING  # noqa: PLC0415
    return MISSING


def __getattr__(name: str) -> Any:
    if name == "MISSING":
        return _missing_sentinel()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _validate_argument_names(names: list, arg_type: str) -> None:
    """Raise unless ``names`` are distinct identifiers that are not keywords.

    ``arg_type`` names the kind of parameter in messages (``"Argument"``,
    ``"Keyword-only argument"``).
    """
    if len(set(names)) != len(names):
        raise ValueError(f"Duplicate {arg_type.lower()} names found in: {names}")
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"{arg_type} name must be a string, got {type(name).__name__}: {name!r}")
        if keyword.iskeyword(name):
            raise ValueError(
                f"Invalid {arg_type.lower()} name: {name!r} is a Python keyword "
                "and cannot be used as a parameter name"
            )
        if not name.isidentifier():
            raise ValueError(f"Invalid {arg_type.lower()} name: {name!r} is not a valid Python identifier")


def _validate_wrapper_args(
    arg_names: list,
    arg_defaults: tuple,
    kwonly_names: list,
    kwonly_defaults: dict,
    reserved_names: set,
) -> None:
    """Check the parameters of :func:`make_kwargs_wrapper` before any code is made."""
    _validate_argument_names(arg_names, "Argument")
    if not isinstance(arg_defaults, tuple):
        raise TypeError(f"arg_defaults must be a tuple, got {type(arg_defaults).__name__}")
    if len(arg_defaults) > len(arg_names):
        raise ValueError(
            f"arg_defaults has {len(arg_defaults)} values but only {len(arg_names)} positional arguments"
        )
    _validate_argument_names(kwonly_names, "Keyword-only argument")
    kwonly_set = set(kwonly_names)
    for key in kwonly_defaults:
        if key not in kwonly_set:
            raise ValueError(f"Default provided for '{key}' which is not in kwonly_names: {kwonly_names}")
    positional_set = set(arg_names)
    both = positional_set & kwonly_set
    if both:
        raise ValueError(f"Arguments cannot be both positional and keyword-only: {both}")
    clashes = (positional_set | kwonly_set) & reserved_names
    if clashes:
        raise ValueError(
            f"Argument names conflict with internal names: {clashes}. "
            'Please avoid using names starting with "__i_"'
        )


def _build_wrapper_code(
    arg_names: list,
    arg_defaults: tuple,
    kwonly_names: list,
    kwonly_defaults: dict,
    dc_to_tuple_set: set,
) -> tuple:
    """Source text of the wrapper and the table of defaults it reads.

    Returns ``(code, defaults)``: ``code`` defines ``wrapper``; ``defaults``
    maps each parameter whose default is neither None nor a bool to that
    default.
    """
    positional_defaults = dict(zip(arg_names[len(arg_names) - len(arg_defaults):], arg_defaults))
    params: list = []
    forwarded: list = []
    table: dict = {}

    def forward(name: str, expr: str) -> None:
        forwarded.append(f"{_INTERNAL_UNPACK}({expr})" if name in dc_to_tuple_set else expr)

    def declare(name: str, has_default: bool, default: Any = None) -> None:
        if not has_default:
            params.append(name)
            forward(name, name)
        elif default is None or type(default) is bool:
            params.append(f"{name}={default!r}")
            forward(name, name)
        else:
            params.append(f"{name}={_INTERNAL_MISSING}")
            table[name] = default
            forward(name, f'{_INTERNAL_DEFAULTS_DICT}["{name}"] if {name} is {_INTERNAL_MISSING} else {name}')

    for name in arg_names:
        declare(name, name in positional_defaults, positional_defaults.get(name))
    if kwonly_names:
        params.append("*")
        for name in kwonly_names:
            declare(name, name in kwonly_defaults, kwonly_defaults.get(name))

    code = (
        f"\ndef wrapper({', '.join(params)}):\n"
        f"    return {_INTERNAL_TARGET_FUNC}({', '.join(forwarded)})\n"
    )
    return code, table


def make_kwargs_wrapper(
    target_func: Callable,
    arg_names: list,
    arg_defaults: tuple = (),
    kwonly_names: Optional[list] = None,
    kwonly_defaults: Optional[dict] = None,
    prototype: Optional[Callable] = None,
    map_dataclass_to_tuple: Optional[list] = None,
) -> Callable:
    """A function with a keyword-capable signature that calls ``target_func``
    with every argument in declaration order, positionally.

    Parameters
    ----------
    target_func
        The callable to forward to; it receives positional arguments only.
    arg_names
        Every positional-or-keyword parameter, in order.
    arg_defaults
        Defaults of the last ``len(arg_defaults)`` positional parameters
        (as a function's ``__defaults__``).
    kwonly_names
        Keyword-only parameters, placed after ``*``; they are forwarded
        after the positional ones.
    kwonly_defaults
        Defaults of keyword-only parameters (as ``__kwdefaults__``); names
        without an entry are required.
    prototype
        When given, the wrapper takes its ``__name__``, ``__qualname__``,
        ``__doc__``, ``__module__``, ``__annotations__`` (and
        ``__wrapped__``) from it.
    map_dataclass_to_tuple
        Parameters whose values pass through
        :func:`~tether.utils.unpack_dataclass.unpack_dataclass_to_tuple`
        before being forwarded.

    Returns
    -------
    The generated wrapper.

    Raises
    ------
    TypeError, ValueError
        On invalid, duplicate, reserved or overlapping parameter names, or
        defaults that do not fit the parameters.
    """
    kwonly_names = [] if kwonly_names is None else kwonly_names
    kwonly_defaults = {} if kwonly_defaults is None else kwonly_defaults
    unpacked = set(map_dataclass_to_tuple) if map_dataclass_to_tuple else set()
    _validate_wrapper_args(arg_names, arg_defaults, kwonly_names, kwonly_defaults, _INTERNAL_NAMES)
    code, table = _build_wrapper_code(arg_names, arg_defaults, kwonly_names, kwonly_defaults, unpacked)
    # Only checked identifiers and fixed internal names reach the source
    # text; default values travel through ``table``.
    scope_globals: dict = {
        _INTERNAL_TARGET_FUNC: target_func,
        _INTERNAL_MISSING: _missing_sentinel(),
        _INTERNAL_DEFAULTS_DICT: table,
    }
    if unpacked:
        scope_globals[_INTERNAL_UNPACK] = unpack_dataclass_to_tuple
    scope: dict = {}
    exec(code, scope_globals, scope)  # noqa: S102
    wrapper = scope["wrapper"]
    if prototype is not None:
        functools.update_wrapper(wrapper, prototype, updated=())
    return wrapper


def make_kwargs_wrapper_from_signature(
    target_func: Callable,
    signature: inspect.Signature,
    prototype: Optional[Callable] = None,
    exclude_arg_names: Optional[Iterable[str]] = None,
    map_dataclass_to_tuple: Optional[list] = None,
) -> Callable:
    """:func:`make_kwargs_wrapper` with the parameters of ``signature``.

    Positional-only and positional-or-keyword parameters become the
    wrapper's positional parameters, keyword-only ones stay keyword-only,
    defaults are kept.  Parameters named in ``exclude_arg_names`` are left
    out (unknown names are ignored).  ``ValueError`` for ``*args``,
    ``**kwargs``, or a required positional parameter after one with a
    default.
    """
    excluded = set(exclude_arg_names) if exclude_arg_names is not None else set()
    arg_names: list = []
    arg_defaults: list = []
    kwonly_names: list = []
    kwonly_defaults: dict = {}
    Parameter = inspect.Parameter
    for name, param in signature.parameters.items():
        if name in excluded:
            continue
        if param.kind is Parameter.VAR_POSITIONAL:
            raise ValueError("*args not supported in wrapper generation")
        if param.kind is Parameter.VAR_KEYWORD:
            raise ValueError("**kwargs not supported in wrapper generation")
        if param.kind is Parameter.KEYWORD_ONLY:
            kwonly_names.append(name)
            if param.default is not Parameter.empty:
                kwonly_defaults[name] = param.default
            continue
        arg_names.append(name)
        if param.default is not Parameter.empty:
            arg_defaults.append(param.default)
        elif arg_defaults:
            raise ValueError(
                f"Required positional parameter '{name}' cannot follow parameters with defaults"
            )
    return make_kwargs_wrapper(
        target_func,
        arg_names,
        tuple(arg_defaults),
        kwonly_names,
        kwonly_defaults,
        prototype,
        map_dataclass_to_tuple,
    )
