"""``TypeSchema``: a field's or function's declared type — its origin
(``"int"``, ``"Array"``, ``"tuple"``, a type key…), positional ``args``,
``named_args`` groups (a typed ``Callable``'s ``return`` and ``params``),
the ``fallback`` a binding shows for a type it does not know, and the raw
``type_key`` kept when parsing folded a key into a native origin
(``ffi.BigInt`` into ``int``). Checking and converting values is the
converter's job (``type_converter``); this module builds, renders and
serialises schemas.

Schemas come from the ``type_schema`` JSON that registrars record in field
and method metadata (TVM-FFI's encoding: ``{"type": "ffi.Array", "args":
[{"type": "int"}]}``), from a static type index, or from a Python
annotation (``TypeSchema.from_annotation(tuple[int, str])``).

Hook for ``tether.dataclasses`` (and anyone enforcing declared types)::

    value = tether.type_schema.check_field_value(schema_or_annotation, value)

returns the value converted to the declared type (``[1, 2]`` to a
``List[int]`` becomes a ``tether.List``) or raises TypeError with
tvm_ffi's message (``type check failed for List[int]: element [0]:
expected int, got str``).
"""

from __future__ import annotations

import collections.abc
import ctypes
import dataclasses
import functools
import json
import typing
from typing import Any, Callable, Optional

from .. import _ffi
from .any_value import CAny
from .device import Device
from .dtype import DataType
from .object import Object, _lookup_type_attr
from .string import PyNativeObject
from .type_converter import _build_converter, _ConvertError, _TypeConverter

__all__ = ["TypeSchema", "check_field_value"]

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
_INDEX_TO_ORIGIN.update({7: "Tensor", 8: "str", 9: "bytes", 10: "Object", 11: "str", 12: "bytes", 78: "int"})
# Folds that lose information (the folded origin is a native type too): the
# schema keeps the key it was parsed from.
_TYPE_INDEX_TO_RETAINED_TYPE_KEY = {78: "ffi.BigInt"}
_RETAINED_TYPE_KEYS = frozenset(_TYPE_INDEX_TO_RETAINED_TYPE_KEY.values())
_STRUCTURAL, _UNKNOWN = -2, -3
_OBJECT_BEGIN = 64
_CONVERT_SCHEMA_ATTR = "__ffi_convert_type_schema__"
_SEQUENCES, _MAPPINGS = ("list", "Array", "List"), ("dict", "Map", "Dict")


def _checked_named_args(named_args) -> Optional[dict]:
    if named_args is None:
        return None
    if not isinstance(named_args, dict):
        raise TypeError("named_args must be a map of names to type lists")
    out = {}
    for name, values in named_args.items():
        if not isinstance(name, str) or not name:
            raise ValueError("named_args keys must be nonempty strings")
        if not isinstance(values, (list, tuple)):
            raise TypeError("named_args values must be lists of type schemas")
        if any(not isinstance(v, TypeSchema) for v in values):
            raise TypeError("named_args values must contain type schemas")
        out[name] = tuple(values)
    return out


