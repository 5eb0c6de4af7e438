"""`make bench-tvm`: Apache TVM 0.27's own work timed on tether (serving
as tvm_ffi) and on apache-tvm-ffi, side by side in one run.

    python tools/tvm_client/bench.py [--dir target/tvm-client] [--runs 3] [--out DIR]

Each workload of timed.py runs in a fresh process, the two libraries
alternated, `--runs` times each; the table gives each side's minimum and
the ratio tether / peer (lower is better). The environment is run_steps.py's
(TVM in a venv of its own, the steps on this interpreter). Writes
bench_tvm.json to --out. Exit status 2 when TVM cannot be set up.

With ``--tvm-tests DIR`` (a checkout of the apache/tvm repository, made
by the user; this benchmark downloads nothing) it also times TVM's own
tests: every file of its ``tests/python/{ir,runtime,tirx-base,tvmscript}``
folders under pytest, one file per process, the two libraries alternated
file by file, and compares the total wall time and the tests passed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import run_steps  # noqa: E402

TIMED = Path(__file__).resolve().parent / "timed.py"
WORKLOADS = ["import", "error_cpp", "error_callback", "tvmscript_roundtrip", "te_matmul", "relax_build_run"]
LABELS = {
    "import": "import tvm",
    "error_cpp": "error: C++ raise caught in Python",
    "error_callback": "error: Python raise through C++",
    "tvmscript_roundtrip": "TVMScript print/parse/equal",
    "te_matmul": "te matmul build + run",
    "relax_build_run": "Relax build + run on the VM",
}


def measure(side: str, workload: str, site: str) -> dict:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("TETHER_PROVIDE_TVM_FFI", None)
    if side == "tether":
        env["TETHER_PROVIDE_TVM_FFI"] = "1"
    cmd = [sys.executable, "-c", run_steps._BOOT, site, str(TIMED), workload]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=TIMED.parent)
    if proc.returncode != 0:
        raise RuntimeError(f"{workload} on {side} failed:\n{proc.stdout[-2000:]}{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


TEST_FOLDERS = ["ir", "runtime", "tirx-base", "tvmscript"]

# A pytest process over one file of TVM's tests: TVM's site-packages after
# the interpreter's own (as for the steps), the file's folder first.
_PYTEST_BOOT = (
    "import sys; sys.path.append(sys.argv[1]); import pytest; "
    "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', sys.argv[2]]))"
)


def time_test_file(side: str, path: Path, checkout: Path, site: str) -> dict:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("TETHER_PROVIDE_TVM_FFI", None)
    if side == "tether":
        env["TETHER_PROVIDE_TVM_FFI"] = "1"
    t = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-c", _PYTEST_BOOT, site, str(path)], env=env, capture_output=True,
                              text=True, timeout=900, cwd=checkout)
        out, code = proc.stdout, proc.returncode
    except subprocess.TimeoutExpired:
        out, code = "", "timeout"
    seconds = time.perf_counter() - t
    m = re.search(r"(\d+) passed", out)
    return {"seconds": seconds, "passed": int(m.group(1)) if m else 0, "exit": code}


def time_tvm_tests(checkout: Path, site: str) -> dict:
    files = sorted(f for d in TEST_FOLDERS for f in (checkout / "tests" / "python" / d).glob("test_*.py"))
    if not files:
        raise SystemExit(f"no test files under {checkout}/tests/python/{{{','.join(TEST_FOLDERS)}}}")
    totals = {"tether": {"seconds": 0.0, "passed": 0}, "peer": {"seconds": 0.0, "passed": 0}}
    fewer = []
    for i, f in enumerate(files):
        # Alternate which side goes first, so neither always meets a cold cache.
        order = ("tether", "peer") if i % 2 == 0 else ("peer", "tether")
        r = {side: time_test_file(side, f, checkout, site) for side in order}
        for side in totals:
            totals[side]["seconds"] += r[side]["seconds"]
            totals[side]["passed"] += r[side]["passed"]
        if r["tether"]["passed"] < r["peer"]["passed"]:
            fewer.append(f"{f.relative_to(checkout)}: {r['tether']['passed']} < {r['peer']['passed']}")
    return {"files": len(files), "totals": totals, "tether_passes_fewer": fewer}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default=os.path.join("target", "tvm-client"))
    ap.add_argument("--out", default=os.path.join("target", "bench-tvm"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tvm-tests", type=Path, help="a checkout of apache/tvm whose tests/python folders to time")
    ap.add_argument("workloads", nargs="*", help="default: all")
    args = ap.parse_args(argv)
    root = Path(args.dir).resolve()
    root.mkdir(parents=True, exist_ok=True)
    try:
        run_steps.check_interpreter()
        site = run_steps.setup_tvm_venv(root)
        run_steps.ensure_compiler()
    except subprocess.CalledProcessError as e:
        print(f"setup failed: {e}", file=sys.stderr)
        return 2
    rows = []
    print(f"\n{'workload':<36}{'tether':>12}{'peer':>12}{'ratio':>8}")
    for w in args.workloads or WORKLOADS:
        samples: dict = {"tether": [], "peer": []}
        for _ in range(args.runs):
            for side in ("tether", "peer"):
                samples[side].append(measure(side, w, site))
        best = {s: min(samples[s], key=lambda r: r["seconds"]) for s in samples}
        row = {"workload": w, "tether_s": best["tether"]["seconds"], "peer_s": best["peer"]["seconds"]}
        row["ratio"] = row["tether_s"] / row["peer_s"]
        unit, scale = ("us", 1e6) if w.startswith("error") else ("ms", 1e3)
        print(f"{LABELS[w]:<36}{row['tether_s'] * scale:>9.1f} {unit}{row['peer_s'] * scale:>9.1f} {unit}"
              f"{row['ratio']:>8.2f}", flush=True)
        if w == "import":
            row["tether_peak_rss_mb"] = min(r["peak_rss_mb"] for r in samples["tether"])
            row["peer_peak_rss_mb"] = min(r["peak_rss_mb"] for r in samples["peer"])
            ratio = row["tether_peak_rss_mb"] / row["peer_peak_rss_mb"]
            print(f"{'import tvm: peak RSS':<36}{row['tether_peak_rss_mb']:>9.1f} MB{row['peer_peak_rss_mb']:>9.1f} MB"
                  f"{ratio:>8.2f}", flush=True)
        rows.append(row)
    result = {"runs": args.runs, "rows": rows}
    status = 0
    if args.tvm_tests:
        tests = time_tvm_tests(args.tvm_tests.resolve(), site)
        t, p = tests["totals"]["tether"], tests["totals"]["peer"]
        label = f"TVM tests ({tests['files']} files)"
        print(f"{label:<36}{t['seconds']:>10.1f} s{p['seconds']:>10.1f} s{t['seconds'] / p['seconds']:>8.2f}")
        print(f"{'  tests passed':<36}{t['passed']:>12}{p['passed']:>12}")
        for line in tests["tether_passes_fewer"]:
            print(f"  tether passes fewer: {line}")
        result["tvm_tests"] = tests
        status = 1 if tests["tether_passes_fewer"] else 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_tvm.json").write_text(json.dumps(result, indent=2))
    return status


if __name__ == "__main__":
    sys.exit(main())
