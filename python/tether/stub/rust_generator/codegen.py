"""Rust text of an ``object/`` block, of the import section, and of ``--init`` files.

Each reflected object becomes a ``#[repr(C)]`` object struct ``<Leaf>Obj``,
a reference wrapper ``<Leaf>`` (an ``ObjectArc``), ``Deref`` impls, and
upcasts to its ancestors' wrappers. What the struct holds depends on the
:mod:`tether.stub.layout` verdict:

- *complete*: every field at its native offset and width, with a ``const``
  assertion of size and alignment, and allocators taking every field root
  to leaf (``<Leaf>Obj::new`` each as its own type; the wrapper's ``new``
  scalars as themselves, anything else as ``impl Into``; ``from_fields``
  instead of ``new`` under ``custom-new``). A type that is not final, with
  only generated ancestors below ``ffi.Object``, also gets ``ShallowCopy``
  and ``UnsafeInit`` so a Rust-defined type may extend it; its
  ``<Leaf>Obj::new`` is public (crate-private for a final type).
- *opaque*: the struct embeds only its parent and every field is read through
  the C ABI getter; nothing allocates it.

A field the crate cannot mirror (``Optional<Any>``, ``Union``, an ``ffi.*``
key without a default mapping...) makes its type opaque and is read as
``Any``. Below a builtin parent other than ``ffi.Object`` the import section
defines header-only stand-ins carrying the parent's depth.

Every type key a binding mentions must be provided by the run: ``ffi.*`` by
the crate, a ``ty-map`` entry by a hand-written binding (whose object struct
is ``<Name>Obj``), anything else by an ``object/`` block in a processed file;
otherwise the block fails, naming what is missing. A generated type is
spelled by the module of the file holding its block: its bare name there, a
``crate::`` path elsewhere.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Dict, List, Optional, Set, Tuple

from .. import consts as C
from ..layout import Verdict, classify
from ..lib_state import object_info_from_type_key
from . import consts as C_RUST
from .utils import RustImports, builtin_mirror_name, is_crate_type_key, render_rust_type, rust_ident

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from pathlib import Path

    from ..file_utils import CodeBlock
    from ..utils import InitConfig, NamedTypeSchema, ObjectInfo, Options
    from .directives import EnumSpec

_Params = List[Tuple[str, str]]


def _call_lines(open_: str, items: List[str], close: str) -> List[str]:
    """``open_ items close`` on one line when it fits, else wrapped as rustfmt would.

    A ``let`` first moves the call to its own line; failing that, one item per line.
    """
    joined = ", ".join(items)
    line = open_ + joined + close
    if len(line) <= C_RUST.RUST_MAX_WIDTH:
        return [line]
    indent = open_[: len(open_) - len(open_.lstrip())]
    let, eq, call = open_.partition(" = ")
    moved = indent + "    " + call + joined + close
    if eq and len(moved) <= C_RUST.RUST_MAX_WIDTH:
        return [let + " =", moved]
    return [open_.rstrip(), *(f"{indent}    {item}," for item in items), indent + close.lstrip()]


def _param_type(rust_type: str) -> str:
    """A parameter type of the wrapper's allocator: scalars exactly, the rest ``impl Into``."""
    return rust_type if rust_type in C_RUST.RUST_EXACT_PARAMS else f"impl Into<{rust_type}>"


def _forward(ident: str, rust_type: str) -> str:
    """How the wrapper's allocator passes a parameter on to ``<Leaf>Obj::new``."""
    return ident if rust_type in C_RUST.RUST_EXACT_PARAMS else ident + ".into()"


def _check_width(target: str, field: NamedTypeSchema, rust_type: str, width: int) -> None:
    """``ValueError`` when a directive's scalar is not as wide as the reflected field."""
    if field.size is not None and field.size != width:
        raise ValueError(f"Directive on `{target}` maps a {field.size}-byte field to `{rust_type}` ({width} bytes)")


def _allow_non_snake_case(idents: Iterable[str]) -> List[str]:
    """The lint allowance rustc needs when an identifier is not lower case."""
    for ident in idents:
        bare = ident[2:] if ident.startswith("r#") else ident
        if bare != bare.lower():
            return ["#[allow(non_snake_case)]"]
    return []