@dataclasses.dataclass(repr=False)
class TypeSchema:
    """A declared FFI type. ``args`` is None only for a bare ``tuple``
    (any length); ``origin_type_index`` is resolved from the origin when
    not given (-2 for Optional/Union, -3 when unknown)."""

    origin: str
    args: Optional[tuple] = None
    origin_type_index: int = dataclasses.field(default=_UNKNOWN, repr=False)
    fallback: Optional["TypeSchema"] = None
    named_args: Optional[dict] = None
    type_key: Optional[str] = dataclasses.field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        origin = self.origin
        if not isinstance(origin, str) or not origin:
            raise ValueError("schema type must be a nonempty string")
        args = self.args
        if args is not None and not isinstance(args, tuple):
            args = tuple(args)
        if args is None and origin != "tuple":
            args = ()
        if args is not None and any(not isinstance(a, TypeSchema) for a in args):
            raise TypeError("schema arguments must be TypeSchema instances")
        if self.fallback is not None and not isinstance(self.fallback, TypeSchema):
            raise TypeError("fallback must be a TypeSchema")
        named = _checked_named_args(self.named_args)
        if origin == "Callable":
            if args and named is None:  # flat form: return type first, then parameters
                named = {"return": (args[0],)}
                if len(args) > 1:
                    named["params"] = args[1:]
                args = ()
            if named is not None:
                if args or set(named) - {"return", "params"}:
                    raise ValueError("Callable uses only named return and params groups")
                if len(named.get("return", ())) != 1:
                    raise ValueError("Callable return group must contain exactly one type")
        if origin == "Union" and len(args) < 2:
            raise ValueError("Union must have at least two arguments")
        if origin == "Optional" and len(args) != 1:
            raise ValueError("Optional must have exactly one argument")
        if origin in _SEQUENCES:
            if len(args) not in (0, 1):
                raise ValueError(f"{origin} must have 0 or 1 argument")
            args = args or (TypeSchema("Any"),)
        if origin in _MAPPINGS:
            if len(args) not in (0, 2):
                raise ValueError(f"{origin} must have 0 or 2 arguments")
            args = args or (TypeSchema("Any"), TypeSchema("Any"))
        self.args, self.named_args = args, named
        if self.origin_type_index == _UNKNOWN:
            if origin in ("Optional", "Union"):
                self.origin_type_index = _STRUCTURAL
            elif origin in _ORIGIN_TO_INDEX:
                self.origin_type_index = _ORIGIN_TO_INDEX[origin]
            else:
                found = _ffi.type_key_to_index(origin)
                if found is not None:
                    self.origin_type_index = found

    def __hash__(self) -> int:  # schemas key caches; equal schemas hash alike
        return hash((self.origin, self.args))

    @functools.cached_property
    def _converter(self) -> _TypeConverter:
        """Built on first use, when every object type it names is registered."""
        return _build_converter(self)

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
        """A schema from parsed JSON; non-object entries of ``args`` (the
        lengths ``std::array`` records) are skipped."""
        if not isinstance(obj, dict) or "type" not in obj:
            raise TypeError(f"expected schema dict with 'type' key, got {type(obj).__name__}")
        raw_origin = obj["type"]
        if not isinstance(raw_origin, str):
            raise TypeError("schema type must be a string")
        origin = _ORIGIN_ALIASES.get(raw_origin, raw_origin)
        type_key = raw_origin if raw_origin in _RETAINED_TYPE_KEYS else None
        fallback = TypeSchema.from_json_obj(obj["fallback"]) if "fallback" in obj else None
        named_args = None
        if "named_args" in obj:
            raw_named = obj["named_args"]
            if not isinstance(raw_named, dict):
                raise TypeError("named_args must be a map of names to type lists")
            named_args = {}
            for name, values in raw_named.items():
                if not isinstance(name, str) or not name or not isinstance(values, list):
                    raise TypeError("named_args must map names to type lists")
                if any(not isinstance(v, dict) for v in values):
                    raise TypeError("named_args lists must contain type schemas")
                named_args[name] = tuple(TypeSchema.from_json_obj(v) for v in values)
        common = {"fallback": fallback, "named_args": named_args, "type_key": type_key}
        if "args" not in obj:
            return TypeSchema(origin, **common)
        raw_args = obj["args"]
        if (raw_origin == "std::function" and isinstance(raw_args, (list, tuple)) and len(raw_args) == 2
                and isinstance(raw_args[1], (list, tuple))):
            # The older std::function encoding: [return, [params...]].
            common["named_args"] = {"return": (TypeSchema.from_json_obj(raw_args[0]),),
                                    "params": tuple(TypeSchema.from_json_obj(v) for v in raw_args[1])}
            return TypeSchema(origin, **common)
        if not isinstance(raw_args, (list, tuple)):
            raw_args = ()
        return TypeSchema(origin, tuple(TypeSchema.from_json_obj(a) for a in raw_args if isinstance(a, dict)),
                          **common)

    @staticmethod
    def from_json_str(s: str) -> "TypeSchema":
        return TypeSchema.from_json_obj(json.loads(s))

    @staticmethod
    def from_type_index(type_index: int, args: tuple = ()) -> "TypeSchema":
        origin = _INDEX_TO_ORIGIN.get(type_index)
        if origin is None:
            origin = _ffi.type_info(type_index)["key"]
        return TypeSchema(origin, args, origin_type_index=type_index,
                          type_key=_TYPE_INDEX_TO_RETAINED_TYPE_KEY.get(type_index))

    @staticmethod
    def from_annotation(annotation) -> "TypeSchema":
        """A schema from a Python annotation (``int``, ``list[int]``,
        ``tuple[int, str]``, ``Optional[T]``, ``Callable[[int], str]``, a
        registered object class…); TypeError when there is none."""
        return _from_annotation(annotation)

    # ---- rendering ----------------------------------------------------------------

    def repr(self, ty_map: Optional[Callable[[str], str]] = None) -> str:
        return self.output_repr(ty_map)

    def input_repr(self, ty_map: Optional[Callable[[str], str]] = None) -> str:
        """The annotation of values this schema accepts (an object type with
        ``__ffi_convert_type_schema__`` shows what it converts from)."""
        return self._render(ty_map, True, frozenset())

    def output_repr(self, ty_map: Optional[Callable[[str], str]] = None) -> str:
        """The annotation of values this schema produces."""
        return self._render(ty_map, False, frozenset())

    def _render(self, ty_map, input_mode: bool, expanded: frozenset) -> str:
        if (self.fallback is not None and self.origin_type_index == _UNKNOWN
                and self.origin not in ("tuple", "list", "dict")):
            return self.fallback._render(ty_map, input_mode, expanded)
        index = self.origin_type_index
        if input_mode and index >= _OBJECT_BEGIN and index not in expanded:
            raw = _lookup_type_attr(index, _CONVERT_SCHEMA_ATTR)
            if raw is not None:
                return TypeSchema._from_maybe_json(raw)._render(ty_map, True, expanded | {index})
        origin = self.origin if ty_map is None else ty_map(self.origin)

        def render(s: "TypeSchema") -> str:
            return s._render(ty_map, input_mode, expanded)

        if origin == "Callable":
            if not self.named_args:
                return "Callable[..., Any]"
            ret = render(self.named_args["return"][0])
            if "params" not in self.named_args:
                return f"Callable[..., {ret}]"
            return f"Callable[[{', '.join(render(p) for p in self.named_args['params'])}], {ret}]"
        args = [render(a) for a in (self.args or ())]
        if origin == "Union":
            return " | ".join(args)
        if origin == "Optional":
            return args[0] + " | None"
        if origin == "tuple" and self.args == ():
            return "tuple[()]"
        return f"{origin}[{', '.join(args)}]" if args else origin

    def __repr__(self) -> str:
        return self.repr()

    def to_json(self) -> dict:
        """The JSON form; a retained ``type_key`` is written in place of the
        folded origin, so parsing it back restores the key."""
        out: dict = {"type": self.type_key or self.origin}
        if self.args is not None and (self.args or self.origin == "tuple"):
            out["args"] = [a.to_json() for a in self.args]
        if self.named_args is not None:
            out["named_args"] = {k: [v.to_json() for v in vs] for k, vs in self.named_args.items()}
        if self.fallback is not None:
            out["fallback"] = self.fallback.to_json()
        return out

    def is_subtype_of(self, target_cls: type) -> bool:
        """Whether this schema's origin is ``target_cls``'s object type or
        derives from it (False for non-object origins)."""
        target = getattr(target_cls, "__tether_type_index__", None)
        if target is None:
            try:
                target = TypeSchema.from_annotation(target_cls).origin_type_index
            except TypeError:
                return False
            if target == _OBJECT_BEGIN:
                return self.origin_type_index >= _OBJECT_BEGIN
            return False
        if self.origin_type_index == target:
            return True
        if self.origin_type_index < _OBJECT_BEGIN:
            return False
        try:
            return target in _ffi.type_info(self.origin_type_index)["ancestors"]
        except ValueError:
            return False

    # ---- checking and converting ----------------------------------------------------

    def _run(self, value, verb: str) -> Any:
        try:
            return self._converter.run(value)[0]
        except RecursionError:
            raise TypeError(f"type {verb} failed for {self!r}: infinite __tvm_ffi_value__ cycle detected") from None
        except _ConvertError as err:
            raise TypeError(f"type {verb} failed for {self!r}: {err.message}") from None

    def check_value(self, value) -> None:
        """TypeError (naming the schema and the offending part) unless
        ``value`` is accepted by this type."""
        self._run(value, "check")

    def convert(self, value) -> "CAny":
        """``value`` converted to this type, as an owned FFI value (``CAny``;
        ``_to_py_class_value`` gives the Python value back)."""
        return CAny._from_converted(self._run(value, "conversion"))

    def convert_value(self, value):
        """``value`` converted to this type, as the Python value it crosses
        as (``[1, 2]`` to ``List[int]`` becomes a ``tether.List``)."""
        return self._run(value, "conversion")


