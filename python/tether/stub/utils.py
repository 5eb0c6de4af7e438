"""The stub generator's data model, free of any target language.

Options of a run, and what reflection says about a function (its name and
type schema) or an object type (its fields with their byte layout, methods,
ancestry, the fields its generated ``__init__`` takes). Generators turn these
into text; :mod:`.lib_state` builds them from the registry.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Union

from ..core import MISSING, TypeInfo, TypeSchema, _lookup_type_attr
from ._reflect import ORIGIN_TYPE_INDEX_UNKNOWN
from ._reflect import native_total_size as _native_total_size
from . import consts as C

# Field flag bits of the C ABI (``TVMFFIFieldFlagBitMask*``).
_WRITABLE = 1 << 0
_HAS_DEFAULT = 1 << 1
_SEQ_IGNORE = 1 << 3
_SEQ_DEF_PATTERN = 1 << 4
_DEFAULT_FROM_FACTORY = 1 << 5
_INIT_OFF = 1 << 9
_KW_ONLY = 1 << 10
_SEQ_DEF_SIMPLE = 1 << 12


def _parse_type_schema(raw: Union[str, Dict[str, Any]]) -> TypeSchema:
    """A schema from its JSON text or its already decoded JSON object."""
    return TypeSchema.from_json_obj(raw) if isinstance(raw, dict) else TypeSchema.from_json_str(raw)


def _untyped_function() -> TypeSchema:
    """The schema of a function that recorded none: any arguments, any result."""
    return TypeSchema("Callable")


def _metadata_schema(metadata: Dict[str, Any]) -> Optional[TypeSchema]:
    raw = metadata.get("type_schema") if isinstance(metadata, dict) else None
    return None if raw is None else _parse_type_schema(raw)


# First type index of an object type (`kTVMFFIStaticObjectBegin`).
_OBJECT_INDEX_BEGIN = 64
#: Type attribute holding the schema of what a call accepts for the type, when looser.
_CONVERT_TYPE_SCHEMA_ATTR = "__ffi_convert_type_schema__"


def _schema_repr(
    schema: TypeSchema,
    ty_map: Optional[Callable[[str], str]],
    input_mode: bool,
    expanded: FrozenSet[int] = frozenset(),
) -> str:
    """``schema`` as a Python annotation, each origin spelled through ``ty_map``.

    ``Optional[T]`` is ``T | None``, a union ``A | B``, a typed function
    ``Callable[[P...], R]`` (``Callable[..., R]`` without parameter types).
    With ``input_mode`` an object type that registered a looser accepted
    schema (``__ffi_convert_type_schema__``) is spelled by that schema.
    """
    fallback = getattr(schema, "fallback", None)
    if (fallback is not None and schema.origin_type_index == ORIGIN_TYPE_INDEX_UNKNOWN
            and schema.origin not in ("tuple", "list", "dict")):
        return _schema_repr(fallback, ty_map, input_mode, expanded)
    index = schema.origin_type_index
    if input_mode and index >= _OBJECT_INDEX_BEGIN and index not in expanded:
        accepted = _lookup_type_attr(index, _CONVERT_TYPE_SCHEMA_ATTR)
        if accepted is not None:
            accepted_schema = accepted if isinstance(accepted, TypeSchema) else (
                _parse_type_schema(accepted if isinstance(accepted, dict) else str(accepted)))
            return _schema_repr(accepted_schema, ty_map, True, expanded | {index})
    origin = schema.origin if ty_map is None else ty_map(schema.origin)
    if origin == "Callable":
        named = schema.named_args
        if not named:
            return "Callable[..., Any]"
        ret = _schema_repr(named["return"][0], ty_map, input_mode, expanded)
        if "params" not in named:
            return f"Callable[..., {ret}]"
        params = ", ".join(_schema_repr(p, ty_map, input_mode, expanded) for p in named["params"])
        return f"Callable[[{params}], {ret}]"
    args = [_schema_repr(a, ty_map, input_mode, expanded) for a in (schema.args or ())]
    if origin == "Union":
        return " | ".join(args)
    if origin == "Optional":
        return args[0] + " | None"
    if origin == "tuple" and schema.args == ():
        return "tuple[()]"
    return f"{origin}[{', '.join(args)}]" if args else origin


@dataclasses.dataclass
class InitConfig:
    """What ``--init`` scaffolds: for example ``--init-pypkg my-ext --init-lib
    my_ext_shared --init-prefix my_ext.``."""

    pkg: str
    """Distribution name of the Python package (``apache-tvm-ffi``, not ``tvm_ffi``)."""

    shared_target: str
    """Build target of the shared library the package loads (``lib<target>.so`` / ``<target>.dll``)."""

    prefix: str
    """Registry prefix covered: global functions and type keys under it (``my_ext.``)."""


@dataclasses.dataclass
class Options:
    """A run's command-line options."""

    imports: List[str] = dataclasses.field(default_factory=list)
    dlls: List[str] = dataclasses.field(default_factory=list)
    init: Optional[InitConfig] = None
    indent: int = 4
    files: List[str] = dataclasses.field(default_factory=list)
    verbose: bool = False
    dry_run: bool = False
    check: bool = False
    target: str = "python"
    coverage_out: Optional[str] = None


