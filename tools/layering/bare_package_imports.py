"""Imports of the bare ``tether`` package from inside it name nothing but
the compiled extension, ``_ffi``.

import-linter cannot see ``tether._ffi`` (a compiled module), so it records
``from . import _ffi`` as an import of the package itself, and its contracts
ignore those (``tools/layering/importlinter.ini``). That ignore would also
hide an upward import such as ``from tether import structural_hash`` inside
``tether.core``; this check closes the hole: every ``from tether import``
(absolute, or relative up to the package) in a module of the package names
only ``_ffi`` or the package's own modules (which import-linter sees as
such), never a name the package's ``__init__`` re-exports. The ``__init__``
itself is exempt (it assembles the package).

    python tools/layering/bare_package_imports.py python/tether
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ALLOWED = {"_ffi"}


def bare_imports(root: Path, path: Path) -> list:
    """``(line, names)`` of each import of the bare package in ``path``."""
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    package = parts[:-1]
    out = []
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level == 0:
            target = (node.module or "").split(".")
        else:
            base = package[: len(package) - (node.level - 1)] if node.level - 1 <= len(package) else []
            target = base + ((node.module or "").split(".") if node.module else [])
        if target == [root.name]:
            out.append((node.lineno, [a.name for a in node.names]))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == root.name:
                    out.append((node.lineno, ["(the whole package)"]))
    return out


def is_module(root: Path, name: str) -> bool:
    """Whether ``name`` is a module or subpackage of the package."""
    return (root / f"{name}.py").is_file() or (root / name / "__init__.py").is_file()


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0] if args else "python/tether").resolve()
    problems = []
    for path in sorted(root.rglob("*.py")):
        if path == root / "__init__.py":
            continue
        for line, names in bare_imports(root, path):
            bad = [n for n in names if n not in ALLOWED and not is_module(root, n)]
            if bad:
                problems.append(f"{path.relative_to(root.parent)}:{line}: imports {', '.join(bad)} from the "
                                f"bare package (only _ffi and modules may be; import the module that defines it)")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"{root.name}: imports of the bare package name only _ffi and its modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
