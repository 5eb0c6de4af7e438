"""The target-language seam of the stub generator.

The pipeline (:mod:`.cli`) reads the registry and the marked files without
knowing any target language; everything that produces text, and the notion
of an import, belongs to a :class:`Generator`. The pipeline only creates a
generator's import collector, hands it the directives the generator claims,
and passes it back when rendering. Targets are looked up by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, FrozenSet, List, Protocol, Set

from . import consts as C
from .python_generator import PythonGenerator
from .rust_generator import RustGenerator

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from .file_utils import CodeBlock
    from .utils import FuncInfo, InitConfig, ObjectInfo, Options


class Generator(Protocol):
    """What a target language provides to the pipeline.

    ``*_block`` methods rewrite ``code.lines`` in place (the marker lines stay
    first and last); ``*_file`` methods return text that ``--init`` appends to
    scaffolded files. A generator keeps no state between files; the
    ``imports`` collector it creates is private to it.
    """

    #: Target name (``--target``).
    name: str
    #: Lower-case extensions (with the dot) a directory walk visits for this target.
    source_exts: FrozenSet[str]
    #: Marker syntax of the files this target writes.
    syntax: C.MarkerSyntax
    #: One-line directive names this target reads (besides the pipeline's own).
    directive_kinds: FrozenSet[str]

    def default_ty_map(self) -> Dict[str, str]:
        """Initial mapping from schema origins / type keys to target type names."""
        ...

    def new_imports(self) -> Any:
        """A fresh import collector for one file."""
        ...

    def add_directive(self, imports: Any, name: str, payload: str, lineno: int) -> None:
        """Record directive ``name`` (one of :attr:`directive_kinds`) of the current file."""
        ...

    def canonical_type_name(self, type_key: str) -> str:
        """The name under which a type defined in a file shows up among its imports."""
        ...

    def extra_export_names(self, imports: Any) -> Set[str]:
        """Export names the collected imports add (besides functions and types)."""
        ...

    def is_builtin(self, type_key: str) -> bool:
        """Whether the target's runtime binds ``type_key`` itself (no block is made for it)."""
        ...

    def check_view(self, code_blocks: List[CodeBlock]) -> object:
        """What ``--check`` compares before and after a run."""
        ...

    def generate_global_funcs_block(
        self, code: CodeBlock, global_funcs: List[FuncInfo], ty_map: Dict[str, str], imports: Any, opt: Options
    ) -> None:
        """Fill a ``global/<prefix>`` region with the functions under the prefix."""
        ...

    def generate_object_block(
        self,
        code: CodeBlock,
        ty_map: Dict[str, str],
        imports: Any,
        opt: Options,
        obj_info: ObjectInfo,
        declared: Mapping[str, Path],
    ) -> None:
        """Fill an ``object/<key>`` region; ``declared`` maps every run's object key to its file."""
        ...

    def generate_import_section_block(
        self, code: CodeBlock, imports: Any, opt: Options, defined_types: Set[str]
    ) -> None:
        """Fill the ``import-section`` region, leaving out types the file defines."""
        ...

    def generate_all_block(self, code: CodeBlock, names: Set[str], opt: Options) -> None:
        """Fill the ``__all__`` region with ``names``."""
        ...

    def generate_export_block(self, code: CodeBlock) -> None:
        """Fill an ``export/<submodule>`` region with a re-export of the submodule."""
        ...

    def generate_helpers_block(self, code: CodeBlock, opt: Options) -> None:
        """Fill a per-file helper region, for targets that need one."""
        ...

    def api_filename(self) -> str:
        """Name of the file ``--init`` scaffolds for a prefix's bindings."""
        ...

    def init_filename(self) -> str:
        """Name of the package-entry file ``--init`` scaffolds."""
        ...

    def generate_api_file(
        self,
        code_blocks: List[CodeBlock],
        ty_map: Dict[str, str],
        module_name: str,
        object_infos: List[ObjectInfo],
        init_cfg: InitConfig,
        is_root: bool,
    ) -> str:
        """Text appended to the scaffolded bindings file of ``module_name``."""
        ...

    def generate_init_file(self, code_blocks: List[CodeBlock], module_name: str, submodule: str) -> str:
        """Text appended to the scaffolded package entry of ``module_name``."""
        ...

    def finalize_init(self, init_path: Path, generated_prefixes: Set[str]) -> None:
        """Wire the scaffolded tree together once every file is written."""
        ...


_GENERATORS: Dict[str, Generator] = {
    "python": PythonGenerator(),
    "rust": RustGenerator(),
}


def generator_names() -> List[str]:
    """The target names, sorted."""
    return sorted(_GENERATORS)


def get_generator(target: str) -> Generator:
    """The generator of ``target``; ``ValueError`` naming the known ones otherwise."""
    try:
        return _GENERATORS[target]
    except KeyError:
        known = ", ".join(generator_names())
        raise ValueError(f"Unknown stubgen generator: {target!r}. Known generators: {known}") from None
