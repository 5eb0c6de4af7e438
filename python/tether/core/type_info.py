"""Reflection: ``TypeInfo`` / ``TypeField`` / ``TypeMethod`` for every type
the core knows, with tvm_ffi's attribute names, read from the core's type
records (``TVMFFIGetTypeInfo``).
"""

from __future__ import annotations

import json
from typing import Any, Optional

from .. import _ffi
from .object import _install_type_info_maker
from .type_metadata import native_total_size

__all__ = ["TypeInfo", "TypeField", "TypeMethod", "type_info_of_index", "type_info_of_class"]

_FIELD_WRITABLE = 1 << 0
_FIELD_HAS_DEFAULT = 1 << 1
_FIELD_SEQ_IGNORE = 1 << 3
_FIELD_SEQ_DEF_PATTERN = 1 << 4
_FIELD_SEQ_DEF_SIMPLE = 1 << 12
_FIELD_REPR_OFF = 1 << 6
_FIELD_COMPARE_OFF = 1 << 7
_FIELD_HASH_OFF = 1 << 8
_FIELD_INIT_OFF = 1 << 9
_FIELD_KW_ONLY = 1 << 10
_METHOD_STATIC = 1 << 2


def _parse_metadata(text: str) -> dict:
    if not text:
        return {}
    try:
        md = json.loads(text)
    except ValueError:
        return {}
    return md if isinstance(md, dict) else {}


_field_default_fn: list = []


def _field_default(type_index: int, name: str) -> tuple:
    """``(default, default_factory)`` the core records for a field (each
    the core's MISSING when absent)."""
    from .sentinels import MISSING

    if not _field_default_fn:
        _field_default_fn.append(_ffi.get_global("tether.reflection.FieldDefault"))
    record = _ffi.call(_field_default_fn[0], type_index, name)
    if len(record) == 0:
        return MISSING, MISSING
    if len(record) == 2:
        return MISSING, record[0]
    return record[0], MISSING


class TypeField:
    """One reflected field: its name, layout, flags, metadata and schema."""

    def __init__(self, d: dict):
        self.name: str = d["name"]
        self.doc: Optional[str] = d["doc"] or None
        self.size: int = d["size"]
        self.alignment: int = d["alignment"]
        self.offset: int = d["offset"]
        self.field_static_type_index: int = d["field_static_type_index"]
        self.flags: int = d["flags"]
        self.frozen: bool = not (d["flags"] & _FIELD_WRITABLE)
        self.metadata: dict = _parse_metadata(d["metadata"])
        self.descriptor = d["descriptor"]
        self.getter = self.descriptor.__get__
        self.setter = self.descriptor.__set__
        # What the generated methods read (upstream's ``c_*`` names), from
        # the flags; ``_declare`` refines them for Python-defined classes.
        flags = self.flags
        self.c_init = not flags & _FIELD_INIT_OFF
        self.c_kw_only = bool(flags & _FIELD_KW_ONLY)
        self.c_has_default = bool(flags & _FIELD_HAS_DEFAULT)
        self.c_repr = not flags & _FIELD_REPR_OFF
        self.c_compare = not flags & _FIELD_COMPARE_OFF
        self.c_hash = not flags & _FIELD_HASH_OFF
        self.c_structural_eq = ("ignore" if flags & _FIELD_SEQ_IGNORE else "def-pattern"
                                if flags & _FIELD_SEQ_DEF_PATTERN else "def-simple"
                                if flags & _FIELD_SEQ_DEF_SIMPLE else None)
        # Set by ``_declare`` for the fields of a Python-defined class.
        self._ty = None
        self._py_field = None

    def _declared_default(self) -> tuple:
        """``(c_default, c_default_factory)``, read from the core once."""
        known = self.__dict__.get("_c_defaults")
        if known is None:
            from .sentinels import MISSING

            index = _ffi.type_key_to_index(self.descriptor.owner) if self.c_has_default else None
            known = _field_default(index, self.name) if index is not None else (MISSING, MISSING)
            self._c_defaults = known
        return known

    @property
    def c_default(self) -> Any:
        """The field's declared default value (MISSING when none)."""
        return self._declared_default()[0]

    @property
    def c_default_factory(self) -> Any:
        """The field's declared default factory (MISSING when none)."""
        return self._declared_default()[1]

    def _declare(self, py_field: Any, schema: Any) -> None:
        """Record the Python field a registration made this field from
        (upstream's ``c_*`` attributes: what the generated methods use)."""
        from .sentinels import MISSING

        self._ty = schema
        self._py_field = py_field
        self.frozen = bool(py_field.frozen)
        self.dataclass_field = py_field
        self.c_init = py_field.init
        self.c_kw_only = py_field.kw_only
        self.c_has_default = py_field.default is not MISSING or py_field.default_factory is not MISSING
        self._c_defaults = (py_field.default, py_field.default_factory)
        self.c_repr = py_field.repr
        self.c_compare = py_field.compare
        self.c_hash = bool(py_field.hash)
        self.c_structural_eq = getattr(py_field, "structural_eq", None)

    @property
    def ty(self):
        """The field's declared type (``TypeSchema``), from the metadata's
        ``type_schema`` when the registrar recorded one, else from the
        field's static type index."""
        from .type_schema import TypeSchema

        if self._ty is not None:
            return self._ty
        raw = self.metadata.get("type_schema")
        if raw is not None:
            return TypeSchema._from_maybe_json(raw)
        return TypeSchema.from_type_index(self.field_static_type_index)

    def as_property(self, cls: type):
        if self._py_field is not None:
            # Writes go through the core's converting setter; frozen
            # fields refuse plain assignment (the dataclasses layer's
            # FieldProperty, installed below through a hook).
            if _field_property is None:
                raise RuntimeError("tether.dataclasses is not loaded: import tether first")
            return _field_property(self.name, self.descriptor, None, self.frozen, self._py_field, self.doc)
        return self.descriptor

    def __repr__(self) -> str:
        return f"TypeField(name={self.name!r}, offset={self.offset}, frozen={self.frozen})"


