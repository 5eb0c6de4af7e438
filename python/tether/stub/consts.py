"""Vocabulary shared by every part of the stub generator.

The marker comments that delimit generated regions (one spelling per comment
token), the block kinds a file may hold, the directive names the pipeline
reads itself, terminal colours for progress messages, and the type keys the
Python runtime already binds.
"""

from __future__ import annotations

import dataclasses
from typing import Dict, FrozenSet, Literal, Set


@dataclasses.dataclass(frozen=True)
class MarkerSyntax:
    """The marker spellings for one comment token.

    Every marker is a line comment ``<comment> tvm-ffi-stubgen(<what>)...``;
    only the comment token differs between languages (``#`` or ``//``).
    """

    comment: str
    """Line-comment token of the language (``#``, ``//``)."""

    @property
    def prefix(self) -> str:
        """What every marker line starts with: ``<comment> tvm-ffi-stubgen(``."""
        return self.comment + " tvm-ffi-stubgen("

    @property
    def begin(self) -> str:
        """Opening marker of a generated region: ``<comment> tvm-ffi-stubgen(begin):``."""
        return self.prefix + "begin):"

    @property
    def end(self) -> str:
        """Closing marker of a generated region: ``<comment> tvm-ffi-stubgen(end)``."""
        return self.prefix + "end)"

    @property
    def ty_map(self) -> str:
        """Marker of a type-renaming directive: ``<comment> tvm-ffi-stubgen(ty-map):``."""
        return self.directive("ty-map")

    @property
    def import_object(self) -> str:
        """Marker of an extra-import directive: ``<comment> tvm-ffi-stubgen(import-object):``."""
        return self.directive("import-object")

    @property
    def skip_file(self) -> str:
        """Marker that excludes the whole file: ``<comment> tvm-ffi-stubgen(skip-file)``."""
        return self.prefix + "skip-file)"

    def directive(self, name: str) -> str:
        """Marker of the one-line directive ``name``: ``<comment> tvm-ffi-stubgen(<name>):``."""
        return f"{self.prefix}{name}):"


PYTHON_SYNTAX = MarkerSyntax(comment="#")
RUST_SYNTAX = MarkerSyntax(comment="//")

#: Marker syntax by (lower-case) file extension. Which files a run visits is
#: the active generator's choice (its ``source_exts``); this only says how to
#: read one.
SYNTAX_BY_EXT: Dict[str, MarkerSyntax] = {
    ".py": PYTHON_SYNTAX,
    ".pyi": PYTHON_SYNTAX,
    ".rs": RUST_SYNTAX,
}

#: Directives the language-neutral pipeline handles; a generator handles every
#: other directive name it declares, and an undeclared name is an error.
PIPELINE_DIRECTIVE_KINDS: FrozenSet[str] = frozenset({"ty-map", "prefix", "skip"})

#: Kinds of parsed block (``None`` is a plain line outside any marker).
STUB_BLOCK_KINDS = Literal["global", "object", "import-section", "directive", "export", "__all__", None]

TERM_RESET = "\033[0m"
TERM_BOLD = "\033[1m"
TERM_BLACK = "\033[30m"
TERM_RED = "\033[31m"
TERM_GREEN = "\033[32m"
TERM_YELLOW = "\033[33m"
TERM_BLUE = "\033[34m"
TERM_MAGENTA = "\033[35m"
TERM_CYAN = "\033[36m"
TERM_WHITE = "\033[37m"
DOC_URL = "https://tvm.apache.org/ffi/packaging/stubgen.html"

#: Renames applied to reflected method names when metadata is read (none by default).
FN_NAME_MAP: Dict[str, str] = {}

#: Type keys whose classes the Python runtime defines itself: no ``object/``
#: block is scaffolded or rolled out for them.
BUILTIN_TYPE_KEYS: Set[str] = {
    "ffi.BigInt",
    "ffi.Bytes",
    "ffi.Error",
    "ffi.Function",
    "ffi.Object",
    "ffi.OpaquePyObject",
    "ffi.SmallBytes",
    "ffi.SmallStr",
    "ffi.String",
    "ffi.Tensor",
}
