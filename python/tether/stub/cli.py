"""``tether-stub``: fill marked regions of source files from the registry.

The command follows the ``tvm-ffi-stubgen`` protocol. Marker comments (``#``
in Python, ``//`` in Rust) delimit the regions a run rewrites::

    # tvm-ffi-stubgen(begin): global/<prefix>[@<module>]   the prefix's functions
    # tvm-ffi-stubgen(begin): object/<type key>             one type's members
    # tvm-ffi-stubgen(begin): import-section                imports they need
    # tvm-ffi-stubgen(begin): __all__                        exported names
    # tvm-ffi-stubgen(begin): export/<submodule>             re-export of a submodule
    # tvm-ffi-stubgen(end)

and one-line directives steer it: ``ty-map: A.B -> C.D`` renames a type,
``prefix: <prefix>`` adds an ``object/`` region for every registered type
under the prefix (``skip: <key>`` leaves one out), ``import-object`` adds an
import, and the Rust target reads more (:mod:`.rust_generator.directives`).
A file with ``tvm-ffi-stubgen(skip-file)`` is left alone.

A run loads ``--imports`` modules and ``--dlls`` libraries, then: reads the
``ty-map`` directives of every file; with ``--init-*``, scaffolds the files
of each prefix not covered yet; rolls out ``prefix`` directives; fills every
region; and with ``--coverage-out`` writes the layout coverage report. Exit
status: 0, 1 when ``--check`` finds a stale file, 2 when a file failed.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Set

from ..core import _object_type_key_to_index
from . import consts as C
from .file_utils import CodeBlock, FileInfo, collect_files, syntax_for
from .generator import generator_names, get_generator
from .layout import classify, write_coverage_report
from .lib_state import collect_global_funcs, collect_type_keys, object_info_from_type_key, toposort_objects
from .utils import FuncInfo, InitConfig, Options
from .python_generator.consts import set_runtime_package

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .generator import Generator


def _fail(path: object, message: str) -> None:
    print(f'{C.TERM_RED}[Failed] File "{path}": {message}{C.TERM_RESET}')


def __main__(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command on ``argv`` (``sys.argv[1:]`` by default); return the exit status.

    0 on success, 1 when ``--check`` found a file whose regions are out of
    date, 2 when a path or a file failed.
    """
    opt = _parse_args(argv)
    generator = get_generator(opt.target)
    for module in opt.imports:
        importlib.import_module(module)
    dlls = [ctypes.CDLL(lib) for lib in opt.dlls]
    failed = 0
    for name in opt.files:
        if not Path(name).exists():
            failed += 1
            _fail(name, "no such file or directory")
    files: List[FileInfo] = collect_files([Path(f) for f in opt.files], generator.source_exts)
    global_funcs = collect_global_funcs()
    init_path: Optional[Path] = None
    if opt.files:
        init_path = Path(opt.files[0]).resolve()
        if init_path.is_file():
            init_path = init_path.parent

    # 1. `ty-map` directives of every file apply to the whole run.
    ty_map = generator.default_ty_map()
    for file in files:
        try:
            _stage_1(file, ty_map)
        except Exception:  # noqa: BLE001 - report and go on with the other files
            failed += 1
            _fail(file.path, traceback.format_exc())

    # 2. `--init`: scaffold the files of prefixes no file covers yet.
    generated_prefixes: Set[str] = set()
    if opt.init:
        assert init_path is not None, "init-path could not be determined"
        generated_prefixes = _stage_2(files, ty_map, init_cfg=opt.init, init_path=init_path,
                                      global_funcs=global_funcs, generator=generator)

    # `--check` compares against the files as they are before any region is filled.
    before = {file.path: generator.check_view(file.code_blocks) for file in files} if opt.check else {}

    # 2b. `prefix` directives ask for one `object/` region per registered type.
    failed += _roll_out_prefixes(files, generator)

    # 3. Fill every region.
    declared = _declared_objects(files)
    stale = 0
    for file in files:
        if opt.verbose:
            print(f"{C.TERM_CYAN}[File] {file.path}{C.TERM_RESET}")
        try:
            changed = _stage_3(file, opt, ty_map, global_funcs, generator=generator, declared=declared)
        except Exception:  # noqa: BLE001
            failed += 1
            _fail(file.path, traceback.format_exc())
            continue
        if changed and opt.check and generator.check_view(file.code_blocks) != before[file.path]:
            stale += 1
            print(f"{C.TERM_YELLOW}[Stale] {file.path}{C.TERM_RESET}")

    # 4. Let the target wire the scaffolded tree together.
    if opt.init and generated_prefixes:
        assert init_path is not None
        generator.finalize_init(init_path, generated_prefixes)

    if opt.coverage_out is not None:
        infos = {key: object_info_from_type_key(key) for keys in collect_type_keys().values() for key in keys}
        write_coverage_report(Path(opt.coverage_out), classify(infos))
    del dlls
    return 2 if failed else 1 if stale else 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Console entry point (``tether-stub``): same as :func:`__main__`."""
    return __main__(argv)


def _stage_1(file: FileInfo, ty_map: Dict[str, str]) -> None:
    """Add the file's ``ty-map: <from> -> <to>`` directives to ``ty_map``."""
    for code in file.code_blocks:
        if code.kind != "directive" or code.param[0] != "ty-map":
            continue
        lhs, arrow, rhs = code.param[1].partition("->")
        if not arrow or "->" in rhs:
            raise ValueError(f"Invalid ty_map format at line {code.lineno_start}. Example: `A.B -> C.D`")
        ty_map[lhs.strip()] = rhs.strip()