class TypeMethod:
    """One reflected method (a Function taking the object first unless static)."""

    def __init__(self, d: dict):
        self.name: str = d["name"]
        self.doc: Optional[str] = d["doc"] or None
        self.func = d["func"]
        self.flags: int = d["flags"]
        self.is_static: bool = bool(d["flags"] & _METHOD_STATIC)
        self.metadata: dict = _parse_metadata(d["metadata"])

    def as_callable(self, cls: type):
        func, name = self.func, self.name
        if self.is_static:
            def static_method(*args):
                return func(*args)

            static_method.__name__ = name
            return staticmethod(static_method)

        def method(self, *args):
            return func(self, *args)

        method.__name__ = name
        method.__qualname__ = f"{cls.__qualname__}.{name}"
        return method

    def __repr__(self) -> str:
        return f"TypeMethod(name={self.name!r}, is_static={self.is_static})"


class TypeInfo:
    """A type's key, index, ancestry, own fields and methods."""

    def __init__(self, type_index: int):
        d = _ffi.type_info(type_index)
        self.type_index: int = d["index"]
        self.type_key: str = d["key"]
        self.type_depth: int = d["depth"]
        self.type_ancestors: list = list(d["ancestors"])
        self.fields: list = [TypeField(f) for f in d["field_details"]]
        self.methods: list = [TypeMethod(m) for m in d["method_details"]]
        self.type_cls: Optional[type] = _ffi.registered_class(type_index)

    @classmethod
    def _pending(cls, type_index: int, type_cls: Optional[type], parent: "TypeInfo") -> "TypeInfo":
        """The TypeInfo of a type just allocated for a Python class: no
        fields yet (``fields is None`` until ``_register_fields``)."""
        info = cls(type_index)
        info.fields = None
        info.methods = []
        info.type_cls = type_cls
        info._parent = parent
        return info

    @property
    def parent_type_info(self) -> Optional["TypeInfo"]:
        parent = self.__dict__.get("_parent")
        if parent is not None:
            return parent
        return type_info_of_index(self.type_ancestors[-1]) if self.type_ancestors else None

    @parent_type_info.setter
    def parent_type_info(self, value: Optional["TypeInfo"]) -> None:
        self._parent = value

    @property
    def _has_type_metadata(self) -> bool:
        """Whether the registry records native size metadata for this type."""
        return native_total_size(self.type_index) is not None

    @property
    def total_size(self) -> int:
        """Object size in bytes (header and fields): the registry's
        metadata when it has one, else laid out from the fields."""
        recorded = native_total_size(self.type_index)
        if recorded is not None:
            return recorded
        known = self.__dict__.get("_py_total_size")
        if known is not None:
            return known
        parent = self.parent_type_info
        if parent is None:
            raise ValueError(f"Cannot find parent type of {self.type_key!r}")
        end = max([parent.total_size] + [f.offset + f.size for f in self.fields or ()])
        return (end + 7) & ~7

    def _register_fields(self, fields: list, structure_kind: Optional[int] = None) -> None:
        """Register the fields of a type allocated by ``_register_py_class``
        (once) and read back the methods the core added."""
        if _field_registrar is None:
            raise RuntimeError("tether.core.py_class_registration is not loaded: import tether.core first")
        assert self.fields is None, f"_register_fields already called for {self.type_key!r}"
        fields = list(fields)
        _field_registrar(self, fields, structure_kind)
        self._read_back_methods()

    def _register_py_methods(self, py_methods: Optional[list] = None, type_attr_names: frozenset = frozenset()) -> None:
        """Register ``(name, value, is_static[, metadata_json])`` entries:
        names in ``type_attr_names`` as type attributes, the others as
        reflected methods; then read the method table back."""
        from .function import convert

        for entry in py_methods or ():
            name, value, is_static = entry[0], entry[1], entry[2]
            metadata = entry[3] if len(entry) > 3 else None
            if name in type_attr_names:
                _ffi.register_type_attr(self.type_index, name, convert(value))
            else:
                _ffi.register_type_method(self.type_index, name, value, bool(is_static), metadata or "")
        self._read_back_methods()

    def _read_back_methods(self) -> None:
        """Re-read the type's methods from the core's type table."""
        self.methods = [TypeMethod(m) for m in _ffi.type_info(self.type_index)["method_details"]]

    def __repr__(self) -> str:
        return f"TypeInfo(type_key={self.type_key!r}, type_index={self.type_index})"


