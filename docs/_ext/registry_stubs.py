"""The ``registry-stubs`` directive: ``.pyi`` stubs of a registry prefix.

Runs ``python -m tether.stubgen PREFIX`` with the interpreter building the
site (the repo venv, where ``make docs`` installed the package) into a
scratch directory and shows each stub file it writes, so the reference
shows the registered types and globals as a type checker sees them.
"""

import subprocess
import sys
import tempfile
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective


class RegistryStubs(SphinxDirective):
    required_arguments = 1
    has_content = False

    def run(self):
        prefix = self.arguments[0]
        with tempfile.TemporaryDirectory() as out:
            proc = subprocess.run(
                [sys.executable, "-m", "tether.stubgen", prefix, "-o", out],
                capture_output=True, text=True, timeout=300,
            )
            if proc.returncode != 0:
                raise self.error(f"tether.stubgen {prefix} failed: {proc.stderr.strip()}")
            files = sorted(Path(out).rglob("*.pyi"))
            if not files:
                raise self.error(f"tether.stubgen {prefix} wrote no stubs")
            result = []
            for path in files:
                rel = path.relative_to(out).as_posix()
                text = path.read_text(encoding="utf-8")
                result.append(nodes.rubric(rel, rel))
                result.append(nodes.literal_block(text, text, language="python"))
        return result


def setup(app):
    app.add_directive("registry-stubs", RegistryStubs)
    return {"parallel_read_safe": True, "version": "1"}
