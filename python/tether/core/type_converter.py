"""The converters behind ``TypeSchema.convert``/``check_value``: one
``_TypeConverter`` per schema, built once, that checks a Python value
against the declared type and produces the FFI value it becomes, with
tvm_ffi's acceptance rules and messages.

A converter's ``run(value)`` returns ``(ffi_value, changed)``: the value in
the form it crosses the FFI as (what a ``CAny`` holds) and whether it
differs from the input, so containers whose elements all pass unchanged are
handed on as they are (no copy). Failures raise ``_ConvertError`` carrying
the message after "type check failed for <schema>: "; the schema adds that
prefix. Before dispatch every value goes through the object protocols
(``__tvm_ffi_object__``, ``__tvm_ffi_value__``, ``ObjectConvertible``), as
tvm_ffi normalises them eagerly, with a bound on ``__tvm_ffi_value__``
chains.
"""

from __future__ import annotations

import collections.abc
import ctypes
import os
import sys
from numbers import Integral, Real
from typing import Any, Callable, Optional

from .. import _ffi
from .any_value import CAny
from .builtin_table import _builtin
from .converter import _OPAQUE_PTR_HANDLERS
from .device import Device
from .dtype import DataType
from .function import Function, convert
from .object import Object, ObjectConvertible, ObjectRValueRef, _class_for_index, _lookup_type_attr, _type_key
from .string import Bytes, PyNativeObject, String
from .tensor import Tensor

__all__ = ["_ConvertError", "_TypeConverter", "_build_converter"]

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_OBJECT_BEGIN = 64  # first type index of a heap object
_VALUE_PROTOCOL_MAX_DEPTH = 64
_ENUM_STATE_ATTR = "__ffi_enum__"
_CONVERT_ATTR = "__ffi_convert__"


class _ConvertError(Exception):
    """A value does not fit a schema; ``message`` is the reason."""

    __slots__ = ()

    @property
    def message(self) -> str:
        return self.args[0]


def _describe(value) -> str:
    """How messages name the type of ``value``."""
    if value is None:
        return "None"
    for kind, name in ((bool, "bool"), (int, "int"), (float, "float"), (str, "str"), ((bytes, bytearray), "bytes")):
        if isinstance(value, kind):
            return name
    if isinstance(value, Object):
        info = getattr(type(value), "__tvm_ffi_type_info__", None)
        if info is not None:
            return info.type_key
        return _type_key(_ffi.type_index_of(value))
    return type(value).__qualname__


def _pack(value, expected: str, original) -> Any:
    """``value`` packed as a call argument would be; a packing failure
    becomes a conversion error naming what was expected."""
    try:
        return convert(value)
    except _ConvertError:
        raise
    except Exception as err:
        raise _ConvertError(f"expected {expected}, got {_describe(original)}: {err}") from None


def _made(container: type, items, expected: str, original) -> Any:
    """A new ``container`` of ``items``; an item that cannot cross is a
    conversion error naming what was expected."""
    try:
        return container(items)
    except Exception as err:
        raise _ConvertError(f"expected {expected}, got {_describe(original)}: {err}") from None


_ANCESTORS: dict = {}  # type index -> its ancestors (fixed when the index is allocated)


def _is_instance_index(actual: int, target: int) -> bool:
    if actual == target:
        return True
    ancestors = _ANCESTORS.get(actual)
    if ancestors is None:
        try:
            ancestors = frozenset(_ffi.type_info(actual)["ancestors"])
        except (ValueError, KeyError):
            return False
        _ANCESTORS[actual] = ancestors
    return target in ancestors


def _dtype_class() -> type:
    return sys.modules[__package__]._CLASS_DTYPE


def _int_in_range(value: int) -> int:
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise _ConvertError(f"integer {value} out of int64 range [{_INT64_MIN}, {_INT64_MAX}]")
    return value


def _integral_to_int(value) -> int:
    try:
        result = int(value)
    except Exception as err:
        raise _ConvertError(f"int() failed for {type(value).__qualname__}: {err}") from None
    return _int_in_range(result)