def _roll_out_prefixes(files: List[FileInfo], generator: Generator) -> int:
    """Give a file with a ``prefix: <p>`` directive an ``object/`` region per type under ``<p>``.

    Types that have a region in any file of the run, that a ``skip``
    directive names, or that the target's runtime binds get none; an import
    section is added when the file has none; a region under the prefix whose
    type is no longer registered is dropped. Returns how many files failed
    (two ``prefix`` directives, or a prefix another file already claims).
    """
    present = {code.param for file in files for code in file.code_blocks if code.kind == "object"}
    registry = collect_type_keys()
    owners: Dict[str, Path] = {}
    failed = 0
    for file in files:
        directives = [c for c in file.code_blocks if c.kind == "directive"]
        heads = [c for c in directives if c.param[0] == "prefix"]
        if not heads:
            continue
        head = heads[0]
        prefix = head.param[1].rstrip(".")
        if len(heads) > 1:
            failed += 1
            _fail(file.path, f"more than one `prefix` directive (line {heads[1].lineno_start})")
            continue
        if owners.setdefault(prefix, file.path) != file.path:
            failed += 1
            _fail(file.path, f"prefix `{prefix}` is already declared by {owners[prefix]}")
            continue
        _remove_unregistered_blocks(file, prefix, registry.get(prefix, []))
        if prefix not in registry:
            print(f"{C.TERM_YELLOW}[Skipped] No registered object under prefix `{prefix}`{C.TERM_RESET}")
            continue
        skipped = {c.param[1].strip() for c in directives if c.param[0] == "skip"}
        keys = [k for k in registry[prefix] if k not in present and k not in skipped and not generator.is_builtin(k)]
        blocks = file.code_blocks
        if not any(c.kind == "import-section" for c in blocks):
            at = blocks.index(head) + 1
            blocks[at:at] = _new_blocks(file.syntax, head.lineno_start, "import-section")
        at = 1 + max(i for i, c in enumerate(blocks) if c.kind in ("object", "import-section"))
        blocks[at:at] = [block for info in toposort_objects(keys)
                         for block in _new_blocks(file.syntax, head.lineno_start, f"object/{info.type_key}")]
    return failed


