""":class:`RustGenerator`: the Rust target behind ``--target rust``.

It adapts the :class:`tether.stub.generator.Generator` calls to
:mod:`.codegen`, owns the per-file ``use`` collector and directives, and
names generated types by the module of the file their block is in.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Dict, List, Set, Tuple

from .. import consts as C
from . import consts as C_RUST
from .codegen import finalize_rust_module_tree, generate_rust_api_file, generate_rust_import_section, generate_rust_object
from .utils import RustImports, RustUse, check_tokens, is_crate_type_key, rust_module_path

if TYPE_CHECKING:
    from pathlib import Path

    from ..file_utils import CodeBlock
    from ..utils import FuncInfo, InitConfig, ObjectInfo, Options


class _DeclaredModules(Mapping):
    """Type key of each ``object/`` block of the run -> the module of its file (computed on lookup)."""

    def __init__(self, files: Mapping) -> None:
        self._files = files

    def __getitem__(self, type_key: str) -> Tuple[str, ...]:
        return rust_module_path(self._files[type_key])

    def __contains__(self, type_key: object) -> bool:
        return type_key in self._files

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


class RustGenerator:
    """Rust bindings of reflected objects for the ``tvm_ffi`` crate (see :mod:`.codegen`)."""

    name = "rust"
    syntax = C.RUST_SYNTAX
    source_exts = frozenset({".rs"})
    directive_kinds = C_RUST.RUST_DIRECTIVE_KINDS

    def default_ty_map(self) -> Dict[str, str]:
        """A copy of :data:`.consts.RUST_TY_MAP_DEFAULTS`."""
        return dict(C_RUST.RUST_TY_MAP_DEFAULTS)

    def new_imports(self) -> RustImports:
        """An empty collector."""
        return RustImports()

    def add_directive(self, imports: RustImports, name: str, payload: str, lineno: int) -> None:
        """``import-object`` adds a ``use`` of its first ``;`` field; the rest are parsed as directives."""
        if name == "import-object":
            imports.record(payload.split(";", 1)[0].strip())
        else:
            imports.directives.add(name, payload, lineno)

    def canonical_type_name(self, type_key: str) -> str:
        """The path of a defined type, comparable with :attr:`RustUse.path`."""
        return RustUse(type_key).path

    def extra_export_names(self, imports: RustImports) -> Set[str]:
        """None."""
        return set()

    def is_builtin(self, type_key: str) -> bool:
        """Whether the crate binds ``type_key`` (every ``ffi.*`` key)."""
        return is_crate_type_key(type_key)

    def check_view(self, code_blocks: List[CodeBlock]) -> Dict[tuple, Tuple[str, ...]]:
        """The tokens of each object block and the import section (see :func:`.utils.check_tokens`).

        So a run that only changes ``use`` lines, comments, wrapping or module
        qualifiers leaves a file up to date.
        """
        view: Dict[tuple, Tuple[str, ...]] = {}
        for code in code_blocks:
            if code.kind in ("object", "import-section"):
                tokens = check_tokens(code.lines[1:-1])
                if tokens:
                    view[(code.kind, code.param)] = tokens
        return view

    def generate_global_funcs_block(
        self, code: CodeBlock, global_funcs: List[FuncInfo], ty_map: Dict[str, str], imports: RustImports,
        opt: Options,
    ) -> None:
        """Nothing: Rust code calls global functions through ``cached_global_func!``."""

    def generate_object_block(
        self, code: CodeBlock, ty_map: Dict[str, str], imports: RustImports, opt: Options, obj_info: ObjectInfo,
        declared: Mapping[str, Path],
    ) -> None:
        """See :func:`.codegen.generate_rust_object`."""
        generate_rust_object(code, ty_map, imports, opt, obj_info, _DeclaredModules(declared))

    def generate_import_section_block(
        self, code: CodeBlock, imports: RustImports, opt: Options, defined_types: Set[str]
    ) -> None:
        """See :func:`.codegen.generate_rust_import_section`."""
        generate_rust_import_section(code, imports, opt, defined_types)

    def generate_all_block(self, code: CodeBlock, names: Set[str], opt: Options) -> None:
        """Nothing: Rust has no ``__all__``."""

    def generate_export_block(self, code: CodeBlock) -> None:
        """Nothing: submodules are declared by ``--init``'s ``pub mod`` lines."""

    def generate_helpers_block(self, code: CodeBlock, opt: Options) -> None:
        """Nothing: the bindings need no per-file support code."""

    def api_filename(self) -> str:
        """``mod.rs``: one file per prefix."""
        return "mod.rs"

    def init_filename(self) -> str:
        """``mod.rs``: the bindings file is the module."""
        return "mod.rs"

    def generate_api_file(
        self, code_blocks: List[CodeBlock], ty_map: Dict[str, str], module_name: str,
        object_infos: List[ObjectInfo], init_cfg: InitConfig, is_root: bool,
    ) -> str:
        """See :func:`.codegen.generate_rust_api_file`."""
        return generate_rust_api_file(code_blocks, ty_map, module_name, object_infos, init_cfg, is_root,
                                      self.syntax)

    def generate_init_file(self, code_blocks: List[CodeBlock], module_name: str, submodule: str) -> str:
        """Nothing: the bindings file is the module."""
        return ""

    def finalize_init(self, init_path: Path, generated_prefixes: Set[str]) -> None:
        """Declare the scaffolded modules (see :func:`.codegen.finalize_rust_module_tree`)."""
        finalize_rust_module_tree(init_path, generated_prefixes)