class _TypeConverter:
    """A converter for one schema: ``dispatch`` (the rule for its origin),
    ``subs`` (converters of its type arguments; None where an argument is
    ``Any`` and needs no check), ``err_hint`` (how messages name the
    expected type) and, for object types, ``type_index``."""

    __slots__ = ("dispatch", "subs", "err_hint", "type_index", "_fn_convert", "_fn_convert_ready")

    def __init__(self, dispatch: Callable, err_hint: str, subs: Optional[tuple] = None, type_index: int = 0) -> None:
        self.dispatch, self.err_hint, self.subs, self.type_index = dispatch, err_hint, subs, type_index
        self._fn_convert, self._fn_convert_ready = None, False

    @property
    def fn_convert(self) -> Optional[Function]:
        """The object type's ``__ffi_convert__`` attribute (looked up once)."""
        if not self._fn_convert_ready:
            attr = _lookup_type_attr(self.type_index, _CONVERT_ATTR)
            self._fn_convert = attr if isinstance(attr, Function) else None
            self._fn_convert_ready = True
        return self._fn_convert

    def run(self, value) -> tuple:
        """``(ffi_value, changed)`` after the eager protocols; _ConvertError otherwise."""
        used_protocol = False
        for _ in range(_VALUE_PROTOCOL_MAX_DEPTH + 1):
            inner, stalled = _protocol_step(value)
            if stalled:
                _raise_stalled(self, value)
            if inner is value:
                break
            used_protocol, value = True, inner
        else:
            raise _ConvertError("infinite __tvm_ffi_value__ cycle detected")
        result, changed = self.dispatch(self, value)
        return result, changed or used_protocol

    def convert(self, value) -> Any:
        return self.run(value)[0]

    __call__ = convert


def _protocol_step(value) -> tuple:
    """One step of the object protocols: ``(next value, stalled)``; the
    value itself when none applies."""
    if isinstance(value, (Tensor, Object, ObjectRValueRef, PyNativeObject)):
        return value, False
    cls = type(value)
    if hasattr(cls, "__tvm_ffi_object__"):
        try:
            return value.__tvm_ffi_object__(), False
        except Exception:
            raise _ConvertError(f"__tvm_ffi_object__() failed for {_describe(value)}") from None
    if hasattr(cls, "__tvm_ffi_value__"):
        try:
            inner = value.__tvm_ffi_value__()
        except Exception:
            # The schema mismatch is reported, not the protocol's own error.
            return value, True
        return inner, inner is value
    if isinstance(value, ObjectConvertible):
        try:
            inner = value.asobject()
        except Exception:
            raise _ConvertError(f"asobject() failed for {_describe(value)}") from None
        if not isinstance(inner, Object):
            raise _ConvertError(f"asobject() returned {_describe(inner)} for {_describe(value)}")
        return inner, False
    return value, False


def _raise_stalled(conv: _TypeConverter, value) -> None:
    if conv.dispatch is _convert_optional:
        _raise_stalled(conv.subs[0], value)
    if conv.err_hint == "Any":
        raise _ConvertError(f"failed to convert Any from {_describe(value)}")
    raise _ConvertError(f"expected {conv.err_hint}, got {_describe(value)}")


# ---- scalars ---------------------------------------------------------------------

_ANY_UNCHANGED = (type(None), bool, int, float, ctypes.c_void_p, String, Bytes, Tensor, DataType, Device, Object)


def _convert_any(conv, value):
    packed = _pack(value, "Any", value)
    return packed, not isinstance(value, _ANY_UNCHANGED) and not isinstance(value, _dtype_class())


def _convert_none(conv, value):
    if value is None:
        return None, False
    raise _ConvertError(f"expected None, got {_describe(value)}")


def _convert_int(conv, value):
    if isinstance(value, bool):
        return int(value), True
    if isinstance(value, int):
        return _int_in_range(value), False
    if isinstance(value, Integral):
        return _integral_to_int(value), True
    if hasattr(type(value), "__tvm_ffi_int__"):
        return _pack(value, "int", value), True
    raise _ConvertError(f"expected int, got {_describe(value)}")


def _convert_float(conv, value):
    if isinstance(value, float):
        return value, False
    if isinstance(value, int):
        return float(value), True
    if isinstance(value, (Integral, Real)):
        try:
            return float(value), True
        except Exception as err:
            raise _ConvertError(f"float() failed for {type(value).__qualname__}: {err}") from None
    if hasattr(type(value), "__tvm_ffi_float__"):
        return _pack(value, "float", value), True
    raise _ConvertError(f"expected float, got {_describe(value)}")


