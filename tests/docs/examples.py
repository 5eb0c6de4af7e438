"""Reads the fenced code blocks of the documentation pages and runs them.

A page's blocks run in page order in one scratch directory, with the repo
venv's scripts first on PATH (so ``python``, ``tether-config`` and
``tether-stubgen`` are the installed package's):

* ``python`` blocks run each as its own script (``python -c``);
* a block of any language whose first line is ``// file: NAME`` (or
  ``/* file: NAME */``, ``# file: NAME``) is written to NAME for the
  blocks after them;
  a ``c``/``cpp`` block without a name is compiled and run as a program
  against the built core (it must have a ``main``);
* ``sh`` blocks run under ``bash -euo pipefail``;
* ``rust`` blocks are rustdoc tests against the built ``tether-core``;
* a block whose info string carries ``norun`` is shown, not run: it builds
  or fetches something no test here can (Bazel, Nix, the whole project);
  ``text``/``starlark``/``toml``/``cmake``/``nix``/``svg`` blocks are
  never run. Any other language fails, so no example is silently skipped.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = ROOT / ".venv" / "bin"
LIBDIR = ROOT / "target" / "debug"
SHOWN_ONLY = {"text", "starlark", "toml", "cmake", "nix", "svg", "console", "ini"}
RUN = {"python", "c", "cpp", "sh", "rust"}
FENCE = re.compile(r"^(?P<indent>[ ]{0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
FILE_LINE = re.compile(r"^\s*(?://|/\*|#)\s*file:\s*(?P<name>[\w.\-/]+)")


@dataclass
class Block:
    page: Path
    line: int  # the opening fence's line, from 1
    lang: str
    flags: list
    text: str

    @property
    def where(self) -> str:
        page = self.page.relative_to(ROOT) if ROOT in self.page.parents else self.page
        return f"{page}:{self.line}"


def blocks(page: Path) -> list:
    """The fenced blocks of a Markdown page (MyST directives excluded)."""
    out = []
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m.group("fence"), m.group("info").strip()
        start = i + 1
        i += 1
        body = []
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i][len(m.group("indent")):] if lines[i].startswith(m.group("indent")) else lines[i])
            i += 1
        i += 1
        words = info.split()
        if not words or words[0].startswith("{"):
            if words and words[0] == "{code-block}":
                raise AssertionError(f"{page}:{start}: use a plain fence, not code-block")
            continue  # a MyST directive (figure, toctree, c-api-header ...)
        out.append(Block(page, start, words[0], words[1:], "\n".join(body) + "\n"))
    return out


def env() -> dict:
    e = dict(os.environ)
    e["PATH"] = f"{VENV_BIN}{os.pathsep}{e.get('PATH', '')}"
    e["VIRTUAL_ENV"] = str(VENV_BIN.parent)
    e.pop("TETHER_PROVIDE_TVM_FFI", None)
    e.pop("PYTHONPATH", None)
    return e


def run(cmd, cwd, block: Block, **kw) -> None:
    proc = subprocess.run(cmd, cwd=cwd, env=env(), capture_output=True, text=True, timeout=600, **kw)
    if proc.returncode != 0:
        raise AssertionError(
            f"{block.where}: {block.lang} example failed ({proc.returncode})\n"
            f"--- block ---\n{block.text}--- stdout ---\n{proc.stdout}--- stderr ---\n{proc.stderr}"
        )


def compile_and_run(block: Block, work: Path, index: int) -> None:
    src = work / f"example_{index}.{'c' if block.lang == 'c' else 'cc'}"
    src.write_text(block.text, encoding="utf-8")
    exe = work / f"example_{index}"
    if block.lang == "c":
        cmd = [os.environ.get("CC", "cc"), "-std=c11", "-Wall", "-Wextra", "-Werror"]
    else:
        cmd = [os.environ.get("CXX", "c++"), "-std=c++17", "-Wall", "-Wextra", "-Werror"]
    cmd += [f"-I{ROOT / 'cpp' / 'include'}", str(src), f"-L{LIBDIR}", "-Wl,--no-as-needed", "-ltether_testing",
            "-Wl,--as-needed", "-ltether_core", f"-Wl,-rpath,{LIBDIR}", "-o", str(exe)]
    run(cmd, work, block)
    run([str(exe)], work, block)


def rust_doctests(page: Path, rust_blocks: list, work: Path) -> None:
    md = work / "rust_examples.md"
    parts = [f"# {page.name}\n"]
    for b in rust_blocks:
        parts.append(f"```rust\n{b.text}```\n")
    md.write_text("\n".join(parts), encoding="utf-8")
    rlib = LIBDIR / "libtether_core.rlib"
    if not rlib.exists():
        raise AssertionError(f"{rlib} is missing: run `cargo build -p tether-core` first")
    rustdoc = shutil.which("rustdoc") or str(Path.home() / ".cargo" / "bin" / "rustdoc")
    cmd = [rustdoc, "--edition", "2021", "--test", str(md), "-L", f"dependency={LIBDIR / 'deps'}",
           "--extern", f"tether_core={rlib}", "-C", f"link-arg=-Wl,-rpath,{LIBDIR}"]
    run(cmd, work, rust_blocks[0])


def run_page(page: Path, work: Path) -> int:
    """Runs every runnable block of ``page`` in ``work``; returns how many ran."""
    ran = 0
    rust_blocks = []
    for index, b in enumerate(blocks(page)):
        first = b.text.splitlines()[0] if b.text.strip() else ""
        named = FILE_LINE.match(first)
        if named and "norun" not in b.flags:
            target = work / named.group("name")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(b.text, encoding="utf-8")
            ran += 1
            continue
        if "norun" in b.flags or b.lang in SHOWN_ONLY:
            continue
        if b.lang not in RUN:
            raise AssertionError(f"{b.where}: a '{b.lang}' block is neither run nor marked norun")
        if b.lang in ("c", "cpp"):
            compile_and_run(b, work, index)
        elif b.lang == "python":
            run([str(VENV_BIN / "python"), "-c", b.text], work, b)
        elif b.lang == "sh":
            run(["bash", "-euo", "pipefail", "-c", b.text], work, b)
        elif b.lang == "rust":
            rust_blocks.append(b)
            continue
        ran += 1
    if rust_blocks:
        rust_doctests(page, rust_blocks, work)
        ran += len(rust_blocks)
    return ran


README_MARKER = "<!-- docs-examples: run -->"


def run_readme(readme: Path, work: Path) -> int:
    """The README's examples; returns how many blocks ran.

    A README carrying README_MARKER has its examples marked as the pages'
    are, and every block of it runs as on a page. One without it (the long
    README written before the site) runs its Python blocks before its first
    C/C++ source block, which stand alone; the blocks after those use
    libraries its shell lines build, and run in full on the docs pages
    (guides/cpp.md, guides/tensors.md).
    """
    if README_MARKER in readme.read_text(encoding="utf-8"):
        return run_page(readme, work)
    ran = 0
    for b in blocks(readme):
        if b.lang in ("c", "cpp"):
            break
        if b.lang == "python" and "norun" not in b.flags:
            run([str(VENV_BIN / "python"), "-c", b.text], work, b)
            ran += 1
    return ran


def pages() -> list:
    docs = ROOT / "docs"
    return sorted(p for p in docs.rglob("*.md") if "_build" not in p.parts)


if __name__ == "__main__":
    import tempfile

    for arg in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as d:
            print(arg, run_page(Path(arg).resolve(), Path(d)))