def _remove_unregistered_blocks(file: FileInfo, prefix: str, registered: List[str]) -> None:
    """Drop the ``object/`` regions directly under ``prefix`` whose type is not ``registered``
    (with the blank line a roll-out put before each)."""
    kept: List[CodeBlock] = []
    for code in file.code_blocks:
        gone = (code.kind == "object" and isinstance(code.param, str)
                and code.param.rpartition(".")[0] == prefix and code.param not in registered)
        if not gone:
            kept.append(code)
            continue
        print(f'{C.TERM_YELLOW}[Removed] File "{file.path}": `object/{code.param}` '
              f"(line {code.lineno_start}): the type is no longer registered{C.TERM_RESET}")
        if kept and kept[-1].kind is None and kept[-1].lines == [""]:
            kept.pop()
    file.code_blocks[:] = kept


def _new_blocks(syntax: C.MarkerSyntax, lineno: int, stub: str) -> List[CodeBlock]:
    """A blank line and an empty region ``stub``, ready to insert into a file."""
    begin = f"{syntax.begin} {stub}"
    region = CodeBlock.from_begin_line(lineno, begin, syntax)
    region.lineno_end = lineno
    region.lines = [begin, syntax.end]
    blank = CodeBlock(kind=None, param="", lineno_start=lineno, lineno_end=lineno, lines=[""])
    return [blank, region]


def _stage_2(
    files: List[FileInfo],
    ty_map: Dict[str, str],
    init_cfg: InitConfig,
    init_path: Path,
    global_funcs: Dict[str, List[FuncInfo]],
    generator: Generator,
) -> Set[str]:
    """Scaffold, under ``init_path``, the bindings file and package entry of each
    prefix matching ``--init-prefix`` whose functions or types no file covers.

    Returns the prefixes something was written for.
    """

    def file_for(path: Path) -> FileInfo:
        if path.exists():
            for file in files:
                if path.samefile(file.path):
                    return file
            info = FileInfo.from_file(file=path, include_empty=True)
            assert info is not None, f"Failed to read file: {path}"
        else:
            info = FileInfo(path=path, lines=(), code_blocks=[], syntax=syntax_for(path))
        files.append(info)
        return info

    def append(path: Path, text_for) -> None:  # type: ignore[no-untyped-def]
        target = file_for(path)
        with path.open("a", encoding="utf-8") as f:
            f.write(text_for(target.code_blocks))
        target.reload()

    blocks = [code for file in files for code in file.code_blocks]
    covered_prefixes = {code.param[0] for code in blocks if code.kind == "global"}
    covered_types = {code.param for code in blocks if code.kind == "object"}
    skipped = {code.param[1].strip() for code in blocks if code.kind == "directive" and code.param[0] == "skip"}

    wanted = init_cfg.prefix.strip()
    if wanted and not wanted.endswith("."):
        wanted += "."
    root = wanted.rstrip(".")
    prefixes = collect_type_keys()
    for prefix in global_funcs:
        prefixes.setdefault(prefix, [])
    done: Set[str] = set()
    for prefix, keys in prefixes.items():
        if prefix != root and not prefix.startswith(wanted):
            continue
        funcs = [] if prefix in covered_prefixes else sorted(global_funcs.get(prefix, []), key=lambda f: f.schema.name)
        objects = toposort_objects(sorted(
            key for key in set(keys) - covered_types - skipped if not generator.is_builtin(key)))
        if not funcs and not objects:
            continue
        done.add(prefix)
        directory = init_path.joinpath(*prefix.split("."))
        directory.mkdir(parents=True, exist_ok=True)
        api_name = generator.api_filename()
        append(directory / api_name, lambda blocks_: generator.generate_api_file(
            blocks_, ty_map, prefix, objects, init_cfg, is_root=prefix == root))
        submodule = api_name.rsplit(".", 1)[0]
        append(directory / generator.init_filename(),
               lambda blocks_: generator.generate_init_file(blocks_, prefix, submodule))
    return done


