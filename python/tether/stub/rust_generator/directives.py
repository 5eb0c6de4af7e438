"""The Rust target's one-line directives: their grammar, and one file's set.

Field directives name ``<type_key>.<field>``, type directives ``<type_key>``::

    // tvm-ffi-stubgen(field): tirx.Add.a -> PrimExpr
    // tvm-ffi-stubgen(nullable): ir.Expr.span
    // tvm-ffi-stubgen(enum): tirx.For.kind -> ForKind(i32) { Serial=0, Parallel=1 }
    // tvm-ffi-stubgen(opaque): ir.SourceName
    // tvm-ffi-stubgen(upcast): tirx.Add -> PrimExpr
    // tvm-ffi-stubgen(custom-new): tirx.Add

``field`` gives a field's Rust type (a name in scope or a ``::`` path to
import); on an inherited field it narrows the allocator's parameter.
``nullable`` wraps the field in ``Option``. ``enum`` declares an integer
newtype for the field, with named constants. ``opaque`` keeps a type opaque
even if its layout is reproducible. ``upcast`` adds a typed view besides the
ancestors. ``custom-new`` leaves ``new`` to hand-written code; the generated
allocator is then ``from_fields``.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Dict, List, Set, Tuple

_ENUM_RE = re.compile(
    r"^(?P<target>\S+)\s*->\s*(?P<name>[A-Za-z_]\w*)\((?P<repr>[iu](?:8|16|32|64))\)"
    r"\s*(?:\{(?P<body>[^{}]*)\})?$"
)
_MEMBER_RE = re.compile(r"^(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<value>-?\d+)$")


@dataclasses.dataclass(frozen=True)
class EnumSpec:
    """An ``enum`` directive: the newtype's name, its integer type, its ``(name, value)`` constants."""

    name: str
    repr: str
    members: Tuple[Tuple[str, int], ...]


@dataclasses.dataclass
class Directives:
    """One file's Rust directives, keyed by ``<type_key>.<field>`` or ``<type_key>``."""

    field_types: Dict[str, str] = dataclasses.field(default_factory=dict)
    nullable: Set[str] = dataclasses.field(default_factory=set)
    enums: Dict[str, EnumSpec] = dataclasses.field(default_factory=dict)
    opaque: Set[str] = dataclasses.field(default_factory=set)
    upcasts: Dict[str, List[str]] = dataclasses.field(default_factory=dict)
    custom_new: Set[str] = dataclasses.field(default_factory=set)

    def add(self, name: str, payload: str, lineno: int) -> None:
        """Parse directive ``name``; ``ValueError`` on an unknown name or a malformed payload."""
        if name == "field":
            lhs, rust_type = _split_arrow(name, payload, lineno, "<type_key>.<field> -> <RustType>")
            self.field_types[_field_target(name, lhs, lineno)] = rust_type
        elif name == "nullable":
            self.nullable.add(_field_target(name, payload, lineno))
        elif name == "enum":
            target, spec = _parse_enum(payload, lineno)
            self.enums[target] = spec
        elif name == "opaque":
            self.opaque.add(_type_target(name, payload, lineno))
        elif name == "upcast":
            lhs, rust_type = _split_arrow(name, payload, lineno, "<type_key> -> <RustType>")
            self.upcasts.setdefault(_type_target(name, lhs, lineno), []).append(rust_type)
        elif name == "custom-new":
            self.custom_new.add(_type_target(name, payload, lineno))
        else:
            raise ValueError(f"Unknown directive `{name}` at line {lineno}")


def _invalid(name: str, lineno: int, expected: str) -> ValueError:
    return ValueError(f"Invalid `{name}` directive at line {lineno}. Expected `{expected}`")


def _type_target(name: str, text: str, lineno: int) -> str:
    """A ``<type_key>``: one non-empty word."""
    target = text.strip()
    if not target or " " in target:
        raise _invalid(name, lineno, "<type_key>")
    return target


def _field_target(name: str, text: str, lineno: int) -> str:
    """A ``<type_key>.<field>``: one word with an inner dot."""
    target = text.strip()
    if not target or " " in target or "." not in target.strip("."):
        raise _invalid(name, lineno, "<type_key>.<field>")
    return target


def _split_arrow(name: str, payload: str, lineno: int, expected: str) -> Tuple[str, str]:
    """``(target, rust type)`` of ``<target> -> <rust type>`` (the target is not checked here)."""
    lhs, arrow, rhs = payload.partition("->")
    if not arrow or not rhs.strip():
        raise _invalid(name, lineno, expected)
    return lhs, rhs.strip()


def _parse_enum(payload: str, lineno: int) -> Tuple[str, EnumSpec]:
    """Parse ``<type_key>.<field> -> Name(i32) { A=0, B=1 }`` (constants optional)."""
    expected = "<type_key>.<field> -> Name(i32) { A=0, B=1 }"
    match = _ENUM_RE.match(payload.strip())
    if match is None:
        raise _invalid("enum", lineno, expected)
    members: List[Tuple[str, int]] = []
    for item in filter(None, (part.strip() for part in (match.group("body") or "").split(","))):
        member = _MEMBER_RE.match(item)
        if member is None:
            raise _invalid("enum", lineno, expected)
        members.append((member.group("name"), int(member.group("value"))))
    target = _field_target("enum", match.group("target"), lineno)
    return target, EnumSpec(match.group("name"), match.group("repr"), tuple(members))
