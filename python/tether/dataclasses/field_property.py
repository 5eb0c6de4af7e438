"""The class attribute of a dataclass field: reads are the core's field
descriptor's native read slot (so ``a.x is a.x`` and revival keep working,
without a Python frame per read), writes convert the
value first and refuse frozen fields as TVM-FFI does (``property of 'P'
object has no setter``); ``type(obj).x.set(obj, v)`` writes even a frozen
field, TVM-FFI's escape hatch."""

from __future__ import annotations

from typing import Any, Optional

from .. import _ffi
from ..core.type_info import _install_field_property
from .field_types import FieldType

__all__ = ["FieldProperty"]


class FieldProperty(_ffi.FieldDescriptor):
    __slots__ = ("name", "core", "field_type", "frozen", "field", "_doc")

    def __init__(self, name: str, core_descriptor: Any, field_type: Optional[FieldType], frozen: bool,
                 field: Any = None, doc: Optional[str] = None):
        self.name = name
        self.core = core_descriptor
        self.field_type = field_type
        self.frozen = frozen
        self.field = field
        self._doc = doc

    # A property: a slot named __doc__ would be shadowed by the class's own
    # (None) docstring entry. Without a doc of its own, the field's
    # registered documentation.
    __doc__ = property(lambda self: self._doc if self._doc is not None else self.core.doc,  # type: ignore[assignment]
                       doc="The field's documentation; None when it has none.")

    def __set__(self, obj: Any, value: Any) -> None:
        if self.frozen:
            raise AttributeError(f"property of {type(obj).__name__!r} object has no setter")
        self.set(obj, value)

    @property
    def fset(self) -> Any:
        """The setter, as ``property.fset``: None for a frozen field."""
        return None if self.frozen else self.__set__

    def __delete__(self, obj: Any) -> None:
        raise AttributeError(f"property of {type(obj).__name__!r} object has no deleter")

    def convert(self, value: Any) -> Any:
        return value if self.field_type is None else self.field_type.convert(value)

    def set(self, obj: Any, value: Any) -> None:
        """Write the field, frozen or not (constructors, ``replace``)."""
        self.core.set_unchecked(obj, self.convert(value))

    def __repr__(self) -> str:
        return f"<field {self.name}{' (frozen)' if self.frozen else ''}>"


# Reads stay native: the subclass gets the base's C read slot (it defines
# no __get__ of its own).
_ffi.install_field_get(FieldProperty)


# The core builds the class attribute of a Python-defined field with it.
_install_field_property(FieldProperty)