def _declared_objects(files: List[FileInfo]) -> Dict[str, Path]:
    """Each type key with an ``object/`` region in ``files`` -> the first file holding one."""
    declared: Dict[str, Path] = {}
    for file in files:
        for code in file.code_blocks:
            if code.kind == "object" and isinstance(code.param, str):
                declared.setdefault(code.param, file.path)
    return declared


def _stage_3(
    file: FileInfo,
    opt: Options,
    ty_map: Dict[str, str],
    global_funcs: Dict[str, List[FuncInfo]],
    generator: Generator,
    declared: Optional[Mapping[str, Path]] = None,
) -> bool:
    """Fill the regions of ``file`` and write it back; return whether its text changed.

    Order: the target's directives, ``global/`` regions, ``object/`` regions,
    the import section, ``__all__``, ``export/`` regions. ``declared``
    defaults to the file's own ``object/`` regions. A region whose type is no
    longer registered is left as is and reported (``ValueError``) once the
    rest of the file is written.
    """
    if declared is None:
        declared = _declared_objects([file])
    imports = generator.new_imports()
    for code in file.code_blocks:
        if code.kind != "directive":
            continue
        name, payload = code.param
        if name in C.PIPELINE_DIRECTIVE_KINDS:
            continue
        if name not in generator.directive_kinds:
            raise ValueError(f"Unknown directive `{name}` at line {code.lineno_start}")
        generator.add_directive(imports, name, payload, code.lineno_start)

    defined_funcs: Set[str] = set()
    for code in file.code_blocks:
        if code.kind != "global":
            continue
        funcs = global_funcs.get(code.param[0], [])
        if not funcs:
            print(f"{C.TERM_YELLOW}[Skipped] No registered global function under prefix "
                  f"`{code.param[0]}` (line {code.lineno_start}){C.TERM_RESET}")
        defined_funcs.update(f.schema.name for f in funcs)
        generator.generate_global_funcs_block(code, funcs, ty_map, imports, opt)

    defined_types: Set[str] = set()
    unregistered: List[str] = []
    for code in file.code_blocks:
        if code.kind != "object":
            continue
        type_key = code.param
        assert isinstance(type_key, str)
        if _object_type_key_to_index(type_key) is None:
            unregistered.append(f"`object/{type_key}` (line {code.lineno_start})")
            continue
        info = object_info_from_type_key(type_key)
        defined_types.add(generator.canonical_type_name(ty_map.get(type_key, type_key)))
        generator.generate_object_block(code, ty_map, imports, opt, info, declared)

    section = next((c for c in file.code_blocks if c.kind == "import-section"), None)
    if section is not None:
        generator.generate_import_section_block(section, imports, opt, defined_types)
    exports = next((c for c in file.code_blocks if c.kind == "__all__"), None)
    if exports is not None:
        names = defined_funcs | defined_types | generator.extra_export_names(imports)
        generator.generate_all_block(exports, names, opt)
    for code in file.code_blocks:
        if code.kind == "export":
            generator.generate_export_block(code)

    changed = file.update(verbose=opt.verbose, dry_run=opt.dry_run)
    if unregistered:
        raise ValueError(f"{', '.join(unregistered)}: the type is no longer registered; delete the block")
    return changed


def _split_list(text: Optional[str]) -> List[str]:
    return [item.strip() for item in (text or "").split(";") if item.strip()]


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawTextHelpFormatter):
    pass


