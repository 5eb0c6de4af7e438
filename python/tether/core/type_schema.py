"""``TypeSchema``: a field's or function's declared type, and the converter
that checks and converts a Python value to it with tvm_ffi's rules and
messages (int widens to float, ``Optional``, ``Union``, typed
``Array[T]``/``List[T]``/``Map[K, V]``/``Dict[K, V]`` with element checks,
``Callable``, objects by ancestry).

Schemas come from the ``type_schema`` JSON that registrars record in field
and method metadata (TVM-FFI's encoding: ``{"type": "ffi.Array", "args":
[{"type": "int"}]}``), from a static type index, or from a Python
annotation (``TypeSchema.from_annotation(List[int])``).

Hook for ``tether.dataclasses`` (and anyone enforcing declared types)::

    value = tether.type_schema.check_field_value(schema_or_annotation, value)

returns the value converted to the declared type (``[1, 2]`` to a
``List[int]`` becomes a ``tether.List``) or raises TypeError with
tvm_ffi's message (``type check failed for List[int]: element [0]:
expected int, got str``). Call it again when a typed container field is
mutated (``check_field_value(schema.args[0], item)`` per new item).
"""

from __future__ import annotations

import collections.abc
import ctypes
import json
import typing
from numbers import Integral, Real
from typing import Any, Optional

from .. import _ffi
from .function import Function
from .object import Object, ObjectConvertible, _class_for_index
from .string import Bytes, PyNativeObject, String
from .any_value import CAny
from .device import Device
from .dtype import DataType

__all__ = ["TypeSchema", "check_field_value"]

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1

_ORIGIN_ALIASES = {
    "Variant": "Union", "Optional": "Optional", "Tuple": "tuple", "ffi.Function": "Callable",
    "ffi.Array": "Array", "ffi.List": "List", "ffi.Map": "Map", "ffi.Dict": "Dict",
    "ffi.OpaquePyObject": "Any", "ffi.Object": "Object", "ffi.Tensor": "Tensor", "ffi.BigInt": "int",
    "DLTensor*": "Tensor", "void*": "ctypes.c_void_p", "TVMFFIByteArray*": "bytes", "ffi.SmallBytes": "bytes",
    "ffi.Bytes": "bytes", "std::string": "str", "const char*": "str", "ffi.SmallStr": "str", "ffi.String": "str",
    "DataType": "dtype", "std::vector": "Array", "std::optional": "Optional", "std::variant": "Union",
    "std::tuple": "tuple", "std::map": "Map", "std::unordered_map": "Map", "std::function": "Callable",
    "ObjectRValueRef": "Object",
}
_ORIGIN_TO_INDEX = {
    "None": 0, "int": 1, "bool": 2, "float": 3, "ctypes.c_void_p": 4, "dtype": 5, "Device": 6,
    "str": 65, "bytes": 66, "Object": 64, "Callable": 68, "Array": 71, "Map": 72, "Tensor": 70,
    "List": 75, "Dict": 76, "Any": -1,
}
_INDEX_TO_ORIGIN = {v: k for k, v in _ORIGIN_TO_INDEX.items()}
_INDEX_TO_ORIGIN.update({7: "Tensor", 8: "str", 9: "bytes", 10: "Object", 11: "str", 12: "bytes"})
_STRUCTURAL, _UNKNOWN = -2, -3


class _ConvertError(Exception):
    pass


def _describe(value) -> str:
    if value is None:
        return "None"
    for t, name in ((bool, "bool"), (int, "int"), (float, "float"), (str, "str"), ((bytes, bytearray), "bytes")):
        if isinstance(value, t):
            return name
    if isinstance(value, Object):
        return value.type_key
    return type(value).__qualname__