def _by_offset(fields: List[NamedTypeSchema]) -> List[NamedTypeSchema]:
    return sorted(fields, key=lambda f: f.offset or 0)


def _join_sections(sections: List[List[str]]) -> List[str]:
    out: List[str] = []
    for section in sections:
        if out:
            out.append("")
        out.extend(section)
    return out


@dataclasses.dataclass
class _ObjectRenderer:
    """Builds the Rust lines of one ``object/<key>`` block."""

    info: ObjectInfo
    imports: RustImports
    ty_map: Dict[str, str]
    #: Module of this block's file (``src/tirx/op.rs`` is ``("crate", "tirx", "op")``).
    module: Tuple[str, ...]
    #: Every type key with an ``object/`` block in the run, to its file's module.
    declared: Mapping[str, Tuple[str, ...]]
    #: Keys the binding mentions that nothing provides (reported after rendering).
    missing: Set[str] = dataclasses.field(default_factory=set)

    @property
    def type_key(self) -> str:
        """The object's type key."""
        assert self.info.type_key is not None
        return self.info.type_key

    @property
    def leaf(self) -> str:
        """The wrapper's name: the key's last component."""
        return self.type_key.rpartition(".")[2]

    @property
    def obj_struct(self) -> str:
        """The object struct's name: ``<leaf>Obj``."""
        return self.leaf + "Obj"

    # --- naming ---------------------------------------------------------------

    def _provider(self, type_key: str) -> Optional[str]:
        """``"crate"``, ``"mapped"`` (a ``ty-map`` entry) or ``"generated"`` (a block of the
        run) for who binds ``type_key``; ``None`` (and noted as missing) for nobody."""
        if is_crate_type_key(type_key):
            return "crate"
        if type_key in self.ty_map:
            return "mapped"
        if type_key in self.declared:
            return "generated"
        self.missing.add(type_key)
        return None

    def _generated_type_path(self, type_key: str) -> str:
        """How this file names a generated type: bare in its own module, else by ``crate::`` path."""
        if type_key.partition(".")[0] in C_RUST.RUST_MOD_MAP:
            return type_key
        leaf = type_key.rpartition(".")[2]
        module = self.declared[type_key] if type_key in self.declared else self.module
        return leaf if module == self.module else "::".join((*module, leaf))

    def _record_mapped(self, type_key: str, path: str, imports: RustImports) -> str:
        """Name the ``ty-map`` target ``path``: bare when it lives in this file's module."""
        module, _, name = path.rpartition("::")
        if module == "::".join(self.module):
            return name
        return imports.record(path)

    def _resolve(self, origin: str, imports: RustImports, type_key: Optional[str] = None) -> Optional[str]:
        """The Rust name of a leaf origin (importing it), or ``None`` without a mirror.

        A ``ty-map`` entry of the key a folded origin came from wins over the origin's.
        """
        key = type_key if type_key in self.ty_map else origin
        mapped = self.ty_map.get(key)
        if mapped is not None:
            return self._record_mapped(key, mapped, imports)
        if "." not in origin or origin.startswith("ctypes."):
            return None
        if self._provider(origin) == "crate":  # an ffi.* key the defaults do not map
            return None
        return imports.record(self._generated_type_path(origin))

    def _ty_render(self, origin: str, type_key: Optional[str] = None) -> Optional[str]:
        return self._resolve(origin, self.imports, type_key)

    def _base_type(self) -> Tuple[str, bool]:
        """The struct embedded as ``base``, and whether it is a generated or mapped parent.

        A builtin parent is embedded as the crate's ``Object`` or a stand-in of its depth.
        """
        parent = self.info.parent_type_key
        if parent is not None:
            provider = self._provider(parent)
            if provider == "mapped":
                return self._record_mapped(parent, self.ty_map[parent] + "Obj", self.imports), True
            if provider != "crate":
                return self.imports.record(self._generated_type_path(parent) + "Obj"), True
        chain = [key for key in self.info.ancestors if key != C_RUST.RUST_ROOT_TYPE_KEY]
        if parent is not None and parent != C_RUST.RUST_ROOT_TYPE_KEY and parent not in chain:
            chain.append(parent)
        return self.imports.record_builtin_base(chain), False

    # --- layout ---------------------------------------------------------------

    def classify(self) -> Verdict:
        """The layout verdict of this type (with its ancestors) under the file's directives."""
        infos = {key: object_info_from_type_key(key) for key in self.info.ancestors}
        infos[self.type_key] = self.info
        owner = {id(f): key for key, info in infos.items() for f in info.fields}
        scratch = RustImports()
        unmirrored = {key for key in self.info.ancestors
                      if key != C_RUST.RUST_ROOT_TYPE_KEY and self._provider(key) == "crate"}
        verdicts = classify(
            infos,
            forced_opaque=self.imports.directives.opaque,
            unmirrored=unmirrored,
            field_renderable=lambda f: self._field_mirror(owner[id(f)], f, scratch) is not None,
        )
        return verdicts[self.type_key]

    # --- field types ------------------------------------------------------------

    def _field_mirror(self, owner: str, field: NamedTypeSchema, imports: RustImports) -> Optional[str]:
        """The in-struct Rust type of ``owner``'s ``field``, or ``None`` without one.

        Directives first; then ``Optional`` by its C++ cell; a scalar by its
        reflected width; anything else by its schema.
        """
        directives = self.imports.directives
        target = f"{owner}.{field.name}"
        enum = directives.enums.get(target)
        if enum is not None:
            _check_width(target, field, enum.repr, C_RUST.RUST_SCALAR_WIDTHS[enum.repr])
            return enum.name
        override = directives.field_types.get(target)
        if override is not None:
            width = C_RUST.RUST_SCALAR_WIDTHS.get(override)
            if width is not None:
                _check_width(target, field, override, width)
            mirror: Optional[str] = imports.record(override) if "::" in override else override
        elif field.origin == "Optional":
            mirror = self._optional_mirror(field, imports)
        else:
            mirror = C_RUST.RUST_SCALAR_BY_SIZE.get((field.origin, field.size)) or render_rust_type(
                field, lambda o, k: self._resolve(o, imports, k))
        if mirror is None or target not in directives.nullable or mirror.startswith("Option<"):
            return mirror
        if field.size not in (None, C_RUST.RUST_POINTER_SIZE):
            raise ValueError(f"`nullable` directive on `{target}`: the field is {field.size} bytes, "
                             "not a pointer-sized object reference")
        return f"Option<{mirror}>"

    def _optional_mirror(self, field: NamedTypeSchema, imports: RustImports) -> Optional[str]:
        """An ``Optional<T>`` field: ``Option<T>`` for an object (a nullable pointer),
        ``tvm_ffi::Optional<T>`` for a value in a 16-byte cell; ``None`` for
        ``Optional<Any>`` or a size that fits neither."""
        payload = field.args[0]
        if payload.origin == "Any":
            return None
        inner = render_rust_type(payload, lambda o, k: self._resolve(o, imports, k))
        if inner is None:
            return None
        in_cell = payload.origin in C_RUST.RUST_ANY_BACKED_OPTIONAL_PAYLOADS or payload.origin == "Optional"
        size = C_RUST.RUST_OPTIONAL_FIELD_SIZE if in_cell else C_RUST.RUST_OBJECT_OPTIONAL_FIELD_SIZE
        if field.size not in (None, size):
            return None
        return f"{imports.record(C_RUST.RUST_OPTIONAL_PATH)}<{inner}>" if in_cell else f"Option<{inner}>"

    # --- opaque types: getters ----------------------------------------------------

    def _accessor_lines(self, field: NamedTypeSchema) -> List[str]:
        """``pub fn <field>(&self) -> Result<T>`` through the C ABI getter (``Any`` without a type)."""
        directives = self.imports.directives
        target = f"{self.type_key}.{field.name}"
        name = rust_ident(field.name)
        getter = f'FieldGetter::new(Self::type_index(), "{field.name}")?'
        allow = _allow_non_snake_case([name])
        enum = directives.enums.get(target)
        if enum is not None:
            return [*allow, f"pub fn {name}(&self) -> Result<{enum.name}> {{",
                    f"    let raw: i64 = {getter}.get(self)?;", f"    {enum.name}::try_from(raw)", "}"]
        override = directives.field_types.get(target)
        if override is not None:
            rust_type = self.imports.record(override) if "::" in override else override
        elif field.origin == "Any":
            rust_type = None  # read as `Any` through `get_any`
        else:
            rust_type = render_rust_type(field, self._ty_render)
        if rust_type is None:
            any_type = self.imports.record("tvm_ffi::Any")
            return [*allow, f"pub fn {name}(&self) -> Result<{any_type}> {{", f"    {getter}.get_any(self)", "}"]
        if target in directives.nullable and not rust_type.startswith("Option<"):
            rust_type = f"Option<{rust_type}>"
        return [*allow, f"pub fn {name}(&self) -> Result<{rust_type}> {{", f"    {getter}.get(self)", "}"]

    def _enum_lines(self, spec: EnumSpec) -> List[str]:
        """The integer newtype of an ``enum`` directive, with its constants and checked conversion."""
        error = self.imports.record("tvm_ffi::Error")
        value_error = self.imports.record("tvm_ffi::VALUE_ERROR")
        result = self.imports.record("tvm_ffi::Result")
        message = f'&format!("{spec.name} value {{value}} does not fit {spec.repr}")'
        return [
            "#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]",
            "#[repr(transparent)]",
            f"pub struct {spec.name}({spec.repr});",
            "",
            "#[allow(non_upper_case_globals)]",
            f"impl {spec.name} {{",
            *(f"    pub const {member}: Self = Self({value});" for member, value in spec.members),
            f"    pub const fn from_raw(value: {spec.repr}) -> Self {{",
            "        Self(value)",
            "    }",
            f"    pub const fn as_raw(self) -> {spec.repr} {{",
            "        self.0",
            "    }",
            "}",
            "",
            f"impl TryFrom<i64> for {spec.name} {{",
            f"    type Error = {error};",
            f"    fn try_from(value: i64) -> {result}<Self> {{",
            f"        {spec.repr}::try_from(value).map(Self).map_err(|_| {{",
            f'            {error}::new({value_error}, {message}, "")',
            "        })",
            "    }",
            "}",
        ]

    # --- shared pieces ------------------------------------------------------------

    def _deref_lines(self, source: str, target: str, member: str) -> List[str]:
        return [
            f"impl Deref for {source} {{",
            f"    type Target = {target};",
            f"    fn deref(&self) -> &{target} {{",
            f"        &self.{member}",
            "    }",
            "}",
        ]

    def _upcast_lines(self) -> List[str]:
        """``impl_object_upcast!`` to each non-builtin ancestor's wrapper and each ``upcast`` view."""
        targets: List[str] = []
        for key in self.info.ancestors:
            provider = self._provider(key)
            if provider == "mapped":
                targets.append(self._record_mapped(key, self.ty_map[key], self.imports))
            elif provider != "crate":
                targets.append(self.imports.record(self._generated_type_path(key)))
        for view in self.imports.directives.upcasts.get(self.type_key, []):
            targets.append(self.imports.record(view) if "::" in view else view)
        if not targets:
            return []
        return [f"tvm_ffi::impl_object_upcast!({', '.join(f'{self.leaf} => {t}' for t in targets)});"]

    def _struct_lines(self, verdict: Verdict, base: str) -> List[str]:
        """The object struct: every field when complete, the parent alone when opaque."""
        head = [
            "#[repr(C)]",
            "#[derive(tvm_ffi::derive::Object)]",
            f'#[type_key = "{self.type_key}"]',
            *(["#[type_final]"] if self.info.is_final else []),
            f"pub struct {self.obj_struct} {{",
            f"    base: {base},",
        ]
        if not verdict.is_complete:
            return [f"/// Opaque: {verdict.detail}. Fields are read through the C ABI getters.", *head, "}"]
        members = []
        for field in _by_offset(self.info.fields):
            mirror = self._field_mirror(self.type_key, field, self.imports)
            assert mirror is not None  # the verdict checked every field
            members.append(f"    pub {rust_ident(field.name)}: {mirror},")
        return [
            f"/// Complete: {verdict.detail}.",
            *_allow_non_snake_case(rust_ident(f.name) for f in self.info.fields),
            *head,
            *members,
            "}",
            "",
            "const _: () = {",
            f"    assert!(::core::mem::size_of::<{self.obj_struct}>() == {verdict.total_size});",
            f"    assert!(::core::mem::align_of::<{self.obj_struct}>() == {verdict.alignment});",
            "};",
        ]

    # --- complete types: allocators ---------------------------------------------------

    def _allocator_params(self, key: str, info: ObjectInfo) -> _Params:
        """``(field, type)`` of every field from the first non-builtin ancestor down to ``key``."""
        parent = info.parent_type_key
        inherited: _Params = []
        if parent is not None and self._provider(parent) != "crate":
            inherited = self._allocator_params(parent, object_info_from_type_key(parent))
        return self._level_params(key, info, inherited)

    def _level_params(self, key: str, info: ObjectInfo, inherited: _Params) -> _Params:
        """The parent's parameters (narrowed by ``key``'s ``field`` directives), then ``key``'s own fields."""
        params = [(name, self._narrowed(key, name, rust_type)) for name, rust_type in inherited]
        for field in _by_offset(info.fields):
            mirror = self._field_mirror(key, field, self.imports)
            assert mirror is not None  # only complete types get allocators
            params.append((field.name, mirror))
        return params

    def _narrowed(self, key: str, field_name: str, rust_type: str) -> str:
        override = self.imports.directives.field_types.get(f"{key}.{field_name}")
        if override is None:
            return rust_type
        return self.imports.record(override) if "::" in override else override

    def _fn_lines(
        self, head: str, params: _Params, call: Tuple[str, List[str]], init: List[str], *, generic: bool = False
    ) -> List[str]:
        """An allocator inside an ``impl``: ``<head>(params) -> Self { let <call>; Self { init } }``."""
        plist = [f"{rust_ident(n)}: {_param_type(t) if generic else t}" for n, t in params]
        binding, args = call
        return [
            *("    " + line for line in _allow_non_snake_case(rust_ident(n) for n, _ in params)),
            *_call_lines(f"    {head}(", plist, ") -> Self {"),
            *_call_lines(f"        let {binding}(", args, ");"),
            *_call_lines("        Self { ", init, " }"),
            "    }",
        ]

    def _allocator_sections(self, base: str, has_parent: bool) -> List[List[str]]:
        """``<Leaf>Obj::new`` (fields as their own types, the parent's part handed
        to the parent's ``new``) and the wrapper's ``new`` (or ``from_fields``)."""
        inherited: _Params = []
        if has_parent:
            parent = self.info.parent_type_key
            assert parent is not None
            inherited = self._allocator_params(parent, object_info_from_type_key(parent))
        params = self._level_params(self.type_key, self.info, inherited)
        to_parent = [rust_ident(name) if mine == theirs else rust_ident(name) + ".into()"
                     for (name, mine), (_, theirs) in zip(params, inherited)]
        own = [rust_ident(name) for name, _ in params[len(inherited):]]
        forward = [_forward(rust_ident(name), rust_type) for name, rust_type in params]
        obj_new = "pub(crate) fn new" if self.info.is_final else "pub fn new"
        wrapper_new = "pub fn from_fields" if self.type_key in self.imports.directives.custom_new else "pub fn new"
        return [
            [f"impl {self.obj_struct} {{",
             *self._fn_lines(obj_new, params, (f"base = {base}::new", to_parent), ["base", *own]),
             "}"],
            [f"impl {self.leaf} {{",
             "    /// Lossless complete-field allocation.",
             *self._fn_lines(wrapper_new, params, (f"obj = {self.obj_struct}::new", forward),
                             ["base: ObjectArc::new(obj)"], generic=True),
             "}"],
        ]

    def _shallow_copy_lines(self) -> Optional[List[str]]:
        """``ShallowCopy`` (parent's copy, then a clone of each field) for a non-final type
        whose ancestors below ``ffi.Object`` are all generated; ``None`` otherwise."""
        if self.info.is_final:
            return None
        if any(self._provider(key) != "generated"
               for key in self.info.ancestors if key != C_RUST.RUST_ROOT_TYPE_KEY):
            return None
        trait = self.imports.record("tvm_ffi::ShallowCopy")
        init = [f"base: {trait}::shallow_copy(&self.base)"]
        init += [f"{n}: Clone::clone(&self.{n})" for n in (rust_ident(f.name) for f in _by_offset(self.info.fields))]
        return [
            f"impl {trait} for {self.obj_struct} {{",
            "    fn shallow_copy(&self) -> Self {",
            *_call_lines("        Self { ", init, " }"),
            "    }",
            "}",
        ]

    def _unsafe_init_lines(self) -> List[str]:
        """``UnsafeInit``: drop the defined fields of an all-zero object, parent first.

        A ``TVMFFIAny`` cell (``Any``, a non-pointer ``Optional``) drops as is;
        an enum newtype needs nothing; anything else goes through ``drop_if_defined``.
        """
        trait = self.imports.record("tvm_ffi::UnsafeInit")
        addr = self.imports.record("std::ptr::addr_of_mut")
        directives = self.imports.directives
        drops = [f"{trait}::drop_defined_fields({addr}!((*this).base));"]
        for field in _by_offset(self.info.fields):
            target = f"{self.type_key}.{field.name}"
            if target in directives.enums:
                continue
            mirror = self._field_mirror(self.type_key, field, self.imports)
            assert mirror is not None
            in_cell = target not in directives.field_types and (
                field.origin == "Any" or (field.origin == "Optional" and not mirror.startswith("Option<")))
            drop = self.imports.record("std::ptr::drop_in_place" if in_cell else "tvm_ffi::reflection::drop_if_defined")
            drops.append(f"{drop}({addr}!((*this).{rust_ident(field.name)}));")
        return [
            f"unsafe impl {trait} for {self.obj_struct} {{",
            "    unsafe fn drop_defined_fields(this: *mut Self) {",
            "        unsafe {",
            *("            " + line for line in drops),
            "        }",
            "    }",
            "}",
        ]

    # --- the whole block ----------------------------------------------------------

    def body(self) -> List[str]:
        """The block's lines."""
        self.imports.reserved.update((self.leaf, self.obj_struct))
        verdict = self.classify()
        self.imports.record("std::ops::Deref")
        self.imports.record("tvm_ffi::ObjectArc")
        base, has_parent = self._base_type()
        fields = self.info.fields
        getters = bool(fields) and not verdict.is_complete
        if getters:
            for path in ("tvm_ffi::ObjectCore", "tvm_ffi::FieldGetter", "tvm_ffi::Result"):
                self.imports.record(path)
        enums = self.imports.directives.enums
        sections = [self._enum_lines(enums[f"{self.type_key}.{f.name}"])
                    for f in fields if f"{self.type_key}.{f.name}" in enums]
        sections.append(self._struct_lines(verdict, base))
        sections.append([
            "#[repr(C)]",
            "#[derive(tvm_ffi::derive::ObjectRef, Clone)]",
            f"pub struct {self.leaf} {{",
            f"    base: ObjectArc<{self.obj_struct}>,",
            "}",
        ])
        sections.append(self._deref_lines(self.leaf, self.obj_struct, "base"))
        if has_parent:
            sections.append(self._deref_lines(self.obj_struct, base, "base"))
        if getters:
            accessors = _join_sections([self._accessor_lines(f) for f in fields])
            sections.append([f"impl {self.obj_struct} {{", *("    " + l if l else "" for l in accessors), "}"])
        elif verdict.is_complete:
            sections += self._allocator_sections(base, has_parent)
            shallow_copy = self._shallow_copy_lines()
            if shallow_copy:
                sections += [shallow_copy, self._unsafe_init_lines()]
        upcasts = self._upcast_lines()
        if upcasts:
            sections.append(upcasts)
        return _join_sections(sections)