class NamedTypeSchema(TypeSchema):
    """A type schema with the name it is declared under.

    For a reflected field it also carries what the registry says about the
    native member: ``size``, ``alignment`` and ``offset`` (from the start of
    the object header; ``None`` for parameters), the registered ``default``
    (``MISSING`` when none or not readable) and whether it is a factory,
    the structural-equality role (``"ignore"``, ``"def-pattern"``,
    ``"def-simple"`` or ``None``), and ``frozen`` for a read-only field.
    """

    name: str
    size: Optional[int] = None
    alignment: Optional[int] = None
    offset: Optional[int] = None
    default: Any = MISSING
    default_is_factory: bool = False
    structural_eq: Optional[str] = None
    frozen: bool = False

    def __init__(
        self,
        name: str,
        schema: TypeSchema,
        *,
        size: Optional[int] = None,
        alignment: Optional[int] = None,
        offset: Optional[int] = None,
        default: Any = MISSING,
        default_is_factory: bool = False,
        structural_eq: Optional[str] = None,
        frozen: bool = False,
    ) -> None:
        """Name ``schema`` and attach the field facts."""
        super().__init__(schema.origin, schema.args, origin_type_index=schema.origin_type_index,
                         named_args=schema.named_args)
        self.fallback = getattr(schema, "fallback", None)
        self.type_key = getattr(schema, "type_key", None)
        self.name = name
        self.size = size
        self.alignment = alignment
        self.offset = offset
        self.default = default
        self.default_is_factory = default_is_factory
        self.structural_eq = structural_eq
        self.frozen = frozen

    def input_repr(self, ty_map: Optional[Callable[[str], str]] = None) -> str:
        """The annotation of what a call accepts for this type (see :func:`_schema_repr`)."""
        return _schema_repr(self, ty_map, input_mode=True)

    def output_repr(self, ty_map: Optional[Callable[[str], str]] = None) -> str:
        """The annotation of what a call returns for this type (see :func:`_schema_repr`)."""
        return _schema_repr(self, ty_map, input_mode=False)

    def repr(self, ty_map: Optional[Callable[[str], str]] = None) -> str:
        """Same as :meth:`output_repr`."""
        return self.output_repr(ty_map)

    @staticmethod
    def from_type_field(field: Any) -> "NamedTypeSchema":
        """The schema of a reflected field, with its byte and default facts.

        Without a recorded ``type_schema`` the field's static type is used.
        """
        flags = field.flags
        schema = _metadata_schema(field.metadata)
        if schema is None:
            schema = TypeSchema.from_type_index(field.field_static_type_index)
        if flags & _SEQ_IGNORE:
            seq = "ignore"
        elif flags & _SEQ_DEF_PATTERN:
            seq = "def-pattern"
        elif flags & _SEQ_DEF_SIMPLE:
            seq = "def-simple"
        else:
            seq = None
        return NamedTypeSchema(
            name=field.name,
            schema=schema,
            size=field.size,
            alignment=field.alignment,
            offset=field.offset,
            default=getattr(field, "c_default", MISSING),
            default_is_factory=bool(flags & _HAS_DEFAULT and flags & _DEFAULT_FROM_FACTORY),
            structural_eq=seq,
            frozen=not flags & _WRITABLE,
        )