class TypeSchema:
    """A declared FFI type: ``origin`` (``"int"``, ``"Array"``, a type key…)
    and type ``args``."""

    def __init__(self, origin: str, args: tuple = (), origin_type_index: int = _UNKNOWN, named_args: Optional[dict] = None):
        if not isinstance(origin, str) or not origin:
            raise ValueError("schema type must be a nonempty string")
        args = tuple(args or ())
        if any(not isinstance(a, TypeSchema) for a in args):
            raise TypeError("schema arguments must be TypeSchema instances")
        if origin == "Union" and len(args) < 2:
            raise ValueError("Union must have at least two arguments")
        if origin == "Optional" and len(args) != 1:
            raise ValueError("Optional must have exactly one argument")
        if origin in ("Array", "List") and len(args) not in (0, 1):
            raise ValueError(f"{origin} must have 0 or 1 argument")
        if origin in ("Map", "Dict") and len(args) not in (0, 2):
            raise ValueError(f"{origin} must have 0 or 2 arguments")
        if origin in ("Array", "List") and not args:
            args = (TypeSchema("Any"),)
        if origin in ("Map", "Dict") and not args:
            args = (TypeSchema("Any"), TypeSchema("Any"))
        if origin == "Callable" and args and named_args is None:
            named_args = {"return": (args[0],)}
            if len(args) > 1:
                named_args["params"] = args[1:]
            args = ()
        self.origin, self.args, self.named_args = origin, args, named_args
        if origin_type_index == _UNKNOWN:
            if origin in ("Optional", "Union"):
                origin_type_index = _STRUCTURAL
            elif origin in _ORIGIN_TO_INDEX:
                origin_type_index = _ORIGIN_TO_INDEX[origin]
            else:
                found = _ffi.type_key_to_index(origin)
                if found is not None:
                    origin_type_index = found
        self.origin_type_index = origin_type_index

    def __eq__(self, other) -> bool:
        return isinstance(other, TypeSchema) and (self.origin, self.args, self.named_args) == (
            other.origin, other.args, other.named_args)

    def __hash__(self) -> int:
        return hash((self.origin, self.args))

    # ---- construction -------------------------------------------------------------

    @staticmethod
    def _from_maybe_json(raw) -> "TypeSchema":
        if isinstance(raw, TypeSchema):
            return raw
        if isinstance(raw, str):
            return TypeSchema.from_json_str(raw)
        if isinstance(raw, dict):
            return TypeSchema.from_json_obj(raw)
        raise TypeError(f"expected TypeSchema, JSON string, or JSON dict, got {type(raw).__name__}")

    @staticmethod
    def from_json_obj(obj: dict) -> "TypeSchema":
        if not isinstance(obj, dict) or "type" not in obj:
            raise TypeError(f"expected schema dict with 'type' key, got {type(obj).__name__}")
        origin = _ORIGIN_ALIASES.get(obj["type"], obj["type"])
        raw_args = obj.get("args", ())
        if obj["type"] == "std::function" and len(raw_args) == 2 and isinstance(raw_args[1], list):
            return TypeSchema(origin, named_args={
                "return": (TypeSchema.from_json_obj(raw_args[0]),),
                "params": tuple(TypeSchema.from_json_obj(a) for a in raw_args[1])})
        named = obj.get("named_args")
        named_args = None if named is None else {
            k: tuple(TypeSchema.from_json_obj(v) for v in vs) for k, vs in named.items()}
        args = tuple(TypeSchema.from_json_obj(a) for a in raw_args if isinstance(a, dict))
        return TypeSchema(origin, args, named_args=named_args)

    @staticmethod
    def from_json_str(s: str) -> "TypeSchema":
        return TypeSchema.from_json_obj(json.loads(s))

    @staticmethod
    def from_type_index(type_index: int, args: tuple = ()) -> "TypeSchema":
        origin = _INDEX_TO_ORIGIN.get(type_index)
        if origin is None:
            origin = _ffi.type_info(type_index)["key"]
        return TypeSchema(origin, args, origin_type_index=type_index)

    @staticmethod
    def from_annotation(annotation) -> "TypeSchema":
        if annotation is None or annotation is type(None):
            return TypeSchema("None")
        if annotation is typing.Any:
            return TypeSchema("Any")
        simple = {bool: "bool", int: "int", float: "float", str: "str", bytes: "bytes", list: "List",
                  dict: "Dict", collections.abc.Callable: "Callable", ctypes.c_void_p: "ctypes.c_void_p"}
        if isinstance(annotation, type) and annotation in simple:
            return TypeSchema(simple[annotation])
        origin, targs = typing.get_origin(annotation), typing.get_args(annotation)
        if origin is typing.Union or type(annotation).__name__ == "UnionType":
            rest = tuple(a for a in targs if a is not type(None))
            conv = tuple(TypeSchema.from_annotation(a) for a in rest)
            inner = conv[0] if len(conv) == 1 else TypeSchema("Union", conv)
            return TypeSchema("Optional", (inner,)) if len(rest) < len(targs) else inner
        if origin is list:
            return TypeSchema("List", tuple(TypeSchema.from_annotation(a) for a in targs))
        if origin is dict:
            return TypeSchema("Dict", tuple(TypeSchema.from_annotation(a) for a in targs))
        if origin is tuple and len(targs) == 2 and targs[1] is Ellipsis:
            return TypeSchema("Array", (TypeSchema.from_annotation(targs[0]),))
        if origin is collections.abc.Callable:
            if len(targs) == 2:
                ret = TypeSchema.from_annotation(targs[1])
                if isinstance(targs[0], list):
                    return TypeSchema("Callable", named_args={
                        "return": (ret,), "params": tuple(TypeSchema.from_annotation(p) for p in targs[0])})
                return TypeSchema("Callable", named_args={"return": (ret,)})
            return TypeSchema("Callable")
        cls = origin if isinstance(origin, type) else annotation
        if isinstance(cls, type) and issubclass(cls, Object):
            index = getattr(cls, "__tether_type_index__", None)
            if index is None:
                raise TypeError(f"Object subclass {cls!r} is not registered; use @register_object to register it")
            name = _INDEX_TO_ORIGIN.get(index, _ffi.type_info(index)["key"])
            return TypeSchema(name, tuple(TypeSchema.from_annotation(a) for a in targs), origin_type_index=index)
        if isinstance(annotation, type) and issubclass(annotation, PyNativeObject):
            return TypeSchema("str" if issubclass(annotation, str) else "bytes")
        if isinstance(annotation, type) and hasattr(annotation, "__dlpack__"):
            return TypeSchema("Tensor")
        if isinstance(annotation, type) and (issubclass(annotation, (DataType, _dtype_class()))):
            return TypeSchema("dtype")
        if isinstance(annotation, type) and issubclass(annotation, Device):
            return TypeSchema("Device")
        raise TypeError(f"Cannot convert {annotation!r} to TypeSchema")

    # ---- rendering ----------------------------------------------------------------

    def repr(self, ty_map=None) -> str:
        origin = self.origin if ty_map is None else ty_map(self.origin)
        if origin == "Callable":
            if not self.named_args:
                return "Callable[..., Any]"
            ret = self.named_args["return"][0].repr(ty_map)
            if "params" not in self.named_args:
                return f"Callable[..., {ret}]"
            return f"Callable[[{', '.join(p.repr(ty_map) for p in self.named_args['params'])}], {ret}]"
        args = [a.repr(ty_map) for a in self.args]
        if origin == "Union":
            return " | ".join(args)
        if origin == "Optional":
            return args[0] + " | None"
        return f"{origin}[{', '.join(args)}]" if args else origin

    def __repr__(self) -> str:
        return self.repr()

    def to_json(self) -> dict:
        out: dict = {"type": self.origin}
        if self.args:
            out["args"] = [a.to_json() for a in self.args]
        if self.named_args is not None:
            out["named_args"] = {k: [v.to_json() for v in vs] for k, vs in self.named_args.items()}
        return out

    def is_subtype_of(self, target_cls: type) -> bool:
        index = getattr(target_cls, "__tether_type_index__", None)
        if index is None or self.origin_type_index < 64:
            return False
        return _derives(self.origin_type_index, index)

    # ---- checking and converting ----------------------------------------------------

    def check_value(self, value) -> None:
        try:
            self._convert(value)
        except _ConvertError as err:
            raise TypeError(f"type check failed for {self!r}: {err}") from None

    def convert(self, value) -> "CAny":
        """``value`` converted to this type, as an owned FFI value (``CAny``;
        ``_to_py_class_value`` gives the Python value back). TypeError
        naming the schema and the offending part otherwise."""
        return CAny._from_converted(self.convert_value(value))

    def convert_value(self, value):
        """``value`` converted to this type, as the Python value it crosses
        as (``[1, 2]`` to ``List[int]`` becomes a ``tether.List``)."""
        try:
            return self._convert(value)
        except _ConvertError as err:
            raise TypeError(f"type conversion failed for {self!r}: {err}") from None

    def _convert(self, value, depth: int = 0):
        value = _normalize(value, depth)
        return _CONVERTERS.get(self.origin, _convert_object)(self, value)


