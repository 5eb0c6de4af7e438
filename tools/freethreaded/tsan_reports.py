"""Reads ThreadSanitizer's logs (TSAN_OPTIONS log_path=..., one file per
process) and says which reports involve tether.

A report involves tether when any stack in it (either access, the
allocation of the memory, a mutex's creation, a thread's creation) has a
frame in tether's binaries (the extension `_ffi*.so`, `libtether_core`) or
in its sources (python/src, rust/core, rust/sys, cpp/include). Frames of
Rust's std compiled into those binaries count as tether's too: std is
instrumented there and called by tether's code. Everything else is a report
about CPython or an uninstrumented library, listed but not failing.

Usage: tsan_reports.py LOG_DIR [--max-print N] — prints totals, the
suppressions that matched, and each distinct report involving tether in
full; exits 1 if there is any such report, 2 if the logs say TSan itself
failed.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys

SEPARATOR = "=================="
TETHER_MODULE = re.compile(r"\((?:[^()]*/)?(?:_ffi\.[^() ]*\.so|libtether_core\.so)\+0x")
TETHER_SOURCE = re.compile(r"/(?:python/src|rust/core|rust/sys|cpp/include)/")
FRAME = re.compile(r"^\s*#(\d+) (.*)$")
KIND = re.compile(r"WARNING: ThreadSanitizer: (.*?)(?: \(pid=\d+\))?$")
MATCHED = re.compile(r"^\s*(\d+) (\w+):(.*)$")


def frame_is_tether(line: str) -> bool:
    return bool(TETHER_MODULE.search(line) or TETHER_SOURCE.search(line))


def function_of(frame: str) -> str:
    """The function name of a symbolized frame line (`#3 name path:line (mod+0x..)`)."""
    body = FRAME.match(frame).group(2)
    # Names may contain spaces (`<T as Trait>::f`); the location follows the last space before a '/' or '<null>'.
    m = re.match(r"(.*?) (?:/|<null>|\()", body)
    return (m.group(1) if m else body).strip()


def split_reports(text: str):
    """Yield each report's lines (from WARNING to its closing separator)."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("WARNING: ThreadSanitizer:"):
            j = i + 1
            while j < len(lines) and lines[j] != SEPARATOR:
                j += 1
            yield lines[i:j]
            i = j
        i += 1


def is_failure(line: str) -> bool:
    """A line of TSan's about itself rather than a report: a suppressions
    file it cannot read, a CHECK, running out of memory, refusing a dlopen
    with RTLD_DEEPBIND ("==pid==You are trying to dlopen ..."). Most of these
    end the process with the configured exit code, which the runs set to 0,
    so they are caught here."""
    if line.startswith("ThreadSanitizer: reported ") or line.startswith("ThreadSanitizer: Matched "):
        return False
    return bool(re.match(r"==\d+==|FATAL: ThreadSanitizer|ThreadSanitizer[: ]", line))


def read_logs(log_dir: str):
    reports, matched, fatal = [], collections.Counter(), []
    for name in sorted(os.listdir(log_dir)):
        path = os.path.join(log_dir, name)
        with open(path, errors="replace") as f:
            text = f.read()
        for rep in split_reports(text):
            reports.append((name, rep))
        in_matched = False
        for line in text.splitlines():
            if line.startswith("ThreadSanitizer: Matched"):
                in_matched = True
                continue
            if in_matched:
                m = MATCHED.match(line)
                if m:
                    matched[f"{m.group(2)}:{m.group(3).strip()}"] += int(m.group(1))
                    continue
                in_matched = False
            if is_failure(line):
                fatal.append(f"{name}: {line}")
    return reports, matched, fatal


def signature(rep: list[str]) -> tuple:
    """Deduplication key: the kind, and per stack its first tether frame (or
    its top frame when it has none)."""
    kind = KIND.match(rep[0]).group(1)
    # The stacks of the accesses, locations and mutexes; the threads'
    # creation stacks say little about the race and vary between reports.
    stacks, current, header = [], [], ""
    for line in rep[1:]:
        if FRAME.match(line):
            current.append(line)
            continue
        if current and "created by" not in header:
            stacks.append(current)
        current = []
        if line.strip():
            header = line
    if current and "created by" not in header:
        stacks.append(current)
    keys = []
    for st in stacks:
        ours = [f for f in st if frame_is_tether(f)]
        keys.append(function_of(ours[0] if ours else st[0]))
    return (kind, tuple(keys))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("log_dir")
    ap.add_argument("--max-print", type=int, default=20, help="distinct tether reports printed in full")
    args = ap.parse_args()
    if not os.path.isdir(args.log_dir):
        print(f"no TSan logs at {args.log_dir}")
        return 2
    reports, matched, fatal = read_logs(args.log_dir)
    kinds = collections.Counter(KIND.match(r[0]).group(1) for _, r in reports)
    ours, theirs = [], []
    for n, r in reports:
        (ours if any(frame_is_tether(line) for line in r) else theirs).append((n, r))
    distinct = collections.OrderedDict()
    for n, r in ours:
        distinct.setdefault(signature(r), []).append((n, r))
    others = collections.Counter(signature(r) for _, r in theirs)

    print(f"TSan reports: {len(reports)} in {len(os.listdir(args.log_dir))} log files "
          f"({', '.join(f'{v} {k}' for k, v in kinds.most_common()) or 'none'})")
    print(f"  involving tether: {len(ours)} ({len(distinct)} distinct)")
    print(f"  elsewhere (CPython, uninstrumented libraries): {len(theirs)} "
          f"({len(others)} distinct)")
    for (kind, keys), count in others.most_common():
        print(f"    {count:5d}  {kind}: {' / '.join(keys)}")
    print(f"suppressed: {sum(matched.values())}")
    for sup, count in matched.most_common():
        print(f"    {count:5d}  {sup}")
    for line in fatal:
        print(line)
    for i, ((kind, keys), reps) in enumerate(distinct.items()):
        if i == args.max_print:
            print(f"... {len(distinct) - i} more distinct reports involving tether")
            break
        name, rep = reps[0]
        print(f"\n--- {kind}: {' / '.join(keys)} ({len(reps)}x; first in {name})")
        print("\n".join(rep))
    if fatal:
        return 2
    return 1 if ours else 0


if __name__ == "__main__":
    sys.exit(main())