def _dtype_class() -> type:
    import sys

    return sys.modules[__package__]._CLASS_DTYPE


def _annotation_union(args: tuple) -> TypeSchema:
    rest = tuple(a for a in args if a is not type(None))
    conv = tuple(_from_annotation(a) for a in rest)
    if len(rest) < len(args):
        return TypeSchema("Optional", conv if len(conv) == 1 else (TypeSchema("Union", conv),))
    return TypeSchema("Union", conv)


def _annotation_object(cls: type, targs: tuple) -> TypeSchema:
    index = getattr(cls, "__tether_type_index__", None)
    if index is None or _ffi.registered_class(index) is not cls:
        raise TypeError(f"Object subclass {cls!r} is not registered; use @register_object to register it")
    origin = _INDEX_TO_ORIGIN.get(index) or _ffi.type_info(index)["key"]
    if targs:
        if origin in ("Array", "List") and len(targs) != 1:
            raise TypeError(f"{origin} requires 1 type argument, got {len(targs)}")
        if origin in ("Map", "Dict") and len(targs) != 2:
            raise TypeError(f"{origin} requires 2 type arguments, got {len(targs)}")
        return TypeSchema(origin, tuple(_from_annotation(a) for a in targs), origin_type_index=index)
    return TypeSchema(origin, origin_type_index=index)


