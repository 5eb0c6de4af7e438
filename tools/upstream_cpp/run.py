#!/usr/bin/env python3
"""apache-tvm-ffi's own C++ test suite, run against tether and against the peer.

The suite (gtest files under `tests/cpp` of the apache-tvm-ffi source
distribution) is never copied into this repository: this script downloads
the pinned sdist from the package index (the simple API, sha256-checked),
extracts `tests/cpp`, compiles every test file once against the headers of
the installed apache-tvm-ffi wheel (with the definitions upstream's CMake
gives its tests), then links the objects twice, into one executable each as
upstream's CMake does (a file's tests use types another file registers at
start-up): against tether's `libtether_core` (plus `libtether_testing` when
it has been built) and against the wheel's `libtvm_ffi` plus
`libtvm_ffi_testing`. A file whose references an implementation cannot
resolve is left out of that implementation's executable and reported as a
link error. Every gtest test then runs in its own process
(`--gtest_filter=Suite.Name`, with a timeout), and a table of
pass/fail/crash counts per file shows tether beside the peer.

GoogleTest comes from Debian's libgtest-dev (installed with apt-get when
missing and running as root) or from `--gtest-prefix`.

Usage: run.py --core-lib-dir target/debug [--out DIR] [--jobs N]
              [--sdist FILE] [--filter SUBSTRING] [--timeout SECONDS] [--check]

Exit status: 0 after a complete run (the table is the result), 1 when the
setup fails, and with --check also 1 when a test passing on the peer fails
or crashes on tether.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "upstream_sdist"))
from sdist import DEFAULT_INDEX, PEER_PROJECT, extract_tests, fetch_sdist, log  # noqa: E402

# What upstream's CMake gives the test target: C++17 without extensions,
# the byte-order definition of the header interface target and its
# warning set (without -Werror: a warning is not the subject here).
CXXFLAGS = ["-std=c++17", "-O1", "-g", "-Wall", "-Wextra", "-Wpedantic",
            "-Wno-unused-parameter", "-DTVM_FFI_CMAKE_LITTLE_ENDIAN=1"]
IMPLS = ("tether", "peer")


# ---- toolchain and libraries ---------------------------------------------------

def ensure_gtest(prefix: str | None) -> tuple[list[str], list[str]]:
    """Compile and link flags for GoogleTest (gtest_main, like upstream)."""
    if prefix:
        return [f"-I{prefix}/include"], [f"-L{prefix}/lib", f"-Wl,-rpath,{prefix}/lib"]
    if not os.path.exists("/usr/include/gtest/gtest.h"):
        if os.geteuid() != 0 or not shutil.which("apt-get"):
            raise SystemExit("GoogleTest is missing: install Debian's libgtest-dev or pass --gtest-prefix")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "libgtest-dev"], check=True, env=env)
    return [], []


def peer_paths() -> tuple[str, str]:
    spec = importlib.util.find_spec("tvm_ffi")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{PEER_PROJECT} is not importable from {sys.executable}")
    root = list(spec.submodule_search_locations)[0]
    include, lib = os.path.join(root, "include"), os.path.join(root, "lib")
    for need in (os.path.join(include, "tvm", "ffi", "c_api.h"), os.path.join(lib, "libtvm_ffi.so"),
                 os.path.join(lib, "libtvm_ffi_testing.so")):
        if not os.path.exists(need):
            raise SystemExit(f"the peer wheel lacks {need}")
    return include, lib


def link_flags(impl: str, core_dir: str, peer_lib: str) -> tuple[list[str], str]:
    """Libraries for one implementation, and a note for the table."""
    if impl == "peer":
        return ([f"-L{peer_lib}", "-Wl,--no-as-needed", "-ltvm_ffi_testing", "-ltvm_ffi",
                 "-Wl,--as-needed", f"-Wl,-rpath,{peer_lib}"], "libtvm_ffi + libtvm_ffi_testing")
    libs = [f"-L{core_dir}", "-Wl,--no-as-needed"]
    note = "libtether_core"
    if os.path.exists(os.path.join(core_dir, "libtether_testing.so")):
        libs.append("-ltether_testing")
        note += " + libtether_testing"
    else:
        note += " (no libtether_testing: testing.* globals only as the core has them)"
    return libs + ["-ltether_core", "-Wl,--as-needed", f"-Wl,-rpath,{core_dir}"], note


# ---- build ---------------------------------------------------------------------

def run_quiet(cmd: list[str]) -> tuple[int, str]:
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def newer(target: str, *sources: str) -> bool:
    return os.path.exists(target) and all(os.path.getmtime(target) >= os.path.getmtime(s) for s in sources)


def compile_one(cxx, src, obj, includes, suite_dir):
    headers = [os.path.join(suite_dir, "testing_object.h")]
    if newer(obj, src, *headers):
        return 0, ""
    os.makedirs(os.path.dirname(obj), exist_ok=True)
    return run_quiet([cxx, *CXXFLAGS, *includes, "-c", src, "-o", obj])


def link_suite(cxx, objs, exe, libs, gtest_libs, deps):
    """Link the test objects into one executable, as upstream's CMake does
    (a file's tests may use types another file registers at start-up).
    Objects with references the implementation cannot resolve are left out,
    one round at a time; returns {object: linker output} for those."""
    left_out: dict[str, str] = {}
    while True:
        keep = [o for o in objs if o not in left_out]
        if not keep:
            return left_out
        if newer(exe, *keep, *[d for d in deps if os.path.exists(d)]) and os.path.exists(exe + ".objs") \
                and open(exe + ".objs").read() == "\n".join(keep):
            return left_out
        rc, text = run_quiet([cxx, *keep, "-o", exe, *gtest_libs, "-lgtest_main", "-lgtest", *libs, "-pthread"])
        if rc == 0:
            with open(exe + ".objs", "w") as f:
                f.write("\n".join(keep))
            return left_out
        culprits = {o for o in keep if f"{o}: in function" in text or f"{o}:(" in text}
        if not culprits:
            raise SystemExit(f"linking {exe} failed:\n{text}")
        for o in culprits:
            src = "/" + os.path.basename(o)[:-2].replace("__", "/") + ".cc:"
            left_out[o] = "\n".join(line for line in text.splitlines() if o in line or src in line)


# ---- run -----------------------------------------------------------------------

def list_tests(exe: str, out: str) -> dict[str, list[str]]:
    """{source file: [Suite.Name, ...]} from gtest's JSON listing."""
    listing = exe + ".list.json"
    subprocess.run([exe, "--gtest_list_tests", f"--gtest_output=json:{listing}"], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=120, check=True)
    by_file: dict[str, list[str]] = {}
    for suite in json.load(open(listing))["testsuites"]:
        for test in suite["testsuite"]:
            if "DISABLED_" in suite["name"] or test["name"].startswith("DISABLED_"):
                continue
            by_file.setdefault(os.path.realpath(test["file"]), []).append(f"{suite['name']}.{test['name']}")
    return by_file


def run_test(exe: str, name: str, timeout: float) -> tuple[str, str]:
    """('pass' | 'fail' | 'crash', detail) for one test in its own process."""
    try:
        p = subprocess.run([exe, f"--gtest_filter={name}"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return "crash", f"timeout after {timeout:.0f}s"
    out = p.stdout
    # Two files may define the same Suite.Name (in anonymous namespaces):
    # the filter then runs both, and they pass or fail together.
    if p.returncode == 0 and re.search(r"^\[  PASSED  \] [1-9]\d* tests?\.", out, re.M):
        return "pass", ""
    if p.returncode == 1 and "[  FAILED  ]" in out:
        return "fail", first_failure(out)
    why = (f"signal {signal.Signals(-p.returncode).name}" if p.returncode < 0
           else f"exit status {p.returncode}")
    return "crash", why + ": " + " | ".join(out.strip().splitlines()[-3:])[:300]


def first_failure(out: str) -> str:
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if "Failure" in line or "error:" in line.lower() or "exception" in line.lower():
            return " | ".join(s.strip() for s in lines[i:i + 4])[:300]
    return " | ".join(lines[-4:])[:300]


# ---- main ----------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--core-lib-dir", required=True, help="folder of libtether_core.so")
    ap.add_argument("--out", default="target/upstream_cpp_suite")
    ap.add_argument("--sdist", help="a local copy of the sdist (still sha256-checked)")
    ap.add_argument("--index", default=DEFAULT_INDEX)
    ap.add_argument("--gtest-prefix", help="a GoogleTest install (include/, lib/) instead of Debian's")
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--filter", default="", help="run only the tests of files whose path contains this")
    ap.add_argument("--check", action="store_true", help="exit 1 when tether fails a test the peer passes")
    args = ap.parse_args()

    out = os.path.abspath(args.out)
    core_dir = os.path.abspath(args.core_lib_dir)
    os.makedirs(out, exist_ok=True)
    core_lib = os.path.join(core_dir, "libtether_core.so")
    if not os.path.exists(core_lib):
        raise SystemExit(f"no {core_lib}: build the core first")

    suite_dir = extract_tests(fetch_sdist(out, args.sdist, args.index), out)
    gtest_inc, gtest_libs = ensure_gtest(args.gtest_prefix)
    peer_include, peer_lib = peer_paths()
    includes = [f"-I{peer_include}", *gtest_inc]
    sources = sorted(os.path.relpath(os.path.join(d, f), suite_dir)
                     for d, _, fs in os.walk(suite_dir) for f in fs
                     if f.startswith("test") and f.endswith(".cc"))
    libs = {impl: link_flags(impl, core_dir, peer_lib) for impl in IMPLS}
    deps = {"tether": [core_lib, os.path.join(core_dir, "libtether_testing.so")],
            "peer": [os.path.join(peer_lib, "libtvm_ffi.so")]}

    objs = {rel: os.path.join(out, "obj", rel[:-3].replace("/", "__") + ".o") for rel in sources}

    def build(rel):
        return rel, compile_one(args.cxx, os.path.join(suite_dir, rel), objs[rel], includes, suite_dir)

    log(f"compiling {len(sources)} test files ({args.jobs} jobs)")
    with cf.ThreadPoolExecutor(args.jobs) as pool:
        compiled = dict(pool.map(build, sources))
    built = {rel: {impl: ("build error", compiled[rel][1]) if compiled[rel][0] else ("ok", "")
                   for impl in IMPLS} for rel in sources}
    linked = [rel for rel in sources if not compiled[rel][0]]
    by_obj = {objs[rel]: rel for rel in linked}

    jobs = []
    for impl in IMPLS:
        exe = os.path.join(out, impl, "tvm_ffi_tests")
        os.makedirs(os.path.dirname(exe), exist_ok=True)
        log(f"linking {exe}")
        for obj, text in link_suite(args.cxx, [objs[r] for r in linked], exe, libs[impl][0],
                                    gtest_libs, deps[impl]).items():
            built[by_obj[obj]][impl] = ("link error", text)
        by_file = list_tests(exe, out) if len(linked) > sum(
            built[r][impl][0] != "ok" for r in linked) else {}
        for rel in linked:
            if built[rel][impl][0] == "ok":
                names = by_file.get(os.path.realpath(os.path.join(suite_dir, rel)), [])
                if args.filter in rel:
                    jobs += [(rel, impl, exe, name) for name in names]
    log(f"running {len(jobs)} tests, each in its own process")
    with cf.ThreadPoolExecutor(args.jobs) as pool:
        outcomes = list(pool.map(lambda j: run_test(j[2], j[3], args.timeout), jobs))
    results: dict = {rel: {impl: {} for impl in IMPLS} for rel in sources}
    for (rel, impl, _, name), outcome in zip(jobs, outcomes):
        results[rel][impl][name] = outcome
    shown = [rel for rel in sources if args.filter in rel]
    return report(shown, built, results, libs, out, args.check)


def report(sources, built, results, libs, out, check) -> int:
    kinds = ("pass", "fail", "crash")
    totals = {impl: dict.fromkeys(kinds, 0) for impl in IMPLS}
    width = max(len(s) for s in sources) if sources else 10
    head = f"{'test file':<{width}}  {'tether pass/fail/crash':>22}  {'peer pass/fail/crash':>20}"
    lines = [head, "-" * len(head)]
    for rel in sources:
        cells = []
        for impl in IMPLS:
            state, detail = built[rel][impl]
            if state != "ok":
                cells.append(state)
                continue
            c = {k: sum(1 for o, _ in results[rel][impl].values() if o == k) for k in kinds}
            for k in kinds:
                totals[impl][k] += c[k]
            cells.append("/".join(str(c[k]) for k in kinds))
        lines.append(f"{rel:<{width}}  {cells[0]:>22}  {cells[1]:>20}")
    lines.append("-" * len(head))
    cells = ["/".join(str(totals[impl][k]) for k in kinds) for impl in IMPLS]
    lines.append(f"{'total':<{width}}  {cells[0]:>22}  {cells[1]:>20}")
    lines.append("")
    for impl in IMPLS:
        lines.append(f"{impl}: {libs[impl][1]}")

    regressions = []
    for rel in sources:
        for impl in IMPLS:
            state, detail = built[rel][impl]
            if state != "ok":
                lines.append(f"\n{rel} [{impl}] {state}:\n" + "\n".join(detail.splitlines()[:15]))
        peer = results[rel]["peer"]
        for name, (outcome, detail) in sorted(results[rel]["tether"].items()):
            if outcome != "pass":
                peer_outcome = peer.get(name, ("missing", ""))[0]
                regressions.append((rel, name, outcome, peer_outcome, detail))
    if regressions:
        lines.append("\ntests tether does not pass (outcome on tether, on the peer, first lines):")
        for rel, name, outcome, peer_outcome, detail in regressions:
            lines.append(f"  {name} ({rel}): {outcome}, peer {peer_outcome}: {detail}")
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(out, "report.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    if check and any(p == "pass" for _, _, _, p, _ in regressions):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
