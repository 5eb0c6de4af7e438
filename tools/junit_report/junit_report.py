"""The outcome of each test case in a pytest JUnit XML report, shared by
the runners that compare test suites (tools/upstream_py, tools/clients,
tools/pythons)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Iterator


def case_outcomes(path: str) -> Iterator[tuple[ET.Element, str]]:
    """Each <testcase> of the report with "failed" (a failure or an error),
    "skipped" or "passed"."""
    for case in ET.parse(path).getroot().iter("testcase"):
        kinds = {child.tag for child in case}
        if kinds & {"failure", "error"}:
            yield case, "failed"
        elif "skipped" in kinds:
            yield case, "skipped"
        else:
            yield case, "passed"
