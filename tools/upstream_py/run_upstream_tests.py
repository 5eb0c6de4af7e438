"""Run apache-tvm-ffi's own Python tests (from the pinned source
distribution) against tether, through the ``tvm_ffi`` alias, and against
apache-tvm-ffi itself, each test file in its own process, and print the
counts side by side.

    python tools/upstream_py/run_upstream_tests.py [--cache target/upstream] [--only tether|peer] [files...]

A file whose process dies (a signal, or no report) counts as a crash.
With ``--check`` the exit status is 1 when tether fails a test the peer
passes, or crashes on a file where the peer does not, except the tests
``deliberate.txt`` lists (each with the reason tether differs on purpose);
a listed test that passes on tether is reported too, so the list stays
exact.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "upstream_sdist"))
from sdist import DEFAULT_INDEX, extract_tests, fetch_sdist  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "junit_report"))
from junit_report import case_outcomes  # noqa: E402

# How the interpreter starts for each side: tether serves as tvm_ffi before
# pytest imports anything; the peer is the installed apache-tvm-ffi.
_BOOT = {
    "tether": "import tether; tether.provide_tvm_ffi(); import sys, pytest; sys.exit(pytest.main(sys.argv[1:]))",
    "peer": "import sys, pytest; sys.exit(pytest.main(sys.argv[1:]))",
}
_TIMEOUT = 600
_SCRIPTS = sysconfig.get_path("scripts") or os.path.dirname(sys.executable)


def run_file(side: str, test_file: Path, report: Path) -> dict:
    report.parent.mkdir(parents=True, exist_ok=True)
    if report.exists():
        report.unlink()
    cmd = [sys.executable, "-c", _BOOT[side], "-q", "-p", "no:cacheprovider", "-o", "addopts=",
           f"--junitxml={report}", str(test_file)]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    # Both sides find the tools installed beside this interpreter (ninja,
    # cmake: the build tests need them) first on PATH, as an activated venv
    # would put them.
    env["PATH"] = os.pathsep.join([_SCRIPTS, env.get("PATH", "")])
    # Child interpreters the tests start (`python -m tvm_ffi.config`, ...)
    # see tether too: the switch the wheel's .pth reads.
    if side == "tether":
        env["TETHER_PROVIDE_TVM_FFI"] = "1"
    else:
        env.pop("TETHER_PROVIDE_TVM_FFI", None)
    try:
        proc = subprocess.run(cmd, cwd=test_file.parent, env=env, capture_output=True, text=True, timeout=_TIMEOUT)
        code, tail = proc.returncode, (proc.stdout + proc.stderr)[-2000:]
    except subprocess.TimeoutExpired:
        code, tail = -999, "timed out"
    counts = {"passed": 0, "failed": 0, "skipped": 0, "crashed": 0, "rc": code, "tail": tail, "passed_ids": set()}
    if code < 0 or not report.exists():
        counts["crashed"] = 1
        return counts
    for case, outcome in case_outcomes(str(report)):
        counts[outcome] += 1
        if outcome == "passed":
            counts["passed_ids"].add(f"{test_file.parent.name}/{test_file.name}::{case.get('name')}")
    return counts


DELIBERATE = Path(__file__).resolve().parent / "deliberate.txt"


def deliberate() -> dict:
    """``test id -> reason`` of the tests tether fails on purpose."""
    out = {}
    for line in DELIBERATE.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        test, _, reason = line.partition(" ")
        out[test] = reason.strip()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", default=os.path.join("target", "upstream"))
    ap.add_argument("--only", choices=("tether", "peer"))
    ap.add_argument("--sdist", help="a local copy of the sdist (still sha256-checked)")
    ap.add_argument("--index", default=DEFAULT_INDEX, help="the package index to find the sdist on")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 unless tether passes at least as many tests as the peer, with no crash")
    ap.add_argument("files", nargs="*", help="test file names (default: all of tests/python)")
    args = ap.parse_args(argv)
    args.cache = str(Path(args.cache).resolve())
    os.makedirs(args.cache, exist_ok=True)
    test_dir = Path(extract_tests(fetch_sdist(args.cache, args.sdist, args.index), args.cache, "python"))
    files = ([test_dir / f for f in args.files] if args.files
             else sorted(test_dir.glob("test_*.py")) + sorted(test_dir.glob("utils/test_*.py")))
    sides = [args.only] if args.only else ["tether", "peer"]
    totals = {s: {"passed": 0, "failed": 0, "skipped": 0, "crashed": 0} for s in sides}
    passed = {s: set() for s in sides}
    crashed = {s: set() for s in sides}
    print(f"{'file':<42}" + "".join(f"{s + ' pass/fail/skip/crash':>32}" for s in sides))
    for f in files:
        row = f"{str(f.relative_to(test_dir)):<42}"
        for side in sides:
            c = run_file(side, f, Path(args.cache) / "reports" / side / (f.parent.name + "_" + f.stem + ".xml"))
            for k in totals[side]:
                totals[side][k] += c[k]
            passed[side] |= c["passed_ids"]
            if c["crashed"]:
                crashed[side].add(str(f.relative_to(test_dir)))
            cell = f"{c['passed']}/{c['failed']}/{c['skipped']}/{c['crashed']}"
            row += f"{cell:>32}"
            if c["crashed"] and os.environ.get("VERBOSE"):
                print(c["tail"], file=sys.stderr)
        print(row, flush=True)
    row = f"{'total':<42}"
    for side in sides:
        t = totals[side]
        row += f"{str(t['passed']) + '/' + str(t['failed']) + '/' + str(t['skipped']) + '/' + str(t['crashed']):>32}"
    print(row)
    if len(sides) == 2 and args.check:
        allowed = deliberate()
        worse = sorted(passed["peer"] - passed["tether"] - set(allowed))
        crashes = sorted(crashed["tether"] - crashed["peer"])
        stale = sorted(t for t in allowed if t in passed["tether"])
        for t in worse:
            print(f"tether fails a test the peer passes: {t}")
        for f in crashes:
            print(f"tether crashes where the peer does not: {f}")
        for t in stale:
            print(f"listed in deliberate.txt but passes on tether: {t}")
        print(f"deliberate differences: {len(allowed)} (tools/upstream_py/deliberate.txt)")
        return 1 if worse or crashes or stale else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