def _dtype_class() -> type:
    import sys

    return sys.modules[__package__]._CLASS_DTYPE


def _derives(child: int, parent: int) -> bool:
    if child == parent:
        return True
    try:
        return parent in _ffi.type_info(child)["ancestors"]
    except ValueError:
        return False


def _normalize(value, depth: int):
    """Apply the object protocols first, as tvm_ffi does before dispatch."""
    for _ in range(64):
        if isinstance(value, (Object, PyNativeObject)):
            return value
        cls = type(value)
        if hasattr(cls, "__tvm_ffi_object__"):
            value = value.__tvm_ffi_object__()
        elif hasattr(cls, "__tvm_ffi_value__"):
            inner = value.__tvm_ffi_value__()
            if inner is value:
                return value
            value = inner
        elif isinstance(value, ObjectConvertible):
            value = value.asobject()
        else:
            return value
    raise _ConvertError("infinite __tvm_ffi_value__ cycle detected")


def _convert_any(s, v):
    return v


def _convert_none(s, v):
    if v is None:
        return None
    raise _ConvertError(f"expected None, got {_describe(v)}")


def _int_in_range(v):
    if not _INT64_MIN <= v <= _INT64_MAX:
        raise _ConvertError(f"integer {v} out of int64 range [{_INT64_MIN}, {_INT64_MAX}]")
    return v


