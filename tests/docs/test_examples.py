"""Every code example of the documentation site and of README.md runs.

One test per page (docs/**/*.md), and one for README.md: Python blocks run
as scripts, C and C++ blocks are written or compiled and run against the
built core, shell blocks run, and Rust blocks are rustdoc tests
(tests/docs/examples.py says how). A page whose example breaks fails here,
and `make docs` runs this before building the site.
"""

from pathlib import Path

import pytest

import examples

PAGES = examples.pages()
README = examples.ROOT / "README.md"


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(examples.ROOT)) for p in PAGES])
def test_page_examples_run(page: Path, tmp_path: Path) -> None:
    blocks = examples.blocks(page)
    ran = examples.run_page(page, tmp_path)
    runnable = [
        b for b in blocks
        if "norun" not in b.flags and (b.lang in examples.RUN or examples.FILE_LINE.match((b.text.splitlines() or [""])[0]))
    ]
    assert ran == len(runnable), f"{page}: ran {ran} of {len(runnable)} runnable blocks"


def test_readme_examples_run(tmp_path: Path) -> None:
    assert examples.run_readme(README, tmp_path) >= 1, "README.md shows no example that runs"


def test_marked_readme_runs_every_block(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(
        f"{examples.README_MARKER}\n\n```python\nx = 1\n```\n\n```sh\ntest -f missing_file\n```\n",
        encoding="utf-8",
    )
    with pytest.raises(AssertionError, match="sh example failed"):
        examples.run_readme(readme, tmp_path)


def test_every_page_with_code_runs_some() -> None:
    """A page showing code runs at least one block, unless all are shown-only."""
    for page in PAGES:
        blocks = examples.blocks(page)
        code = [b for b in blocks if b.lang in examples.RUN]
        if code:
            assert any("norun" not in b.flags for b in code), f"{page}: every code block is norun"


def test_extractor_reads_fences(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text(
        "text\n\n```python\nx = 1\n```\n\n```sh norun\nmake test\n```\n\n"
        ":::{note}\nn\n:::\n\n```{toctree}\na\n```\n\n```cpp\n// file: a.cc\nint f();\n```\n",
        encoding="utf-8",
    )
    got = [(b.lang, b.flags, b.line) for b in examples.blocks(page)]
    assert got == [("python", [], 3), ("sh", ["norun"], 7), ("cpp", [], 19)]  # fence lines


def test_failing_python_block_fails(tmp_path: Path) -> None:
    page = tmp_path / "bad.md"
    page.write_text("```python\nassert 1 == 2, 'broken example'\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="broken example"):
        examples.run_page(page, tmp_path)


def test_unknown_language_fails(tmp_path: Path) -> None:
    page = tmp_path / "odd.md"
    page.write_text("```fortran\nprint *, 1\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="neither run nor marked norun"):
        examples.run_page(page, tmp_path)


def test_readme_relative_links_resolve() -> None:
    """README.md's relative links (into docs/, mostly) name files that exist."""
    import re

    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    relative = [u.split("#")[0] for u in links if "://" not in u and not u.startswith("#") and u.split("#")[0]]
    missing = [u for u in relative if not (README.parent / u).exists()]
    assert not missing, f"README.md links to missing files: {missing}"
