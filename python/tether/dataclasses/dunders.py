"""The methods ``py_class`` and ``c_class`` install, as TVM-FFI's
decorators do: ``__init__`` over the type's ``__ffi_init__`` (positional
values, then the ``KWARGS`` sentinel and name/value pairs), ``__repr__``
through ``ffi.ReprPrint``, ``__eq__``/``__ne__``, ordering and
``__hash__`` field-wise, ``__copy__`` (``__ffi_shallow_copy__``),
``__deepcopy__`` (``ffi.DeepCopy``), ``__replace__``, ``__match_args__``
and pickling. A method the class body defines is never replaced."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from .. import _ffi, core
from .missing import MISSING
from .recursive import recursive_compare, recursive_eq, recursive_hash

__all__ = ["install_dunders", "ordered_init_fields"]

_kwargs_sentinel: list = []


def kwargs_object() -> Any:
    if not _kwargs_sentinel:
        _kwargs_sentinel.append(core.get_global_func("ffi.GetKwargsObject")())
    return _kwargs_sentinel[0]


def ordered_init_fields(all_fields: list) -> tuple:
    """(positional, keyword-only) init fields; positional ones required
    first, then those with a default (TVM-FFI's order)."""
    positional = [f for f in all_fields if f.init and not f.kw_only]
    keyword = [f for f in all_fields if f.init and f.kw_only]
    positional = [f for f in positional if not f.has_default()] + [f for f in positional if f.has_default()]
    return positional, keyword


def _signature(positional: list, keyword: list) -> inspect.Signature:
    P = inspect.Parameter
    params = [P("self", P.POSITIONAL_OR_KEYWORD)]
    params += [P(f.name, P.POSITIONAL_OR_KEYWORD, **({"default": MISSING} if f.has_default() else {}))
               for f in positional]
    kw = [f for f in keyword if not f.has_default()] + [f for f in keyword if f.has_default()]
    params += [P(f.name, P.KEYWORD_ONLY, **({"default": MISSING} if f.has_default() else {})) for f in kw]
    return inspect.Signature(params)


def _init_property_funcs(cls: type) -> list:
    funcs: dict = {}
    for klass in reversed(cls.__mro__):
        funcs.update(klass.__dict__.get("__ffi_init_property_funcs__", {}))
    return list(funcs.items())


def _make_init(cls: type, all_fields: list, ffi_init: Any, py_class_mode: bool) -> Callable:
    positional, keyword = ordered_init_fields(all_fields)
    props = {f.name: cls.__dict__.get(f.name) or getattr(cls, f.name, None) for f in all_fields}
    type_key = core._type_key(cls.__tether_type_index__)
    has_post_init = hasattr(cls, "__post_init__")
    ip_funcs = _init_property_funcs(cls)
    own_info = cls.__tether_type_index__

    def convert(name: str, value: Any) -> Any:
        prop = props.get(name)
        if prop is None or not hasattr(prop, "convert"):
            return value
        try:
            return prop.convert(value)
        except TypeError as e:
            nested = str(e).replace("\n", "\n  ")
            raise TypeError(f"{type_key}.__ffi_init__() field '{name}':\n  {nested}") from None

    # Per positional field: None when its conversion is the identity for
    # every value, else (exact types it leaves unchanged, field name).
    def _plan(f: Any) -> Any:
        prop = props.get(f.name)
        ft = getattr(prop, "field_type", MISSING)
        if ft is None or (ft is not MISSING and getattr(ft, "_check", MISSING) is None):
            return None
        return (getattr(ft, "identity_types", frozenset()), f.name)

    plans = tuple(_plan(f) for f in positional)
    # The identity types per positional field (None: any value), for the
    # common call: positional values that all pass unconverted.
    passes = tuple(None if plan is None else plan[0] for plan in plans)
    n_positional = len(positional)
    chandle = _ffi.chandle
    construct = _ffi.construct

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if py_class_mode:
            if chandle(self) != 0:
                return  # super().__init__() after the object exists
        elif own_info != type(self).__tether_type_index__:
            raise TypeError(
                f"Calling `super().__init__()` is not supported for @c_class `{cls.__name__}`. Use @py_class "
                f"for inheritance with manual __init__, or define `{type(self).__name__}` with init=True.")
        values = args
        if not kwargs:
            # Values beyond the positional fields pass through (the native
            # constructor reports the count), as in the general path below.
            for value, ok in zip(args, passes):
                if ok is not None and type(value) not in ok:
                    values = None  # something converts: the general path
                    break
        else:
            values = None
        if values is None:
            values = list(args)
            for i in range(min(len(values), n_positional)):
                plan = plans[i]
                if plan is not None and type(values[i]) not in plan[0]:
                    values[i] = convert(plan[1], values[i])
            if kwargs:
                values.append(kwargs_object())
                for key, value in kwargs.items():
                    values += [key, convert(key, value)]
        construct(self, ffi_init, *values)
        if ip_funcs:
            for name, func in ip_funcs:
                getattr(type(self), name).set(self, func(self))
        if has_post_init:
            self.__post_init__()

    __init__.__signature__ = _signature(positional, keyword)
    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    __init__.__module__ = cls.__module__
    return __init__


def _wrap_user_init(user_init: Callable, ffi_new: Any) -> Callable:
    @functools.wraps(user_init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if self.__chandle__() == 0:
            _ffi.construct(self, ffi_new)
        user_init(self, *args, **kwargs)

    return __init__


def _comparable(a: Any, b: Any) -> bool:
    return isinstance(b, type(a)) or isinstance(a, type(b))


def _repr(self: Any) -> str:
    if _ffi.chandle(self) == 0:
        return core.Object.__repr__(self)
    return _repr_print()(self)


_repr_fn: list = []


def _repr_print() -> Any:
    if not _repr_fn:
        _repr_fn.append(core.get_global_func("ffi.ReprPrint"))
    return _repr_fn[0]


def _deep_copy_fn() -> Any:
    return core.get_global_func("ffi.DeepCopy")


def install_dunders(cls: type, all_fields: list, *, init: bool, repr: bool, eq: bool, order: bool,
                    unsafe_hash: bool, match_args: bool, py_class_mode: bool) -> None:
    index = cls.__tether_type_index__
    ffi_init = _ffi.type_attr(index, "__ffi_init__")
    ffi_new = _ffi.type_attr(index, "__ffi_new__")
    shallow = _ffi.type_attr(index, "__ffi_shallow_copy__")
    own = set(cls.__dict__)  # what the class body defined, before anything is installed

    if "__init__" not in own:
        if init and ffi_init is not None:
            cls.__init__ = _make_init(cls, all_fields, ffi_init, py_class_mode)
        elif not init:
            message = f"`{cls.__name__}` cannot be constructed directly. Define a custom __init__ or use a factory method."

            def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
                raise TypeError(message)

            __init__.__qualname__ = f"{cls.__qualname__}.__init__"
            cls.__init__ = __init__
    elif py_class_mode and ffi_new is not None:
        cls.__init__ = _wrap_user_init(cls.__dict__["__init__"], ffi_new)

    if repr and "__repr__" not in own:
        cls.__repr__ = _repr

    if eq and not ({"__eq__", "__ne__"} & own):
        def __eq__(self: Any, other: Any) -> Any:
            return recursive_eq(self, other) if _comparable(self, other) else NotImplemented

        def __ne__(self: Any, other: Any) -> Any:
            return (not recursive_eq(self, other)) if _comparable(self, other) else NotImplemented

        cls.__eq__, cls.__ne__ = __eq__, __ne__
        if "__hash__" not in own:
            # TVM-FFI keeps the handle hash when eq=True (dataclasses would set None).
            cls.__hash__ = core.Object.__hash__

    if order and not ({"__lt__", "__le__", "__gt__", "__ge__"} & own):
        def make(test: Callable[[int], bool], name: str) -> Callable:
            def op(self: Any, other: Any) -> Any:
                return test(recursive_compare(self, other)) if _comparable(self, other) else NotImplemented

            op.__name__ = name
            return op

        cls.__lt__ = make(lambda c: c < 0, "__lt__")
        cls.__le__ = make(lambda c: c <= 0, "__le__")
        cls.__gt__ = make(lambda c: c > 0, "__gt__")
        cls.__ge__ = make(lambda c: c >= 0, "__ge__")

    if unsafe_hash and "__hash__" not in own:
        cls.__hash__ = lambda self: recursive_hash(self)

    if "__copy__" not in own:
        if shallow is not None:
            cls.__copy__ = lambda self: _ffi.call(shallow, self)
        else:
            def __copy__(self: Any) -> Any:
                raise TypeError(f"Type `{type(self).__name__}` does not support copy. "
                                f"The underlying C++ type is not copy-constructible.")

            cls.__copy__ = __copy__
    if "__deepcopy__" not in own:
        cls.__deepcopy__ = lambda self, memo=None: _deep_copy_fn()(self)
    if "__replace__" not in own:
        def __replace__(self: Any, **changes: Any) -> Any:
            import copy

            obj = copy.copy(self)
            klass = type(obj)
            for key, value in changes.items():
                getattr(klass, key).set(obj, value)
            return obj

        cls.__replace__ = __replace__

    if py_class_mode and ffi_new is not None and "__reduce__" not in own:
        cls.__reduce__ = _reduce
        cls.__setstate__ = _setstate

    if match_args and "__match_args__" not in own:
        cls.__match_args__ = tuple(f.name for f in all_fields if f.init and not f.kw_only)


def _reduce(self: Any) -> tuple:
    """Pickle as (empty object, field values): the object exists before its
    fields are restored, so cycles through it unpickle."""
    cls = type(self)
    state = {f.name: getattr(self, f.name) for f in cls.__tether_fields__}
    return (_new_empty, (cls,), state)


def _new_empty(cls: type) -> Any:
    obj = cls.__new__(cls)
    _ffi.construct(obj, _ffi.type_attr(cls.__tether_type_index__, "__ffi_new__"))
    return obj


def _setstate(self: Any, state: dict) -> None:
    cls = type(self)
    for name, value in state.items():
        getattr(cls, name).set(self, value)