def _convert_bool(conv, value):
    if isinstance(value, bool):
        return value, False
    if isinstance(value, Integral):
        try:
            return bool(value), True
        except Exception as err:
            raise _ConvertError(f"bool() failed for {type(value).__qualname__}: {err}") from None
    raise _ConvertError(f"expected bool, got {_describe(value)}")


def _convert_str(conv, value):
    if isinstance(value, String):
        return value, False
    if isinstance(value, str):
        return str(value), True
    raise _ConvertError(f"expected str, got {_describe(value)}")


def _convert_bytes(conv, value):
    if isinstance(value, Bytes):
        return value, False
    if isinstance(value, (bytes, bytearray)):
        return bytes(value), True
    raise _ConvertError(f"expected bytes, got {_describe(value)}")


def _convert_device(conv, value):
    if isinstance(value, Device):
        return value, False
    cls = type(value)
    if isinstance(value, str):
        try:
            return Device(value), True
        except Exception:
            raise _ConvertError(f"expected Device, got invalid device string {value!r}") from None
    if hasattr(cls, "__dlpack_device__") and not hasattr(cls, "__dlpack__"):
        return _pack(value, "Device", value), True
    raise _ConvertError(f"expected Device, got {_describe(value)}")


def _convert_dtype(conv, value):
    dtype_cls = _dtype_class()
    if isinstance(value, (DataType, dtype_cls)):
        return value, False
    if isinstance(value, str):
        try:
            return dtype_cls(value), True
        except Exception:
            raise _ConvertError(f"expected dtype, got invalid dtype string {value!r}") from None
    numpy = sys.modules.get("numpy")
    torch = sys.modules.get("torch")
    if ((torch is not None and isinstance(value, torch.dtype)) or (numpy is not None and isinstance(value, numpy.dtype))
            or hasattr(value, "__dlpack_data_type__")):
        return _pack(value, "dtype", value), True
    raise _ConvertError(f"expected dtype, got {_describe(value)}")


def _convert_opaque_ptr(conv, value):
    if isinstance(value, ctypes.c_void_p):
        return value, False
    if value is None:
        return ctypes.c_void_p(None), True
    cls = type(value)
    if hasattr(cls, "__tvm_ffi_opaque_ptr__") or cls in _OPAQUE_PTR_HANDLERS or hasattr(cls, "__cuda_stream__"):
        return _pack(value, "ctypes.c_void_p", value), True
    raise _ConvertError(f"expected ctypes.c_void_p, got {_describe(value)}")


def _convert_tensor(conv, value):
    if isinstance(value, Tensor):
        return value, False
    cls = type(value)
    if hasattr(cls, "__dlpack__"):
        return _pack(value, "Tensor", value), True
    # As tvm_ffi: the environment switch turns the C exchange tables off.
    if os.environ.get("TVM_FFI_SKIP_DLPACK_C_EXCHANGE_API", "0") != "1" and hasattr(cls, "__dlpack_c_exchange_api__"):
        return _pack(value, "Tensor", value), True
    raise _ConvertError(f"expected Tensor, got {_describe(value)}")


def _convert_callable(conv, value):
    if isinstance(value, Function):
        return value, False
    if callable(value) and not isinstance(value, Object):
        return _pack(value, "Callable", value), True
    raise _ConvertError(f"expected Callable, got {_describe(value)}")


# ---- containers ------------------------------------------------------------------


def _containers() -> tuple:
    # The container classes register into the class registry from above.
    return _class_for_index(71), _class_for_index(75), _class_for_index(72), _class_for_index(76)


def _element(conv, item, where: str) -> tuple:
    try:
        return conv.run(item)
    except _ConvertError as err:
        raise _ConvertError(f"{where}: {err.message}") from None


def _convert_sequence(conv, value, target):
    Array, List, _, _ = _containers()
    if not isinstance(value, (Array, List, list, tuple)):
        raise _ConvertError(f"expected {target.__name__}, got {_describe(value)}")
    elem = conv.subs[0] if conv.subs else None
    if elem is None and isinstance(value, target):
        return value, False
    items, changed = [], False
    for i, raw in enumerate(value):
        if elem is None:
            items.append(raw)
            continue
        item, item_changed = _element(elem, raw, f"element [{i}]")
        changed = changed or item_changed
        items.append(item if item_changed else raw)
    if isinstance(value, target) and not changed:
        return value, False
    return _made(target, items, target.__name__, value), True