def _convert_int(s, v):
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return _int_in_range(v)
    if isinstance(v, Integral):
        return _int_in_range(int(v))
    if hasattr(type(v), "__tvm_ffi_int__"):
        return int(v.__tvm_ffi_int__())
    raise _ConvertError(f"expected int, got {_describe(v)}")


def _convert_float(s, v):
    if isinstance(v, float):
        return v
    if isinstance(v, (Integral, Real)):
        return float(v)
    if hasattr(type(v), "__tvm_ffi_float__"):
        return float(v.__tvm_ffi_float__())
    raise _ConvertError(f"expected float, got {_describe(v)}")


def _convert_bool(s, v):
    if isinstance(v, bool):
        return v
    if isinstance(v, Integral):
        return bool(v)
    raise _ConvertError(f"expected bool, got {_describe(v)}")


def _convert_str(s, v):
    if isinstance(v, str):
        return v
    raise _ConvertError(f"expected str, got {_describe(v)}")


def _convert_bytes(s, v):
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    raise _ConvertError(f"expected bytes, got {_describe(v)}")


def _convert_callable(s, v):
    if isinstance(v, Function):
        return v
    if callable(v) and not isinstance(v, Object):
        return _ffi.convert(v)
    raise _ConvertError(f"expected Callable, got {_describe(v)}")


def _convert_seq(s, v):
    # The container classes register into the class registry from above.
    Array, List = _class_for_index(71), _class_for_index(75)
    target = Array if s.origin == "Array" else List
    if not isinstance(v, (Array, List, list, tuple)):
        raise _ConvertError(f"expected {target.__name__}, got {_describe(v)}")
    elem = s.args[0] if s.args else TypeSchema("Any")
    if elem.origin == "Any" and isinstance(v, target):
        return v
    items = []
    for i, item in enumerate(v):
        try:
            items.append(elem._convert(item))
        except _ConvertError as err:
            raise _ConvertError(f"element [{i}]: {err}") from None
    if isinstance(v, target) and all(a is b for a, b in zip(items, v)):
        return v
    return target(items)


def _convert_mapping(s, v):
    Map, Dict = _class_for_index(72), _class_for_index(76)
    target = Map if s.origin == "Map" else Dict
    if not isinstance(v, collections.abc.Mapping) and not isinstance(v, (Map, Dict)):
        raise _ConvertError(f"expected {target.__name__}, got {_describe(v)}")
    kt, vt = s.args
    if kt.origin == "Any" and vt.origin == "Any" and isinstance(v, target):
        return v
    pairs, changed = [], not isinstance(v, target)
    for k, x in v.items():
        try:
            nk = kt._convert(k)
        except _ConvertError as err:
            raise _ConvertError(f"key {k!r}: {err}") from None
        try:
            nx = vt._convert(x)
        except _ConvertError as err:
            raise _ConvertError(f"value for key {k!r}: {err}") from None
        changed = changed or nk is not k or nx is not x
        pairs.append((nk, nx))
    return target(pairs) if changed else v