@dataclasses.dataclass
class FuncInfo:
    """A function: its named schema, and whether it takes the object first (a method)."""

    schema: NamedTypeSchema
    is_member: bool

    @staticmethod
    def from_schema(name: str, schema: TypeSchema, *, is_member: bool = False) -> "FuncInfo":
        """A function named ``name`` of type ``schema``."""
        return FuncInfo(schema=NamedTypeSchema(name=name, schema=schema), is_member=is_member)


@dataclasses.dataclass
class InitFieldInfo:
    """A field the generated ``__init__`` takes."""

    name: str
    schema: NamedTypeSchema
    kw_only: bool
    has_default: bool


@dataclasses.dataclass
class ObjectInfo:
    """An object type as reflection describes it.

    ``fields`` are the type's own (inherited ones are the ancestors');
    ``ancestors`` lists the ancestor keys root first; ``total_size`` is the
    native ``sizeof`` when the type registered metadata of its own, else
    ``None``; ``is_final`` says the type admits no subtype (``None`` when
    unregistered).
    """

    fields: List[NamedTypeSchema]
    methods: List[FuncInfo]
    type_key: Optional[str] = None
    parent_type_key: Optional[str] = None
    init_fields: List[InitFieldInfo] = dataclasses.field(default_factory=list)
    has_init: bool = False
    ancestors: List[str] = dataclasses.field(default_factory=list)
    total_size: Optional[int] = None
    is_final: Optional[bool] = None

    def has_overloaded_methods(self) -> bool:
        """Whether two methods share a name and kind (instance or static)."""
        keys = [(m.schema.name, m.is_member) for m in self.methods]
        return len(set(keys)) != len(keys)

    @staticmethod
    def from_type_info(type_info: TypeInfo) -> "ObjectInfo":
        """Describe the type of ``type_info``."""
        chain: List[Any] = []
        parent = type_info.parent_type_info
        while parent is not None:
            chain.append(parent)
            parent = parent.parent_type_info
        chain.reverse()

        methods = list(type_info.methods or [])
        has_init = any(m.name == "__ffi_init__" for m in methods)
        if not has_init:
            has_init = _lookup_type_attr(type_info.type_index, "__ffi_init__") is not None
        init_fields: List[InitFieldInfo] = []
        if has_init:
            for owner in (*chain, type_info):
                for field in owner.fields or []:
                    if field.flags & _INIT_OFF:
                        continue
                    init_fields.append(InitFieldInfo(
                        name=field.name,
                        schema=NamedTypeSchema.from_type_field(field),
                        kw_only=bool(field.flags & _KW_ONLY),
                        has_default=bool(field.flags & _HAS_DEFAULT),
                    ))
        final = _lookup_type_attr(type_info.type_index, "__ffi_type_final__")
        return ObjectInfo(
            fields=[NamedTypeSchema.from_type_field(f) for f in type_info.fields or []],
            methods=[
                FuncInfo(
                    schema=NamedTypeSchema(
                        name=C.FN_NAME_MAP.get(m.name, m.name),
                        schema=_metadata_schema(m.metadata) or _untyped_function(),
                    ),
                    is_member=not m.is_static,
                )
                for m in methods
            ],
            type_key=type_info.type_key,
            parent_type_key=chain[-1].type_key if chain else None,
            init_fields=init_fields,
            has_init=has_init,
            ancestors=[info.type_key for info in chain],
            total_size=_native_total_size(type_info.type_index, type_info.type_key),
            is_final=None if final is None else bool(final),
        )