def _convert_array(conv, value):
    return _convert_sequence(conv, value, _containers()[0])


def _convert_list(conv, value):
    return _convert_sequence(conv, value, _containers()[1])


def _convert_tuple(conv, value):
    Array, List, _, _ = _containers()
    if not isinstance(value, (Array, List, list, tuple)):
        raise _ConvertError(f"expected tuple, got {_describe(value)}")
    if conv.subs is None:  # a bare tuple: any elements, as an Array
        if isinstance(value, Array):
            return value, False
        return _made(Array, value, "tuple", value), True
    n = len(conv.subs)
    if len(value) != n:
        raise _ConvertError(f"expected tuple of length {n}, got {type(value).__name__} of length {len(value)}")
    items, changed = [], False
    for i, (sub, raw) in enumerate(zip(conv.subs, value)):
        item, item_changed = _element(sub, raw, f"element [{i}]")
        changed = changed or item_changed
        items.append(item if item_changed else raw)
    if isinstance(value, Array) and not changed:
        return value, False
    return _made(Array, items, "tuple", value), True


def _convert_mapping(conv, value, target, make):
    _, _, Map, Dict = _containers()
    if not isinstance(value, (collections.abc.Mapping, Map, Dict)):
        raise _ConvertError(f"expected {target.__name__}, got {_describe(value)}")
    key_conv, val_conv = conv.subs if conv.subs else (None, None)
    if key_conv is None and val_conv is None and isinstance(value, target):
        return value, False
    flat, changed = [], False
    for raw_key, raw_val in value.items():
        key, val = raw_key, raw_val
        if key_conv is not None:
            new, c = _element(key_conv, raw_key, f"key {raw_key!r}")
            if c:
                key, changed = new, True
        if val_conv is not None:
            new, c = _element(val_conv, raw_val, f"value for key {raw_key!r}")
            if c:
                val, changed = new, True
        flat += (key, val)
    if isinstance(value, target) and not changed:
        return value, False
    try:
        made = make(*flat)
    except _ConvertError:
        raise
    except Exception as err:
        raise _ConvertError(f"expected {target.__name__}, got {_describe(value)}: {err}") from None
    return made, True


def _convert_map(conv, value):
    return _convert_mapping(conv, value, _containers()[2], _builtin("ffi.Map"))


def _convert_dict(conv, value):
    return _convert_mapping(conv, value, _containers()[3], _builtin("ffi.Dict"))


# ---- Optional and Union ------------------------------------------------------------


def _convert_optional(conv, value):
    if value is None:
        return None, False
    return conv.subs[0].run(value)


def _convert_union(conv, value):
    for alt in conv.subs:
        try:
            return alt.dispatch(alt, value)
        except _ConvertError:
            pass
    raise _ConvertError(f"expected {conv.err_hint}, got {_describe(value)}")


# ---- object types ------------------------------------------------------------------


def _derives_from(type_index: int, base_key: str) -> bool:
    """Whether the native type ``type_index`` is, or derives from, the type
    ``base_key`` (``ffi.IntEnum``/``ffi.StrEnum``: enums convert from
    their payloads, however their class was declared)."""
    base = _ffi.type_key_to_index(base_key)
    return base is not None and (type_index == base or base in _ffi.type_info(type_index)["ancestors"])


def _packed_index(value) -> int:
    """The type index a packed value crosses with (a Python object that is
    no FFI value crosses as an opaque object)."""
    return CAny._from_converted(value).type_index


def _convert_object_marshaled(conv, value):
    packed = _pack(value, conv.err_hint, value)
    fn = conv.fn_convert
    failure = None
    try:
        converted = fn(packed) if fn is not None else packed
    except Exception as err:
        failure = err
    else:
        index = _packed_index(converted)
        if index >= _OBJECT_BEGIN and _is_instance_index(index, conv.type_index):
            return converted, True
    if failure is not None:
        detail = "    " + str(failure).replace("\n", "\n    ")
        raise _ConvertError(f"expected {conv.err_hint}, got {_describe(value)}\n  __ffi_convert__ failed:\n{detail}")
    raise _ConvertError(f"expected {conv.err_hint}, got {_describe(value)}")


