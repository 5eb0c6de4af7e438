"""The Python suite on every CPython tether supports, one venv per version.

    python tools/pythons/run.py [--versions 3.10,3.11,...] [--out DIR]

For each version: find the interpreter (3.10–3.13, or 3.9 when asked for,
on PATH or under pyenv; 3.14, 3.14t and 3.15 from
tools/pythons/build_cpython.sh, which builds CPython from Debian's source
packages into a cache once; free-threaded 3.13t is not offered: pyo3
supports free-threaded builds from 3.14 on), make a venv under
DIR/<version>, install the test dependencies as `make python` does (binary
wheels preferred; apache-tvm-ffi too where it publishes a wheel for that
interpreter: the tests comparing with it skip, saying so, where it is
absent), build and install tether into it (the core library built once and
shared through TETHER_CORE_LIB_DIR), run tests/python with a JUnit report,
and on free-threaded builds the 16-thread stress test as well. Prints one
row per version: the suite's counts, the tying suite's (test_tying*.py, the
same run) and the stress test's result. Exits non-zero when any version is
missing or fails.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

sys.path.insert(0, os.path.join(ROOT, "tools", "junit_report"))
from junit_report import case_outcomes  # noqa: E402

DEFAULT_VERSIONS = ["3.10", "3.11", "3.12", "3.13", "3.14", "3.14t", "3.15"]
# The peer, as the Makefile pins it.
PEER = "apache-tvm-ffi==0.1.15.post2"
MATURIN = "maturin>=1.16,<2"
# The test environment `make python` makes (less matplotlib, for plots only).
TEST_DEPS = [MATURIN, "pytest", "numpy", "nanobind", "mypy", "ninja", "cmake"]


def log(msg: str) -> None:
    print(f"[pythons] {msg}", flush=True)


def find_interpreter(version: str) -> tuple[str | None, str]:
    """The interpreter for `version` (3.12, 3.14t) and how it was found, or
    None and the reason it is missing."""
    series, ft = version.rstrip("t"), version.endswith("t")
    if ft and series == "3.13":
        return None, "pyo3 supports free-threaded CPython from 3.14 on"
    if series in ("3.9", "3.10", "3.11", "3.12", "3.13") and not ft:
        candidates = [shutil.which(f"python{series}")]
        candidates += sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{series}.*/bin/python{series}")), reverse=True)
        for c in candidates:
            if c and subprocess.run([c, "-c", "import ssl, venv"], capture_output=True).returncode == 0:
                return c, "installed"
        return None, f"no python{series} on PATH or under ~/.pyenv"
    args = [os.path.join(ROOT, "tools/pythons/build_cpython.sh"), series] + (["--freethreaded"] if ft else [])
    return build_script(args, version)


def build_script(args: list[str], version: str) -> tuple[str | None, str]:
    log(f"{version}: {' '.join(os.path.relpath(a, ROOT) if a.startswith(ROOT) else a for a in args)}")
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        last = [line for line in p.stderr.splitlines() if line.strip()][-1:] or [f"exit {p.returncode}"]
        return None, f"not built: {last[0]}"
    return p.stdout.strip().splitlines()[-1], "built from Debian's source package"


def run(cmd: list[str], log_path: str, **kw) -> int:
    with open(log_path, "a") as f:
        f.write(f"$ {' '.join(cmd)}\n")
        f.flush()
        return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, **kw).returncode


def build_core(out: str) -> str:
    """The core and testing libraries, built once for every version."""
    target = os.path.join(out, "core-target")
    cmd = ["cargo", "build", "--release", "-p", "tether-core", "-p", "tether-testing", "--lib", "--target-dir", target]
    log("building the core library once")
    subprocess.run(cmd, cwd=ROOT, check=True)
    return os.path.join(target, "release")


def junit_counts(path: str, prefix: str | None = None) -> dict[str, int]:
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    if not os.path.exists(path):
        return counts
    for case, outcome in case_outcomes(path):
        if prefix and not case.get("classname", "").split(".")[0].startswith(prefix):
            continue
        counts[outcome] += 1
    return counts


def fmt(c: dict[str, int]) -> str:
    s = f"{c['passed']} passed, {c['failed']} failed"
    return s + (f", {c['skipped']} skipped" if c["skipped"] else "")


def test_version(version: str, out: str, core_dir: str) -> dict:
    row = {"version": version, "interpreter": "", "note": "", "suite": None, "tying": None, "stress": "", "ok": False}
    python, how = find_interpreter(version)
    if python is None:
        row["note"] = how
        return row
    row["interpreter"] = subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                                        capture_output=True, text=True).stdout.strip()
    row["note"] = how
    ft = version.endswith("t")
    vdir = os.path.join(out, version)
    os.makedirs(vdir, exist_ok=True)
    log_path = os.path.join(vdir, "log.txt")
    open(log_path, "w").close()
    venv = os.path.join(vdir, "venv")
    vpy = os.path.join(venv, "bin", "python")
    if not os.path.exists(vpy) and run([python, "-m", "venv", venv], log_path) != 0:
        row["note"] = f"venv failed (see {log_path})"
        return row
    if run([vpy, "-m", "pip", "install", "--quiet", "--upgrade", "--prefer-binary", *TEST_DEPS], log_path) != 0:
        row["note"] = f"installing the test dependencies failed (see {log_path})"
        return row
    if not ft and run([vpy, "-m", "pip", "install", "--quiet", PEER], log_path) != 0:
        row["note"] += "; no apache-tvm-ffi wheel (its comparisons skip)"
    env = dict(os.environ, PATH=os.path.join(venv, "bin") + os.pathsep + os.environ["PATH"], TETHER_CORE_LIB_DIR=core_dir)
    log(f"{version}: building tether for {row['interpreter']}")
    if run([vpy, "-m", "pip", "install", "--quiet", "--no-build-isolation", "--force-reinstall", "--no-deps",
            os.path.join(ROOT, "python")], log_path, env=env) != 0:
        row["note"] = f"building tether failed (see {log_path})"
        return row
    if ft:
        gil = subprocess.run([vpy, "-c", "import sys, tether; print(int(sys._is_gil_enabled()))"],
                             capture_output=True, text=True, cwd=vdir).stdout.strip()
        if gil != "0":
            row["note"] = "the GIL is enabled after importing tether"
            return row
    junit = os.path.join(vdir, "junit.xml")
    log(f"{version}: running the Python suite")
    t0 = time.monotonic()
    rc = run([vpy, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}"], log_path,
             cwd=os.path.join(ROOT, "tests/python"))
    row["suite"], row["tying"] = junit_counts(junit), junit_counts(junit, "test_tying")
    row["seconds"] = round(time.monotonic() - t0)
    ok = rc == 0 and row["suite"]["passed"] > 0
    if ft:
        src = run([vpy, "../freethreaded/stress.py"], log_path, cwd=os.path.join(ROOT, "tests/python"))
        row["stress"] = "passed" if src == 0 else "failed"
        ok = ok and src == 0
    row["ok"] = ok
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--versions", default=",".join(DEFAULT_VERSIONS),
                    help="comma-separated, a trailing t for free-threaded (default: %(default)s)")
    ap.add_argument("--out", default=os.path.join(ROOT, "target", "pythons"))
    args = ap.parse_args()
    versions = [v.strip() for v in args.versions.split(",") if v.strip()]
    os.makedirs(args.out, exist_ok=True)
    core_dir = build_core(args.out)
    rows = [test_version(v, args.out, core_dir) for v in versions]
    print()
    head = ("version", "CPython", "suite", "tying suite", "stress", "note")
    table = [head] + [(r["version"], r["interpreter"] or "-", fmt(r["suite"]) if r["suite"] else "-",
                       fmt(r["tying"]) if r["tying"] else "-", r["stress"] or "-", r["note"]) for r in rows]
    widths = [max(len(t[i]) for t in table) for i in range(len(head) - 1)]
    for t in table:
        print("  ".join(c.ljust(w) for c, w in zip(t, widths)) + "  " + t[-1])
    bad = [r["version"] for r in rows if not r["ok"]]
    print()
    print(f"pythons: {len(rows) - len(bad)} of {len(rows)} versions passed" + (f"; failed or missing: {', '.join(bad)}" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
