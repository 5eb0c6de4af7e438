"""Copies ``cargo doc``'s output into the built documentation site.

``python tools/docs/rustdoc_into_site.py DOC_DIR SITE_RUSTDOC_DIR`` copies
DOC_DIR (``target/doc``) to SITE_RUSTDOC_DIR and writes its ``index.html``
listing the crates documented there (rustdoc's own pages link to it, and
stable rustdoc writes none when it documents several crates). Fails when a
crate the site links to is missing.
"""

from __future__ import annotations

import html
import shutil
import sys
from pathlib import Path

CRATES = ("tether_core", "tether_sys", "tether_testing")


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__)
        return 2
    src, dst = Path(argv[1]), Path(argv[2])
    missing = [c for c in CRATES if not (src / c / "index.html").exists()]
    if missing:
        print(f"rustdoc_into_site: {src} lacks {', '.join(missing)} (run cargo doc first)")
        return 1
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    items = "\n".join(f'<li><a href="{c}/index.html">{html.escape(c)}</a></li>' for c in CRATES)
    (dst / "index.html").write_text(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<title>tether: Rust crates</title></head>\n"
        f"<body><h1>tether's Rust crates</h1>\n<ul>\n{items}\n</ul>\n"
        '<p><a href="../index.html">Back to the documentation</a></p></body></html>\n',
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
