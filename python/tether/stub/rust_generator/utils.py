"""Building blocks of the Rust target: ``use`` items, type names, identifiers, modules.

:class:`RustUse` is one imported path and :class:`RustImports` one file's
collector (with its directives); :func:`render_rust_type` spells a schema as
a Rust type; :func:`rust_ident` a field name as an identifier;
:func:`rust_module_path` the module a ``.rs`` file defines; and
:func:`check_tokens` what ``--check`` compares of generated Rust.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Set, Tuple

from . import consts as C
from .directives import Directives

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ...core import TypeSchema


@dataclasses.dataclass(frozen=True, eq=True)
class RustUse:
    """One ``use <path>;``.

    A dotted registry name becomes a ``::`` path, its prefix mapped through
    :data:`.consts.RUST_MOD_MAP` (``ffi.String`` is ``tvm_ffi::String``); a
    bare name (``i64``) needs no ``use``.
    """

    path: str

    def __init__(self, name: str) -> None:
        """Turn ``name`` into a path."""
        if "." in name and "::" not in name:
            head, _, rest = name.partition(".")
            name = C.RUST_MOD_MAP.get(head, head) + "." + rest
        object.__setattr__(self, "path", name.replace(".", "::"))

    @property
    def leaf(self) -> str:
        """The name the ``use`` brings in scope (``Array`` of ``tvm_ffi::Array``)."""
        return self.path.rpartition("::")[2]

    def as_use_line(self) -> str:
        """``use <path>;``, or ``""`` for a bare name."""
        return f"use {self.path};" if "::" in self.path else ""


def is_crate_type_key(type_key: str) -> bool:
    """Whether the ``tvm_ffi`` crate binds ``type_key`` (every ``ffi.*`` key)."""
    return type_key.partition(".")[0] in C.RUST_MOD_MAP


@functools.lru_cache(maxsize=None)
def rust_module_path(path: Path) -> Tuple[str, ...]:
    """The module a ``.rs`` file defines, from where it sits under its crate's ``src/``.

    The crate is the closest enclosing directory with a ``Cargo.toml``.
    ``src/lib.rs`` and ``src/main.rs`` are ``crate``; ``src/ir.rs`` and
    ``src/ir/mod.rs`` are ``crate::ir``; a keyword segment is written raw
    (``r#type``). ``ValueError`` for a file outside any crate's ``src/``.
    """
    path = path.resolve()
    crate = next((d for d in path.parents if (d / "Cargo.toml").is_file()), None)
    if crate is None:
        raise ValueError(f"{path} is in no Cargo crate: no `Cargo.toml` above it")
    src = crate / "src"
    if src not in path.parents:
        raise ValueError(f"{path} is not under `{src}`, so it is in no module of the crate")
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "mod" or parts in (["lib"], ["main"]):
        parts.pop()
    return ("crate", *(f"r#{p}" if p in C.RUST_KEYWORDS else p for p in parts))


def builtin_mirror_name(type_key: str) -> str:
    """The header-only stand-in struct for a builtin ancestor (``ffi.IntEnum`` -> ``FfiIntEnumObj``).

    ``derive(Object)`` reads the type depth off the embedded base, so a type
    below a builtin the crate does not define needs a base of that depth.
    """
    head, _, leaf = type_key.rpartition(".")
    return head.replace(".", "_").capitalize() + leaf + "Obj"


@dataclasses.dataclass
class RustImports:
    """One file's ``use`` items, directives, builtin stand-ins and reserved names."""

    items: List[RustUse] = dataclasses.field(default_factory=list)
    directives: Directives = dataclasses.field(default_factory=Directives)
    builtin_mirrors: Dict[str, str] = dataclasses.field(default_factory=dict)
    """Builtin ancestors given a stand-in in this file, root first: type key -> the base it embeds."""
    reserved: Set[str] = dataclasses.field(default_factory=set)
    """Names the file's object blocks define; no import may take them."""

    def record_builtin_base(self, chain: List[str]) -> str:
        """Register stand-ins for the builtin ancestors ``chain`` (root side first); return the last.

        With an empty chain (the parent is ``ffi.Object``) that is the crate's ``Object``.
        """
        base = self.record("tvm_ffi::Object")
        for key in chain:
            self.builtin_mirrors.setdefault(key, base)
            base = builtin_mirror_name(key)
        return base

    def record(self, name: str) -> str:
        """Import ``name`` (once) and return how code spells it.

        The leaf, unless another import or a name the file defines already
        has that leaf: then the full path, unimported.
        """
        use = RustUse(name)
        if not use.as_use_line():
            return use.leaf
        if any(item.path == use.path for item in self.items):
            return use.leaf
        if use.leaf in self.reserved or any(item.leaf == use.leaf for item in self.items):
            return use.path
        self.items.append(use)
        return use.leaf


def render_rust_type(schema: TypeSchema, ty_render: Callable[[str, Optional[str]], Optional[str]]) -> Optional[str]:
    """``schema`` as a Rust value type, or ``None`` when it has no mirror.

    ``ty_render(origin, type_key)`` names a leaf type; ``type_key`` is the key
    a folded origin was parsed from (``ffi.BigInt`` for ``int``), else ``None``.
    """
    origin, args = schema.origin, schema.args
    if origin in C.RUST_UNSUPPORTED_ORIGINS:
        return None
    if origin in ("Array", "List"):
        return _generic(ty_render(origin, None), render_rust_type(args[0], ty_render))
    if origin == "Map":
        return _generic(ty_render("Map", None), render_rust_type(args[0], ty_render),
                        render_rust_type(args[1], ty_render))
    if origin == "Optional":
        return _generic("Option", render_rust_type(args[0], ty_render))
    if origin == "Callable":
        return ty_render("Callable", None)
    return ty_render(origin, getattr(schema, "type_key", None))


def _generic(base: Optional[str], *params: Optional[str]) -> Optional[str]:
    if base is None or None in params:
        return None
    return f"{base}<{', '.join(params)}>"  # type: ignore[arg-type]


#: A module qualifier in front of a name (``crate::ir::``, ``super::``, ``::core::mem::``).
_MODULE_QUALIFIER = re.compile(r"(?<![\w:])(?:::)?(?:[a-z_][a-z0-9_]*::)+(?=[A-Za-z_])")


def check_tokens(lines: Iterable[str]) -> Tuple[str, ...]:
    """The tokens of generated Rust that ``--check`` compares.

    ``use`` and comment lines, module qualifiers, and commas before a closing
    bracket are left out, so import paths and line wrapping do not count.
    """
    kept = [line.strip() for line in lines]
    text = " ".join(line for line in kept if not line.startswith(("use ", "//")))
    tokens = re.findall(r"\w+|\S", _MODULE_QUALIFIER.sub("", text))
    return tuple(tok for i, tok in enumerate(tokens)
                 if not (tok == "," and i + 1 < len(tokens) and tokens[i + 1] in (")", "]", "}")))


def rust_ident(name: str) -> str:
    """A reflected field name as a Rust identifier.

    A dunder name loses both underscore pairs and a C++ member's single
    trailing underscore is dropped; a keyword becomes ``r#name``, and the
    names that cannot be raw (and ``base``) get a trailing underscore.
    """
    if len(name) > 4 and name.startswith("__") and name.endswith("__"):
        name = name[2:-2]
    elif len(name) > 1 and name.endswith("_") and not name.endswith("__"):
        name = name[:-1]
    if name in C.RUST_NOT_RAW_IDENTIFIERS or name in C.RUST_RESERVED_MEMBERS:
        return name + "_"
    if name in C.RUST_KEYWORDS:
        return "r#" + name
    return name