def _indented(code: CodeBlock, body: List[str]) -> List[str]:
    pad = " " * code.indent
    return [code.lines[0], *(pad + line if line else "" for line in body), code.lines[-1]]


def generate_rust_object(
    code: CodeBlock,
    ty_map: Dict[str, str],
    imports: RustImports,
    opt: Options,
    obj_info: ObjectInfo,
    declared: Mapping[str, Tuple[str, ...]],
) -> None:
    """Fill an ``object/<key>`` block with the binding of ``obj_info``.

    ``declared`` maps every key with an ``object/`` block in the run (this
    one's included) to its file's module. ``ValueError`` when the binding
    needs a key the run does not provide.
    """
    assert len(code.lines) >= 2 and isinstance(obj_info.type_key, str)
    renderer = _ObjectRenderer(info=obj_info, imports=imports, ty_map=ty_map,
                               module=declared[obj_info.type_key], declared=declared)
    body = renderer.body()
    if renderer.missing:
        keys = ", ".join(f"`{key}`" for key in sorted(renderer.missing))
        raise ValueError(
            f"`{obj_info.type_key}` (line {code.lineno_start}) depends on {keys}, which this run "
            "does not ask for: add an `object/<key>` block or a `ty-map` directive for each"
        )
    code.lines = _indented(code, body)