_BARE = {bool: "bool", int: "int", float: "float", str: "str", bytes: "bytes", list: "List", dict: "Dict",
         tuple: "tuple", collections.abc.Callable: "Callable", ctypes.c_void_p: "ctypes.c_void_p"}


def _from_annotation(annotation) -> TypeSchema:
    if annotation is None or annotation is type(None):
        return TypeSchema("None")
    if annotation is typing.Any:
        return TypeSchema("Any")
    if isinstance(annotation, type) and annotation in _BARE:
        return TypeSchema(_BARE[annotation])
    origin, targs = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Union or type(annotation).__name__ == "UnionType":
        return _annotation_union(targs)
    if origin is list:
        if len(targs) > 1:
            raise TypeError(f"list takes at most 1 type argument, got {len(targs)}")
        return TypeSchema("List", tuple(_from_annotation(a) for a in targs))
    if origin is dict:
        if len(targs) not in (0, 2):
            raise TypeError(f"dict requires 0 or 2 type arguments, got {len(targs)}")
        return TypeSchema("Dict", tuple(_from_annotation(a) for a in targs))
    if origin is tuple:
        if len(targs) == 2 and targs[1] is Ellipsis:  # homogeneous, any length
            return TypeSchema("Array", (_from_annotation(targs[0]),))
        # tuple[()] has no arguments but a fixed length of zero.
        return TypeSchema("tuple", tuple(_from_annotation(a) for a in targs))
    if origin is collections.abc.Callable:
        if len(targs) == 2:
            ret = _from_annotation(targs[1])
            if isinstance(targs[0], list):
                return TypeSchema("Callable", named_args={
                    "return": (ret,), "params": tuple(_from_annotation(p) for p in targs[0])})
            return TypeSchema("Callable", named_args={"return": (ret,)})
        return TypeSchema("Callable")
    if isinstance(origin, type) and issubclass(origin, (Object, _ffi.CObject)):
        return _annotation_object(origin, targs)
    if isinstance(annotation, type) and issubclass(annotation, (Object, _ffi.CObject)):
        return _annotation_object(annotation, ())
    if isinstance(annotation, type) and issubclass(annotation, PyNativeObject):
        if issubclass(annotation, tuple):  # Shape: a tuple holding an ffi.Shape object
            return TypeSchema(annotation.__tvm_ffi_type_info__.type_key)
        return TypeSchema("str" if issubclass(annotation, str) else "bytes")
    if annotation is DataType or annotation is _dtype_class():
        return TypeSchema("dtype")
    if isinstance(annotation, type) and issubclass(annotation, Device):
        return TypeSchema("Device")
    if isinstance(annotation, type) and hasattr(annotation, "__dlpack__"):
        return TypeSchema("Tensor")
    raise TypeError(f"Cannot convert {annotation!r} to TypeSchema")


def check_field_value(schema, value):
    """Check ``value`` against ``schema`` (a TypeSchema, its JSON, or a
    Python annotation) and return it converted; TypeError otherwise."""
    if not isinstance(schema, TypeSchema):
        schema = TypeSchema._from_maybe_json(schema) if isinstance(schema, (str, dict)) else _from_annotation(schema)
    return schema.convert_value(value)


# tvm_ffi's names for the origin tables.
_ORIGIN_TO_TYPE_INDEX = _ORIGIN_TO_INDEX
_TYPE_INDEX_TO_ORIGIN = _INDEX_TO_ORIGIN
_TYPE_SCHEMA_ORIGIN_CONVERTER = _ORIGIN_ALIASES
_ORIGIN_TYPE_INDEX_STRUCTURAL = _STRUCTURAL
_ORIGIN_TYPE_INDEX_UNKNOWN = _UNKNOWN
# (size, alignment, type index) of values stored inline in an object's fields.
_ORIGIN_NATIVE_LAYOUT = {
    "int": (8, 8, 1), "float": (8, 8, 3), "bool": (1, 1, 2), "ctypes.c_void_p": (8, 8, 4),
    "dtype": (4, 2, 5), "Device": (8, 4, 6), "Any": (16, 8, -1), "str": (16, 8, -1),
    "bytes": (16, 8, -1), "Optional": (16, 8, -1), "Union": (16, 8, -1),
}
