"""Building blocks of the Python target: imports, and signature lines.

:class:`ImportItem` is one imported name (module, name, alias, whether only
type checkers need it); :class:`PythonImports` collects them for one file.
The ``render_*`` functions turn a function or an object type into stub
lines; the ``ty_map`` callables they take spell a schema origin as a Python
name and record the import that name needs.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, List, Optional

from ...core import TypeSchema
from ..utils import FuncInfo, InitFieldInfo, ObjectInfo, _schema_repr
from . import consts as C

TyMap = Callable[[str], str]


@dataclasses.dataclass(frozen=True, eq=True)
class ImportItem:
    """One imported name: ``from <mod> import <name> [as <alias>]`` (``import <name>`` without a module).

    Built from a dotted ``module.name``; a registry prefix leading the module
    is rewritten to its Python module (:data:`.consts.MOD_MAP`), and tether's
    own modules to the runtime package's (:func:`.consts.runtime_package`).
    """

    mod: str
    name: str
    type_checking_only: bool = False
    alias: Optional[str] = None

    def __init__(self, full_name: str, type_checking_only: bool = False, alias: Optional[str] = None) -> None:
        """Split ``full_name`` at its last dot and map the module."""
        mod, _, name = full_name.rpartition(".")
        for prefix, python_module in C.MOD_MAP.items():
            if mod == prefix or mod.startswith(prefix + "."):
                mod = python_module + mod[len(prefix):]
                break
        mod = C.in_runtime(mod)
        object.__setattr__(self, "mod", mod)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "type_checking_only", type_checking_only)
        object.__setattr__(self, "alias", alias)

    @property
    def name_with_alias(self) -> str:
        """``name as alias``, or ``name`` without an alias."""
        return f"{self.name} as {self.alias}" if self.alias else self.name

    @property
    def full_name(self) -> str:
        """``mod.name``, or ``name`` without a module."""
        return f"{self.mod}.{self.name}" if self.mod else self.name

    def __str__(self) -> str:
        """The import statement."""
        if not self.mod:
            return f"import {self.name_with_alias}"
        return f"from {self.mod} import {self.name_with_alias}"

    __repr__ = __str__


@dataclasses.dataclass
class PythonImports:
    """The imports one file's generated blocks need (private to the Python target)."""

    items: List[ImportItem] = dataclasses.field(default_factory=list)
    has_lib_load: bool = False
    """Whether the file imports the library loader, which makes ``LIB`` an export."""