_infos: dict = {}

# Services of the layers above, installed when they load (this module
# names none of them): registering a Python-defined type's fields with the
# core (py_class_registration), and the class attribute of such a field
# (dataclasses.field_property.FieldProperty).
_field_registrar: Optional[Any] = None
_field_property: Optional[Any] = None


def _install_field_registrar(register: Any) -> None:
    """``register(type_info, fields, structure_kind)`` registers the fields
    with the core, sets ``type_info.fields`` and records them on the class."""
    global _field_registrar  # noqa: PLW0603 - installed once, at import
    _field_registrar = register


def _install_field_property(make: Any) -> None:
    global _field_property  # noqa: PLW0603 - installed once, at import
    _field_property = make


def type_info_of_index(type_index: int) -> Optional[TypeInfo]:
    """The TypeInfo of a type index (None for an unknown index). Made afresh
    when the type gained fields or methods since it was last read."""
    try:
        info = TypeInfo(type_index)
    except ValueError:
        return None
    cached = _infos.get(type_index)
    if cached is not None and (cached.fields is None or "_parent" in cached.__dict__):
        # A Python-defined class's own TypeInfo (fields pending, or declared
        # from its Field records) stays; only its methods are re-read.
        cached.type_cls = info.type_cls or cached.type_cls
        cached.methods = info.methods
        return cached
    if cached is not None and len(cached.fields) == len(info.fields) and len(cached.methods) == len(info.methods):
        cached.type_cls = info.type_cls
        return cached
    _infos[type_index] = info
    return info


def _remember_type_info(info: TypeInfo) -> None:
    """Make ``info`` the TypeInfo its index reads as (a Python-defined
    class's, which knows more than the core's records)."""
    _infos[info.type_index] = info


def _forget_type_info(info: TypeInfo) -> None:
    if _infos.get(info.type_index) is info:
        del _infos[info.type_index]


def type_info_of_class(cls: type) -> Optional[TypeInfo]:
    index = getattr(cls, "__tether_type_index__", None)
    return None if index is None else type_info_of_index(index)


def _type_index_to_type_info(type_index: int) -> Optional[TypeInfo]:
    """tvm_ffi's name for ``type_info_of_index``."""
    return type_info_of_index(type_index)


def _type_cls_to_type_info(type_cls: type) -> Optional[TypeInfo]:
    """The TypeInfo of a registered wrapper class (None for other classes)."""
    info = getattr(type_cls, "__tvm_ffi_type_info__", None)
    return info if isinstance(info, TypeInfo) else type_info_of_class(type_cls)


def _lookup_or_register_type_info_from_type_key(type_key: str) -> TypeInfo:
    """The TypeInfo of a type the core knows by key; ValueError otherwise."""
    if not isinstance(type_key, str):
        raise TypeError(f"type key must be a str, got {type(type_key).__name__}")
    index = _ffi.type_key_to_index(type_key)
    if index is None:
        raise ValueError(f"Cannot find type index for type key {type_key!r}")
    return type_info_of_index(index)


_install_type_info_maker(type_info_of_index)