def _builtin_mirror_lines(type_key: str, base: str) -> List[str]:
    """The header-only stand-in struct for builtin ancestor ``type_key``."""
    return [
        f"/// Header-only stand-in for the builtin `{type_key}`; it only carries the ancestor depth.",
        "#[allow(dead_code)]",
        "#[repr(C)]",
        "#[derive(tvm_ffi::derive::Object)]",
        f'#[type_key = "{type_key}"]',
        f"struct {builtin_mirror_name(type_key)} {{",
        f"    base: {base},",
        "}",
    ]


def generate_rust_import_section(
    code: CodeBlock, imports: RustImports, opt: Options, defined_types: Set[str]
) -> None:
    """Fill ``import-section``: the sorted ``use`` lines (less the file's own types),
    then the builtin stand-ins."""
    assert len(code.lines) >= 2
    body = sorted({item.as_use_line() for item in imports.items if item.path not in defined_types})
    for type_key, base in imports.builtin_mirrors.items():
        body += ["", *_builtin_mirror_lines(type_key, base)]
    code.lines = _indented(code, body)


def generate_rust_api_file(
    code_blocks: List[CodeBlock],
    ty_map: Dict[str, str],
    module_name: str,
    object_infos: List[ObjectInfo],
    init_cfg: InitConfig,
    is_root: bool,
    syntax: C.MarkerSyntax,
) -> str:
    """Text to append to a prefix's ``mod.rs``: a header for a new file, an
    import section and an ``object/`` block per type the file lacks."""
    out: List[str] = []
    if not code_blocks:
        out.append("#![allow(dead_code, unused_imports)]\n")
        out.append(f"\n//! FFI bindings for `{module_name}` (generated by tvm-ffi-stubgen).\n\n")
    if not any(c.kind == "import-section" for c in code_blocks):
        out.append(f"{syntax.begin} import-section\n{syntax.end}\n\n")
    present = {c.param for c in code_blocks if c.kind == "object"}
    for info in object_infos:
        if info.type_key is not None and info.type_key not in present:
            out.append(f"{syntax.begin} object/{info.type_key}\n{syntax.end}\n\n")
    return "".join(out)


def finalize_rust_module_tree(init_path: Path, prefixes: Set[str]) -> None:
    """Declare each scaffolded prefix with ``pub mod`` in its parent's ``mod.rs``
    (created when missing); ``init_path`` itself is mounted by the user."""
    children: Dict[Path, Set[str]] = {}
    for prefix in prefixes:
        segments = [s for s in prefix.split(".") if s]
        for depth, segment in enumerate(segments):
            children.setdefault(init_path.joinpath(*segments[:depth]), set()).add(segment)
    for parent, names in children.items():
        parent.mkdir(parents=True, exist_ok=True)
        mod_rs = parent / "mod.rs"
        text = mod_rs.read_text(encoding="utf-8") if mod_rs.exists() else ""
        new = [f"pub mod {name};" for name in sorted(names) if f"pub mod {name};" not in text]
        if not new:
            continue
        if text and not text.endswith("\n"):
            text += "\n"
        if text.strip():
            text += "\n"
        mod_rs.write_text(text + "\n".join(new) + "\n", encoding="utf-8")
