"""The ``c-api-header`` directive: the C ABI reference read from c_api.h.

The header is tether's own description of TVM-FFI's C ABI; its sections are
marked ``/* ---- name ---- */`` and each declaration is preceded by the
comment that documents it. The directive renders each section as a section,
each comment as text and each declaration as a C block, with an anchor
``c-<Name>`` for every function, type and macro it declares, so the site
always shows the header as it is built.
"""

import re

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

SECTION = re.compile(r"^/\* -+ (.*?) -+ \*/$")
DECLARED = [
    re.compile(r"TETHER_DLL\s+[\w\s\*]+?\b(\w+)\s*\("),
    re.compile(r"static inline [\w\s\*]+?\b(\w+)\s*\("),
    re.compile(r"^#define\s+(\w+)"),
    re.compile(r"^}\s*(\w+)\s*;"),
    re.compile(r"^typedef\s+[\w\s\*\(\)]+?\b(\w+)\s*;"),
    re.compile(r"^typedef\s+\w+\s*\(\*\s*(\w+)\)"),
]


def parse_header(text):
    """(intro, [(section title, [(comment, code)])]) from the header text."""
    lines = text.splitlines()
    intro = []
    i = 0
    if lines and lines[0].startswith("/*"):
        while i < len(lines):
            intro.append(lines[i])
            if lines[i].rstrip().endswith("*/"):
                i += 1
                break
            i += 1
    sections = []
    current = None
    chunk = []
    for line in lines[i:]:
        m = SECTION.match(line.strip())
        if m:
            current = (m.group(1), [])
            sections.append(current)
            chunk = []
            continue
        if current is None:
            continue
        if line.startswith("#ifdef __cplusplus"):
            break
        if line.strip() == "":
            if chunk:
                current[1].append(split_chunk(chunk))
                chunk = []
            continue
        chunk.append(line)
    if chunk and current is not None:
        current[1].append(split_chunk(chunk))
    return strip_comment(intro), sections


def split_chunk(chunk):
    """A leading comment (as text) and the code that follows it."""
    comment = []
    i = 0
    if chunk[0].lstrip().startswith("/*"):
        while i < len(chunk):
            comment.append(chunk[i])
            if chunk[i].rstrip().endswith("*/"):
                i += 1
                break
            i += 1
    return strip_comment(comment), "\n".join(chunk[i:]).rstrip()


def strip_comment(lines):
    out = []
    for line in lines:
        s = line.strip()
        s = re.sub(r"^/\*+\s?", "", s)
        s = re.sub(r"\s?\*+/$", "", s)
        s = re.sub(r"^\*\s?", "", s)
        out.append(s)
    text = "\n".join(out).strip()
    return re.sub(r"\n{3,}", "\n\n", text)


def declared_names(code):
    names = []
    for line in code.splitlines():
        for pattern in DECLARED:
            for m in pattern.finditer(line.strip()):
                if m.group(1) not in names:
                    names.append(m.group(1))
    return names


def text_nodes(text):
    """Paragraphs of the comment, kept verbatim (list items on their lines)."""
    result = []
    for para in text.split("\n\n"):
        if para.strip():
            block = nodes.line_block()
            for line in para.splitlines():
                block += nodes.line(line, line)
            result.append(block)
    return result


class CApiHeader(SphinxDirective):
    has_content = False

    def run(self):
        path = self.config.c_api_header
        self.env.note_dependency(path)
        with open(path, encoding="utf-8") as f:
            intro, sections = parse_header(f.read())
        if not sections:
            raise self.error(f"no sections found in {path}")
        result = text_nodes(intro)
        seen = set()
        for title, items in sections:
            # A real section (titled, in the page's contents), parsed from
            # a title alone so the heading level follows the page's.
            holder = nodes.container()
            nested_parse_with_titles(self.state, StringList([title, "-" * len(title)], path), holder)
            section = holder.children[0] if holder.children else None
            if not isinstance(section, nodes.section):
                raise self.error(f"section {title!r} did not parse as a section")
            for comment, code in items:
                container = nodes.container(classes=["c-api-item"])
                for name in declared_names(code):
                    if name not in seen:
                        seen.add(name)
                        container["ids"].append("c-" + name)
                container.extend(text_nodes(comment))
                if code:
                    container += nodes.literal_block(code, code, language="c")
                section += container
            result.append(section)
        return result


def setup(app):
    app.add_config_value("c_api_header", "", "env")
    app.add_directive("c-api-header", CApiHeader)
    return {"parallel_read_safe": True, "version": "1"}
