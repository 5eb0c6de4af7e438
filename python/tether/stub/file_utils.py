"""Reading and writing marked source files.

A file is parsed into a flat list of :class:`CodeBlock`: plain lines (one
block each), one-line directives, and ``begin``/``end`` regions whose inner
lines a generator replaces. Writing a file back joins the blocks' lines.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import traceback
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Callable, List, Optional, Tuple, Union

from . import consts as C

_KINDS = ("global", "object", "import-section", "directive", "export", "__all__", None)


def syntax_for(path: Path) -> C.MarkerSyntax:
    """The marker syntax of ``path``, chosen by its extension (Python's by default)."""
    return C.SYNTAX_BY_EXT.get(path.suffix.lower(), C.PYTHON_SYNTAX)


def _parse_region_head(stub: str, lineno: int) -> Tuple[str, Union[str, Tuple[str, ...]]]:
    """``(kind, param)`` of the text after a ``begin):`` marker."""
    for kind in ("global", "object", "export"):
        head = kind + "/"
        if stub.startswith(head):
            rest = stub[len(head):].strip()
            if kind != "global":
                return kind, rest
            # `global/<prefix>@<module to import init_ffi_api from>`
            return kind, tuple(rest.split("@")) if "@" in rest else (rest, "")
    if stub in ("import-section", "__all__"):
        return stub, ""
    raise ValueError(f"Unknown stub type `{stub}` at line {lineno}")


@dataclasses.dataclass
class CodeBlock:
    """A run of lines: a marked region, a one-line directive, or one plain line.

    ``param`` is what the marker names: the prefix and import module of a
    ``global`` region (a pair), the type key of an ``object`` region, the
    submodule of an ``export`` region, ``(name, payload)`` of a directive.
    """

    kind: C.STUB_BLOCK_KINDS
    param: Union[str, Tuple[str, ...]]
    lineno_start: int
    lineno_end: Optional[int]
    lines: List[str]

    def __post_init__(self) -> None:
        """Reject an unknown block kind."""
        if self.kind not in _KINDS:
            raise ValueError(f"unknown code block kind {self.kind!r}")

    @property
    def indent(self) -> int:
        """Leading spaces of the block's first line (its marker line)."""
        if not self.lines:
            return 0
        first = self.lines[0]
        return len(first) - len(first.lstrip(" "))

    @staticmethod
    def from_begin_line(lineo: int, line: str, syntax: C.MarkerSyntax) -> "CodeBlock":
        """Parse a marker line (stripped): a region opener or a one-line directive.

        A region opener gives a block with no lines yet and no end line; a
        directive gives a complete block of no lines whose ``param`` is
        ``(name, payload)``.
        """
        if line.startswith(syntax.begin):
            kind, param = _parse_region_head(line[len(syntax.begin):].strip(), lineo)
            return CodeBlock(kind=kind, param=param, lineno_start=lineo, lineno_end=None, lines=[])
        name, sep, payload = line[len(syntax.prefix):].partition("):")
        if not sep or not name or not name.replace("-", "_").isidentifier():
            raise ValueError(f"Unknown stub type at line {lineo}: {line}")
        return CodeBlock(kind="directive", param=(name, payload.strip()), lineno_start=lineo,
                         lineno_end=lineo, lines=[])


def _print_diff(old: Tuple[str, ...], new: Tuple[str, ...]) -> None:
    colours = {"-": C.TERM_RED, "+": C.TERM_GREEN, "?": C.TERM_YELLOW}
    for line in difflib.unified_diff(old, new, lineterm=""):
        if line.startswith(("---", "+++")):
            continue
        colour = colours.get(line[:1])
        print(f"{colour}{line}{C.TERM_RESET}" if colour else line)


@dataclasses.dataclass
class FileInfo:
    """A parsed file: its path, its lines as last read or written, its blocks."""

    path: Path
    lines: Tuple[str, ...]
    code_blocks: List[CodeBlock]
    syntax: C.MarkerSyntax

    def update(self, verbose: bool, dry_run: bool) -> bool:
        """Make the file's text the blocks' lines; return whether it changed.

        ``verbose`` prints a coloured diff (or that nothing changed); ``dry_run``
        leaves the file on disk alone.
        """
        new_lines = tuple(line for block in self.code_blocks for line in block.lines)
        if new_lines == self.lines:
            if verbose:
                print(f"{C.TERM_CYAN}-----> Unchanged{C.TERM_RESET}")
            return False
        if verbose:
            _print_diff(self.lines, new_lines)
        self.lines = new_lines
        if not dry_run:
            self.path.write_text("\n".join(new_lines) + "\n", encoding="utf-8")
        return True

    @staticmethod
    def from_file(
        file: Path, include_empty: bool = False, syntax: Optional[C.MarkerSyntax] = None
    ) -> Optional["FileInfo"]:
        """Parse ``file`` into blocks.

        ``None`` when the file opts out (``skip-file``) or, unless
        ``include_empty``, holds no marker at all. ``syntax`` defaults to the
        one of the file's extension. Raises ``ValueError`` on a nested, stray
        or unclosed region.
        """
        if not file.is_file():
            raise ValueError(f"Expected a file, but got: {file}")
        file = file.resolve()
        syntax = syntax or syntax_for(file)
        lines = file.read_text(encoding="utf-8").splitlines()
        stripped = [line.strip() for line in lines]
        if any(s.startswith(syntax.skip_file) for s in stripped):
            return None
        if not include_empty and not any(s.startswith(syntax.prefix) for s in stripped):
            return None
        blocks: List[CodeBlock] = []
        region: Optional[CodeBlock] = None
        for lineno, (line, clean) in enumerate(zip(lines, stripped), start=1):
            if clean.startswith(syntax.begin):
                if region is not None:
                    raise ValueError(f"Nested stub not permitted at line {lineno}")
                region = CodeBlock.from_begin_line(lineno, clean, syntax)
                region.lines.append(line)
            elif clean.startswith(syntax.end):
                if region is None:
                    raise ValueError(f"Unmatched `{syntax.end}` found at line {lineno}")
                region.lineno_end = lineno
                region.lines.append(line)
                blocks.append(region)
                region = None
            elif clean.startswith(syntax.prefix):
                directive = CodeBlock.from_begin_line(lineno, clean, syntax)
                directive.lines.append(line)
                blocks.append(directive)
            elif region is not None:
                region.lines.append(line)
            else:
                blocks.append(CodeBlock(kind=None, param="", lineno_start=lineno, lineno_end=lineno, lines=[line]))
        if region is not None:
            raise ValueError("Unclosed stub block at end of file")
        return FileInfo(path=file, lines=tuple(lines), code_blocks=blocks, syntax=syntax)

    def reload(self) -> None:
        """Re-read the blocks from disk; ``lines`` keeps the text as first read."""
        fresh = FileInfo.from_file(self.path, syntax=self.syntax)
        if fresh is None:
            raise ValueError(f"File no longer exists or valid: {self.path}")
        self.code_blocks = fresh.code_blocks


def _report_error(_exc: BaseException) -> None:
    print(f"{C.TERM_RED}[Error]\n{traceback.format_exc()}{C.TERM_RESET}", end="", flush=True)


def collect_files(paths: List[Path], source_exts: Collection[str]) -> List[FileInfo]:
    """Parse every marked file under ``paths``, sorted by path.

    A path naming a file is always read; a directory is walked recursively for
    files whose lower-case extension is in ``source_exts``. A path that does
    not exist contributes nothing; a file that fails to parse is reported and
    left out.
    """
    exts = {ext.lower() for ext in source_exts}
    found: List[Path] = []
    for p in paths:
        if p.is_file():
            found.append(p)
            continue
        for root, _dirs, names in path_walk(p, follow_symlinks=False, on_error=_report_error):
            found.extend(Path(root) / name for name in names if Path(name).suffix.lower() in exts)
    infos: List[FileInfo] = []
    for path in sorted(found, key=str):
        try:
            info = FileInfo.from_file(path)
        except Exception as exc:  # noqa: BLE001 - one bad file must not stop the run
            _report_error(exc)
            continue
        if info is not None:
            infos.append(info)
    return infos


def path_walk(
    p: Path,
    *,
    top_down: bool = True,
    on_error: Optional[Callable[[Exception], None]] = None,
    follow_symlinks: bool = False,
) -> Iterable[Tuple[Path, List[str], List[str]]]:
    """``Path.walk`` (Python 3.12) on every version: ``(dir, dir names, file names)``.

    Yields nothing for a path that does not exist.
    """
    if not p.exists():
        return
    for root, dirnames, filenames in os.walk(p, topdown=top_down, onerror=on_error, followlinks=follow_symlinks):
        yield Path(root), dirnames, filenames