def _parse_args(argv: Optional[Sequence[str]] = None) -> Options:
    """Parse the command line into :class:`Options` (argparse exits on a usage error).

    Without paths (and without ``--coverage-out``) it prints the help and exits with 1.
    """
    parser = argparse.ArgumentParser(
        prog="tether-stub",
        description=(
            "Generate type stubs for FFI extensions from the registry, in two modes:\n"
            "- with --init-*, scaffold the `_ffi_api.py` and `__init__.py` files missing for the "
            "registered global functions and object types of the loaded libraries;\n"
            "- otherwise, rewrite the given files/directories in place, inside their "
            "`tvm-ffi-stubgen` marker blocks.\n\n"
            f"Documentation of the marker protocol: {C.TERM_CYAN}{C.DOC_URL}{C.TERM_RESET}."
        ),
        formatter_class=_HelpFormatter,
    )
    parser.add_argument("--imports", type=str, default="", metavar="IMPORTS",
                        help="Python modules to import first, separated by ';' (e.g. 'pkgA;pkgB.sub').")
    parser.add_argument("--dlls", type=str, default="", metavar="LIBS",
                        help="Shared libraries to load first, separated by ';', so that their global "
                             "functions and object types are registered.")
    parser.add_argument("--init-pypkg", type=str, default="",
                        help="Distribution name of the Python package to scaffold (e.g. apache-tvm-ffi); "
                             "goes with --init-lib and --init-prefix.")
    parser.add_argument("--init-lib", type=str, default="",
                        help="Build target of the package's shared library (e.g. tvm_ffi_shared); "
                             "goes with --init-pypkg and --init-prefix.")
    parser.add_argument("--init-prefix", type=str, default="",
                        help="Registry prefix of the functions and types to scaffold (e.g. my_ext.); "
                             "goes with --init-pypkg and --init-lib.")
    parser.add_argument("--indent", type=int, default=4,
                        help="Spaces added inside generated blocks, relative to the `begin` marker's indentation.")
    parser.add_argument("files", nargs="*", metavar="PATH",
                        help="Files or directories to process; directories are walked recursively for the "
                             "target's source files (.py and .pyi for python, .rs for rust).")
    parser.add_argument("--target", type=str, default="python", choices=generator_names(),
                        help="Language of the generated code.")
    parser.add_argument("--runtime-package", choices=("tether", "tvm_ffi"), default=None,
                        help="Package the generated Python code imports the runtime from (default: tvm_ffi "
                             "while tether serves as tvm_ffi, else tether).")
    parser.add_argument("--verbose", action="store_true", help="Print a diff of each file's changes.")
    parser.add_argument("--dry-run", action="store_true", help="Compute the changes but do not write files.")
    parser.add_argument("--check", action="store_true",
                        help="Write nothing; report each file whose blocks are out of date and exit with 1 if "
                             "any is. For rust only the generated definitions count (not `use` lines, comments, "
                             "wrapping or module paths). Not with --init-*.")
    parser.add_argument("--coverage-out", type=str, default=None, metavar="JSON",
                        help="Write a JSON report saying, for every registered object type, whether its native "
                             "layout is reproducible from reflection (complete) or not (opaque), with the byte "
                             "evidence. Works without PATH.")
    args = parser.parse_args(argv)
    set_runtime_package(args.runtime_package)

    init_values = (args.init_pypkg, args.init_lib, args.init_prefix)
    init_cfg: Optional[InitConfig] = None
    if any(init_values):
        if not all(init_values):
            parser.error("--init-pypkg, --init-lib, and --init-prefix must be provided together")
        init_cfg = InitConfig(pkg=args.init_pypkg, shared_target=args.init_lib, prefix=args.init_prefix)
    if args.check and init_cfg is not None:
        parser.error("--check cannot be combined with --init-* flags")
    if not args.files and args.coverage_out is None:
        parser.print_help()
        sys.exit(1)
    return Options(
        imports=_split_list(args.imports),
        dlls=_split_list(args.dlls),
        init=init_cfg,
        indent=args.indent,
        files=list(args.files),
        verbose=args.verbose,
        dry_run=args.dry_run or args.check,
        check=args.check,
        target=args.target,
        coverage_out=args.coverage_out,
    )


if __name__ == "__main__":
    sys.exit(__main__())