def _convert_optional(s, v):
    return None if v is None else s.args[0]._convert(v)


def _convert_union(s, v):
    for alt in s.args:
        try:
            return alt._convert(v)
        except _ConvertError:
            pass
    raise _ConvertError(f"expected {' | '.join(repr(a) for a in s.args)}, got {_describe(v)}")


def _convert_object(s, v):
    index = s.origin_type_index
    if index < 64:
        raise TypeError(f"unknown TypeSchema origin: {s.origin!r}")
    if isinstance(v, Object) and _derives(_ffi.type_index_of(v), index):
        return v
    try:
        packed = _ffi.convert(v)
    except Exception as err:
        raise _ConvertError(f"expected {s.origin}, got {_describe(v)}: {err}") from None
    if isinstance(packed, Object) and _derives(_ffi.type_index_of(packed), index):
        return packed
    raise _ConvertError(f"expected {s.origin}, got {_describe(v)}")


def _convert_passthrough(name):
    def convert(s, v):
        try:
            return _ffi.convert(v)
        except Exception as err:
            raise _ConvertError(f"expected {name}, got {_describe(v)}: {err}") from None
    return convert


_CONVERTERS = {
    "Any": _convert_any, "None": _convert_none, "int": _convert_int, "float": _convert_float,
    "bool": _convert_bool, "str": _convert_str, "bytes": _convert_bytes, "Callable": _convert_callable,
    "Array": _convert_seq, "List": _convert_seq, "list": _convert_seq, "Map": _convert_mapping,
    "Dict": _convert_mapping, "dict": _convert_mapping, "Optional": _convert_optional, "Union": _convert_union,
    "Tensor": _convert_passthrough("Tensor"), "Device": _convert_passthrough("Device"),
    "dtype": _convert_passthrough("dtype"), "ctypes.c_void_p": _convert_passthrough("ctypes.c_void_p"),
}


def check_field_value(schema, value):
    """Check ``value`` against ``schema`` (a TypeSchema, its JSON, or a
    Python annotation) and return it converted; TypeError otherwise."""
    if not isinstance(schema, TypeSchema):
        schema = TypeSchema._from_maybe_json(schema) if isinstance(schema, (str, dict)) else TypeSchema.from_annotation(schema)
    return schema.convert_value(value)


# tvm_ffi's names for the origin tables and the converter.
_ORIGIN_TO_TYPE_INDEX = _ORIGIN_TO_INDEX
_TYPE_INDEX_TO_ORIGIN = _INDEX_TO_ORIGIN
_TYPE_SCHEMA_ORIGIN_CONVERTER = _ORIGIN_ALIASES
_ORIGIN_TYPE_INDEX_STRUCTURAL = _STRUCTURAL
_ORIGIN_TYPE_INDEX_UNKNOWN = _UNKNOWN
_RETAINED_TYPE_KEYS = frozenset({"ffi.BigInt"})
_TYPE_INDEX_TO_RETAINED_TYPE_KEY = {78: "ffi.BigInt"}
# (size, alignment, type index) of values stored inline in an object's fields.
_ORIGIN_NATIVE_LAYOUT = {
    "int": (8, 8, 1), "float": (8, 8, 3), "bool": (1, 1, 2), "ctypes.c_void_p": (8, 8, 4),
    "dtype": (4, 2, 5), "Device": (8, 4, 6), "Any": (16, 8, -1), "str": (16, 8, -1),
    "bytes": (16, 8, -1), "Optional": (16, 8, -1), "Union": (16, 8, -1),
}
_ConvertError = _ConvertError


class _TypeConverter:
    """A compiled converter of Python values to one ``TypeSchema``:
    ``convert(value)`` returns the converted value or raises TypeError."""

    __slots__ = ("schema",)

    def __init__(self, schema: TypeSchema) -> None:
        if not isinstance(schema, TypeSchema):
            raise TypeError(f"_TypeConverter needs a TypeSchema, got {type(schema).__name__}")
        self.schema = schema

    def convert(self, value: Any) -> Any:
        return self.schema.convert(value)

    __call__ = convert


def _build_converter(schema: TypeSchema) -> _TypeConverter:
    return _TypeConverter(schema)