def _last(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _accepted(schema: TypeSchema, ty_map: TyMap) -> str:
    return _schema_repr(schema, ty_map, input_mode=True)


def _returned(schema: TypeSchema, ty_map: TyMap) -> str:
    return _schema_repr(schema, ty_map, input_mode=False)


def render_func_signature(func: FuncInfo, ty_map: TyMap, indent: int, input_ty_map: Optional[TyMap] = None) -> str:
    """``def <name>(...) -> <result>: ...`` for ``func``, on one line.

    Parameters are positional-only ``_0, _1, ...`` typed with what a call
    accepts (``input_ty_map``); a method's first parameter is ``self``. A
    function without parameter types takes ``*args: Any``.
    """
    accepts = input_ty_map or ty_map
    schema = func.schema
    if schema.origin != "Callable":
        raise ValueError(f"Expected Callable type schema, but got: {schema}")
    head = " " * indent + f"def {_last(schema.name)}("
    named = schema.named_args
    if not named:
        ty_map("Any")
        return head + "*args: Any) -> Any: ..."
    ret = named["return"][0]
    if "params" not in named:
        ty_map("Any")
        return head + f"*args: Any) -> {_returned(ret, ty_map)}: ..."
    params = named["params"]
    parts = ["self" if func.is_member and i == 0 else f"_{i}: {_accepted(p, accepts)}" for i, p in enumerate(params)]
    if params:
        parts.append("/")
    return head + ", ".join(parts) + f") -> {_returned(ret, ty_map)}: ..."


def render_object_fields(info: ObjectInfo, ty_map: TyMap, indent: int) -> List[str]:
    """``<field>: <type>`` for each of the type's own fields."""
    pad = " " * indent
    return [f"{pad}{f.name}: {_returned(f, ty_map)}" for f in info.fields]


def render_object_methods(
    info: ObjectInfo, ty_map: TyMap, indent: int, input_ty_map: Optional[TyMap] = None
) -> List[str]:
    """Stub lines of the type's methods, in registration order.

    Methods sharing a name and kind are grouped under ``@overload``; static
    ones get ``@staticmethod``; ``__ffi_init__`` is an instance method
    returning ``None``.
    """
    pad = " " * indent
    groups: dict = {}
    for method in info.methods:
        groups.setdefault((method.schema.name, method.is_member), []).append(method)
    lines: List[str] = []
    for group in groups.values():
        for method in group:
            if len(group) > 1:
                lines.append(f"{pad}@overload")
            if _last(method.schema.name) == "__ffi_init__":
                lines.append(_render_ffi_init_from_method(method, ty_map, indent, input_ty_map))
                continue
            if not method.is_member:
                lines.append(f"{pad}@staticmethod")
            lines.append(render_func_signature(method, ty_map, indent, input_ty_map))
    return lines


def _render_ffi_init_from_method(
    method: FuncInfo, ty_map: TyMap, indent: int, input_ty_map: Optional[TyMap] = None
) -> str:
    """``__ffi_init__`` from its registered schema: every parameter after ``self``."""
    accepts = input_ty_map or ty_map
    head = " " * indent + "def __ffi_init__(self"
    named = method.schema.named_args
    if method.schema.origin != "Callable" or not named or "params" not in named:
        ty_map("Any")
        return head + ", *args: Any) -> None: ..."
    parts = [f"_{i}: {_accepted(p, accepts)}" for i, p in enumerate(named["params"])]
    if not parts:
        return head + ") -> None: ..."
    return head + ", " + ", ".join(parts) + ", /) -> None: ..."


def render_object_ffi_init(
    info: ObjectInfo, ty_map: TyMap, indent: int, input_ty_map: Optional[TyMap] = None
) -> List[str]:
    """``__ffi_init__`` built from the init fields, for a type whose initializer
    is a type attribute rather than a registered method (which
    :func:`render_object_methods` renders)."""
    if not info.has_init or any(_last(m.schema.name) == "__ffi_init__" for m in info.methods):
        return []
    return _render_ffi_init_from_fields(info, ty_map, indent, input_ty_map)


def render_object_init(
    info: ObjectInfo, ty_map: TyMap, indent: int, input_ty_map: Optional[TyMap] = None
) -> List[str]:
    """``__init__`` built from the init fields, for a type with an initializer."""
    if not info.has_init:
        return []
    return _render_init_from_fields(info, ty_map, indent, input_ty_map)


def _format_field_params(info: ObjectInfo, ty_map: TyMap, input_ty_map: Optional[TyMap] = None) -> str:
    """The init fields as parameters: positional ones (required, then defaulted),
    then ``*`` and the keyword-only ones (required, then defaulted)."""
    accepts = input_ty_map or ty_map

    def param(f: InitFieldInfo) -> str:
        text = f"{f.name}: {_accepted(f.schema, accepts)}"
        return text + " = ..." if f.has_default else text

    def ordered(fields: List[InitFieldInfo]) -> List[InitFieldInfo]:
        return [f for f in fields if not f.has_default] + [f for f in fields if f.has_default]

    positional = ordered([f for f in info.init_fields if not f.kw_only])
    keyword = ordered([f for f in info.init_fields if f.kw_only])
    parts = [param(f) for f in positional]
    if keyword:
        parts += ["*"] + [param(f) for f in keyword]
    return ", ".join(parts)


def _render_named_init(name: str, info: ObjectInfo, ty_map: TyMap, indent: int, input_ty_map: Optional[TyMap]) -> List[str]:
    params = _format_field_params(info, ty_map, input_ty_map)
    return [" " * indent + f"def {name}(self{', ' + params if params else ''}) -> None: ..."]


def _render_init_from_fields(
    info: ObjectInfo, ty_map: TyMap, indent: int, input_ty_map: Optional[TyMap] = None
) -> List[str]:
    """``def __init__(self, <init fields>) -> None: ...``."""
    return _render_named_init("__init__", info, ty_map, indent, input_ty_map)


def _render_ffi_init_from_fields(
    info: ObjectInfo, ty_map: TyMap, indent: int, input_ty_map: Optional[TyMap] = None
) -> List[str]:
    """``def __ffi_init__(self, <init fields>) -> None: ...``."""
    return _render_named_init("__ffi_init__", info, ty_map, indent, input_ty_map)
