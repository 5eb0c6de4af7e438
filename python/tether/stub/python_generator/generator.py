""":class:`PythonGenerator`: the Python target behind ``--target python``.

It adapts the :class:`tether.stub.generator.Generator` calls to the
functions of :mod:`.codegen`, and owns the Python import collector.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Set

from .. import consts as C
from . import codegen as G
from . import consts as PC
from .utils import ImportItem, PythonImports

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from ..file_utils import CodeBlock
    from ..utils import FuncInfo, InitConfig, ObjectInfo, Options


class PythonGenerator:
    """Python type stubs inside ``.py`` and ``.pyi`` files."""

    name = "python"
    syntax = C.PYTHON_SYNTAX
    source_exts = frozenset({".py", ".pyi"})
    directive_kinds = frozenset({"import-object"})

    def default_ty_map(self) -> Dict[str, str]:
        """A copy of :data:`.consts.TY_MAP_DEFAULTS`, in the runtime package's names."""
        return {k: PC.in_runtime(v) for k, v in PC.TY_MAP_DEFAULTS.items()}

    def new_imports(self) -> PythonImports:
        """An empty collector."""
        return PythonImports()

    def add_directive(self, imports: PythonImports, name: str, payload: str, lineno: int) -> None:
        """Record ``import-object: <module.name>[;<type checking only>[;<alias>]]``."""
        if name != "import-object":
            raise ValueError(f"Unknown directive `{name}` at line {lineno}")
        full_name, checking_only, alias = ([part.strip() for part in payload.split(";")] + ["", ""])[:3]
        imports.items.append(ImportItem(full_name, type_checking_only=checking_only.lower() == "true",
                                        alias=alias or None))
        if alias == "_FFI_LOAD_LIB" or full_name.endswith("libinfo.load_lib_module"):
            imports.has_lib_load = True

    def canonical_type_name(self, type_key: str) -> str:
        """The import name of a type the file defines (so it is not imported too)."""
        return ImportItem(type_key).full_name

    def extra_export_names(self, imports: PythonImports) -> Set[str]:
        """``LIB`` when the file loads the library."""
        return {"LIB"} if imports.has_lib_load else set()

    def is_builtin(self, type_key: str) -> bool:
        """Whether tether defines the class of ``type_key`` itself."""
        return type_key in C.BUILTIN_TYPE_KEYS

    def check_view(self, code_blocks: List[CodeBlock]) -> tuple:
        """The whole text: any change makes the file stale."""
        return tuple(line for code in code_blocks for line in code.lines)

    def generate_global_funcs_block(
        self, code: CodeBlock, global_funcs: List[FuncInfo], ty_map: Dict[str, str], imports: PythonImports,
        opt: Options,
    ) -> None:
        """See :func:`.codegen.generate_python_global_funcs`."""
        G.generate_python_global_funcs(code, global_funcs, ty_map, imports.items, opt)

    def generate_object_block(
        self, code: CodeBlock, ty_map: Dict[str, str], imports: PythonImports, opt: Options, obj_info: ObjectInfo,
        declared: Mapping[str, Path],
    ) -> None:
        """See :func:`.codegen.generate_python_object`."""
        G.generate_python_object(code, ty_map, imports.items, opt, obj_info)

    def generate_import_section_block(
        self, code: CodeBlock, imports: PythonImports, opt: Options, defined_types: Set[str]
    ) -> None:
        """The collected imports, less the types this file defines."""
        G.generate_python_import_section(code, [i for i in imports.items if i.full_name not in defined_types], opt)

    def generate_all_block(self, code: CodeBlock, names: Set[str], opt: Options) -> None:
        """See :func:`.codegen.generate_python_all`."""
        G.generate_python_all(code, names, opt)

    def generate_export_block(self, code: CodeBlock) -> None:
        """See :func:`.codegen.generate_python_export`."""
        G.generate_python_export(code)

    def generate_helpers_block(self, code: CodeBlock, opt: Options) -> None:
        """Nothing: Python files need no helper block."""

    def api_filename(self) -> str:
        """``_ffi_api.py``."""
        return "_ffi_api.py"

    def init_filename(self) -> str:
        """``__init__.py``."""
        return "__init__.py"

    def generate_api_file(
        self, code_blocks: List[CodeBlock], ty_map: Dict[str, str], module_name: str,
        object_infos: List[ObjectInfo], init_cfg: InitConfig, is_root: bool,
    ) -> str:
        """See :func:`.codegen.generate_python_ffi_api`."""
        return G.generate_python_ffi_api(code_blocks, ty_map, module_name, object_infos, init_cfg, is_root,
                                         self.syntax)

    def generate_init_file(self, code_blocks: List[CodeBlock], module_name: str, submodule: str) -> str:
        """See :func:`.codegen.generate_python_init`."""
        return G.generate_python_init(code_blocks, module_name, submodule, self.syntax)

    def finalize_init(self, init_path: Path, generated_prefixes: Set[str]) -> None:
        """Nothing: Python packages need no wiring between parent and child."""