def _passes_as_object(conv, value) -> bool:
    return isinstance(value, Object) and _is_instance_index(_ffi.type_index_of(value), conv.type_index)


def _convert_object(conv, value):
    if _passes_as_object(conv, value):
        return value, False
    return _convert_object_marshaled(conv, value)


def _enum_variant(conv, payload):
    state = _lookup_type_attr(conv.type_index, _ENUM_STATE_ATTR)
    return None if state is None else state.indexes.get(payload)


def _convert_int_enum(conv, value):
    if _passes_as_object(conv, value):
        return value, False
    if isinstance(value, bool):
        payload = int(value)
    elif isinstance(value, int):
        payload = _int_in_range(value)
    elif isinstance(value, Integral):
        payload = _integral_to_int(value)
    else:
        payload = None
    if payload is not None:
        variant = _enum_variant(conv, payload)
        if variant is not None:
            return variant, True
    return _convert_object_marshaled(conv, value)


def _convert_str_enum(conv, value):
    if _passes_as_object(conv, value):
        return value, False
    if isinstance(value, str):
        variant = _enum_variant(conv, str(value))
        if variant is not None:
            return variant, True
    return _convert_object_marshaled(conv, value)


# ---- building ----------------------------------------------------------------------

_SCALARS = {
    "int": _convert_int, "float": _convert_float, "bool": _convert_bool, "None": _convert_none,
    "str": _convert_str, "bytes": _convert_bytes, "Device": _convert_device, "dtype": _convert_dtype,
    "ctypes.c_void_p": _convert_opaque_ptr, "Tensor": _convert_tensor, "Callable": _convert_callable,
}


def _checked_arg(schema) -> Optional[_TypeConverter]:
    """The converter of a type argument; None for ``Any`` (nothing to check)."""
    return None if schema.origin == "Any" else schema._converter


def _object_converter(type_index: int, hint: str) -> _TypeConverter:
    if _derives_from(type_index, "ffi.IntEnum"):
        dispatch = _convert_int_enum
    elif _derives_from(type_index, "ffi.StrEnum"):
        dispatch = _convert_str_enum
    else:
        dispatch = _convert_object
    return _TypeConverter(dispatch, hint, type_index=type_index)


def _build_converter(schema) -> _TypeConverter:
    """The converter of ``schema``; TypeError for an origin nobody knows."""
    origin, args, index = schema.origin, schema.args, schema.origin_type_index
    if origin == "Any" or index == -1:
        return _TypeConverter(_convert_any, "Any")
    if origin == "Optional":
        return _TypeConverter(_convert_optional, origin, (args[0]._converter,))
    if origin == "Union":
        return _TypeConverter(_convert_union, " | ".join(repr(a) for a in args), tuple(a._converter for a in args))
    if origin in _SCALARS:
        return _TypeConverter(_SCALARS[origin], origin)
    if origin in ("Array", "List", "list"):
        elem = _checked_arg(args[0]) if args else None
        dispatch, hint = (_convert_array, "Array") if origin == "Array" else (_convert_list, "List")
        return _TypeConverter(dispatch, hint, None if elem is None else (elem,))
    if origin in ("Map", "Dict", "dict"):
        pair = (_checked_arg(args[0]), _checked_arg(args[1])) if len(args) == 2 else (None, None)
        dispatch, hint = (_convert_map, "Map") if origin == "Map" else (_convert_dict, "Dict")
        return _TypeConverter(dispatch, hint, None if pair == (None, None) else pair)
    if origin == "tuple":
        subs = None if args is None else tuple(a._converter for a in args)
        return _TypeConverter(_convert_tuple, origin, subs)
    if origin == "Object":
        return _TypeConverter(_convert_object, "Object", type_index=_OBJECT_BEGIN)
    if index >= _OBJECT_BEGIN:
        return _object_converter(index, origin)
    found = _ffi.type_key_to_index(origin)
    if found is not None:
        return _object_converter(found, origin)
    raise TypeError(f"unknown TypeSchema origin: {origin!r}")
