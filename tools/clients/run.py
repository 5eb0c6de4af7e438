#!/usr/bin/env python3
"""Clients of apache-tvm-ffi published on PyPI, run on both libraries
(``make test-clients``).

Each client's published wheel is pip-installed, at the pinned version, into
two virtual environments under ``--work``:

* ``peer``: with apache-tvm-ffi (the pinned peer), as published;
* ``tether``: the same, then apache-tvm-ffi uninstalled and tether
  installed (a wheel built from ./python with this interpreter, or
  ``--tether-wheel``), run with ``TETHER_PROVIDE_TVM_FFI=1``.

Each client's own tests come from its source distribution on the package
index at test time (pinned file name and sha256, checked; extracted under
``--work``, never copied into this repository) and run one file per
process with pytest on both sides. The table printed at the end gives,
per client, the tests passing on each side and how many the peer passes
and tether does not; ``--work``/report.json keeps every test's outcome and
``--work``/regressions.txt the names of those tests.

``--peer-headers`` adds a third column: tether with the peer's C++ headers
on its include path (``TETHER_TVM_FFI_INCLUDE_DIR`` set to the peer
environment's copy), for the clients that compile against ``<tvm/ffi/...>``
at run time; those counts measure what tether alone lacks (its own
headers), so they are reported apart and never replace the plain ones.

Clients whose tests are not published in a source distribution are
listed with the reason (the network here reaches package registries
only); apache-tvm-ffi-orcjit gets a smoke check of this runner's own (an
object file JIT-loaded and called). GPU-only test files are
skipped, each with its reason.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "upstream_sdist"))
from sdist import sha256 as file_sha256  # noqa: E402  (one file digest for every pinned download)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "junit_report"))
from junit_report import case_outcomes  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PEER = "apache-tvm-ffi==0.1.15.post2"
# PyTorch before 2.10 has no DLPack exchange table of its own: the case
# torch-c-dlpack-ext (and tether's optional add-on) exist for.
TORCH = "torch==2.9.1"
INDEX = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple")
FILE_TIMEOUT = 1800  # seconds per test file


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@dataclasses.dataclass(frozen=True)
class Sdist:
    project: str
    filename: str
    sha256: str

    @property
    def top(self) -> str:
        return self.filename[: -len(".tar.gz")]


APACHE_TVM_FFI_SDIST = Sdist("apache-tvm-ffi", "apache_tvm_ffi-0.1.15.post2.tar.gz",
                             "909be9ef5af07726aa9afd38a3111abc4d86cfd5927ebedfa9166232ce7d287b")


@dataclasses.dataclass(frozen=True)
class Client:
    name: str
    requirements: tuple  # pip requirements (the client pinned, plus what its tests import)
    sdist: Sdist | None
    tests: str = ""  # folder of test files inside the sdist
    files: tuple = ()  # explicit test files (relative to `tests`); empty: every test_*.py
    pytest_args: tuple = ()
    skip: tuple = ()  # (file, reason) pairs not run on this machine
    needs_headers: bool = False  # compiles against <tvm/ffi/...> while testing
    not_run: str = ""  # why the client's tests cannot run here at all
    smoke: str = ""  # a smoke check of this runner's own (SMOKES), run when no tests are published


CLIENTS = (
    Client(
        "xgrammar",
        ("xgrammar==0.2.9", TORCH, "pytest", "protobuf", "sentencepiece", "tiktoken"),
        Sdist("xgrammar", "xgrammar-0.2.9.tar.gz", "87b466bca2475e29bb0323abc62c6c33cbcbcff47e5fb800a3e2099ac9620b90"),
        tests="tests/python",
        # Tokenizers come from the Hugging Face hub, which is not reachable
        # here: those tests are deselected by the suite's own marker.
        pytest_args=("-m", "not hf_token_required"),
    ),
    Client(
        "flashinfer-python",
        ("flashinfer-python==0.7.2.post1", TORCH, "pytest"),
        Sdist("flashinfer-python", "flashinfer_python-0.7.2.post1.tar.gz",
              "af60319898dcfd552ba12a34165b9dd46c0bbd83d48ce665b1df6bd6ae77e9f1"),
        tests="tests",
        needs_headers=True,
    ),
    Client(
        "jax-tvm-ffi",
        ("jax-tvm-ffi==0.1.3", "jax", "pytest", "ninja"),
        Sdist("jax-tvm-ffi", "jax_tvm_ffi-0.1.3.tar.gz",
              "e85813d8936f0932b429e01535cc31d5ef20a3a4e66e3cca7cada1d25804fed1"),
        tests="tests",
        needs_headers=True,
    ),
    Client(
        "torch-c-dlpack-ext",
        ("torch-c-dlpack-ext==0.1.5", TORCH, "pytest", "numpy"),
        # Its sdist has no tests: apache-tvm-ffi's own PyTorch tests exercise it.
        APACHE_TVM_FFI_SDIST,
        tests="tests/python",
        files=("test_optional_torch_c_dlpack.py", "test_dlpack_exchange_api.py",
               "test_container_dlpack_conversion.py"),
        # Its pytest configuration asks for pytest-xdist (-n): one file per process here instead.
        pytest_args=("-o", "addopts="),
    ),
    # Its tests are published only in its source repository (no sdist on
    # the index): a smoke check of this runner's own instead.
    Client("apache-tvm-ffi-orcjit", ("apache-tvm-ffi-orcjit==0.1.3",), None, smoke="orcjit"),
    Client("apache-tvm-tirx", ("apache-tvm-tirx==0.1.0a4",), None,
           not_run="it publishes no tests (wheel only)"),
)


# ---- fetching sources --------------------------------------------------------

def sdist_url(s: Sdist) -> str:
    page = INDEX.rstrip("/") + f"/{s.project}/"
    req = urllib.request.Request(page, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=120) as resp:
        files = json.loads(resp.read())["files"]
    urls = [f["url"] for f in files if f["filename"] == s.filename]
    if not urls:
        raise SystemExit(f"{s.filename} is not listed at {page}")
    return urllib.parse.urljoin(page, urls[0].split("#")[0])


def fetch(s: Sdist, work: str) -> str:
    """The extracted sdist's top folder (downloaded and checked once)."""
    cache = os.path.join(work, "sdists")
    os.makedirs(cache, exist_ok=True)
    archive = os.path.join(cache, s.filename)
    if not os.path.exists(archive):
        url = sdist_url(s)
        log(f"downloading {url}")
        urllib.request.urlretrieve(url, archive + ".part")
        os.replace(archive + ".part", archive)
    got = file_sha256(archive)
    if got != s.sha256:
        os.remove(archive)
        raise SystemExit(f"{s.filename}: sha256 {got} is not the pinned {s.sha256}")
    dest = os.path.join(work, "src", s.top)
    if not os.path.isdir(dest):
        tmp = dest + ".part"
        shutil.rmtree(tmp, ignore_errors=True)
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(tmp)
        os.replace(os.path.join(tmp, s.top), dest)
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


# ---- environments ------------------------------------------------------------

def run(cmd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, text=True, **kw)


def venv_python(work: str, side: str) -> str:
    return os.path.join(work, "venv-" + side, "bin", "python")


def ensure_venv(work: str, side: str, requirements: list, tether_wheel: str | None) -> str:
    """The side's interpreter, with `requirements` (and, for tether, the
    wheel instead of apache-tvm-ffi) installed; a stamp skips a repeat."""
    py = venv_python(work, side)
    stamp = os.path.join(work, "venv-" + side, ".clients-stamp")
    want = json.dumps({"req": sorted(requirements), "wheel": tether_wheel and file_sha256(tether_wheel)})
    if os.path.exists(stamp) and open(stamp).read() == want:
        return py
    if not os.path.exists(py):
        run([sys.executable, "-m", "venv", os.path.dirname(os.path.dirname(py))], check=True)
    log(f"[{side}] pip install {' '.join(requirements)}")
    proc = run([py, "-m", "pip", "install", "--quiet", "--index-url", INDEX, *requirements, PEER])
    if proc.returncode != 0:
        raise SystemExit(f"[{side}] installing the clients failed")
    if side == "tether":
        run([py, "-m", "pip", "uninstall", "--quiet", "--yes", "apache-tvm-ffi"], check=True)
        proc = run([py, "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall", tether_wheel])
        if proc.returncode != 0:
            raise SystemExit(f"[{side}] installing {tether_wheel} failed")
    with open(stamp, "w") as f:
        f.write(want)
    return py


def build_tether_wheel(work: str) -> str:
    """A tether wheel built from ./python with this interpreter (which has
    maturin: make's .venv)."""
    out = os.path.join(work, "wheels")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    log("building the tether wheel from ./python")
    proc = run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-build-isolation", "--no-deps",
                os.path.join(REPO, "python"), "-w", out], env=env)
    if proc.returncode != 0:
        raise SystemExit("building the tether wheel failed")
    wheels = [os.path.join(out, w) for w in os.listdir(out) if w.endswith(".whl")]
    if len(wheels) != 1:
        raise SystemExit(f"expected one wheel in {out}, found {wheels}")
    return wheels[0]


def peer_include(work: str) -> str:
    py = venv_python(work, "peer")
    out = run([py, "-c", "import tvm_ffi.libinfo as l; print(l.find_include_path())"], capture_output=True,
              check=True)
    return out.stdout.strip()


# ---- smoke checks (this runner's own code, for clients publishing no tests) ---

SMOKES = {
    # An object file written against TVM-FFI's headers (found through
    # tvm_ffi.libinfo), compiled, loaded with LLVM ORC JIT, called: the JIT
    # resolves the object's TVMFFI* references in the process (the C ABI
    # must be visible process-wide).
    "orcjit": (
        "#include <tvm/ffi/function.h>\n"
        "int add_one_impl(int x) { return x + 1; }\n"
        "TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_one, add_one_impl);\n",
        "import subprocess, sys, tvm_ffi, tvm_ffi.libinfo as l, tvm_ffi_orcjit as oj\n"
        "inc = [l.find_include_path(), l.find_dlpack_include_path()]\n"
        "subprocess.run(['c++', '-std=c++17', '-fPIC', '-c', 'smoke.cc', '-o', 'smoke.o']\n"
        "               + ['-I' + d for d in inc], check=True)\n"
        "m = oj.default_session().load_module('smoke.o')\n"
        "assert m.add_one(41) == 42\n",
    ),
}


def run_smoke(py: str, client: Client, env: dict, work: str, side: str) -> dict:
    source, script = SMOKES[client.smoke]
    folder = os.path.join(work, "smoke", client.name, side)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    with open(os.path.join(folder, "smoke.cc"), "w") as f:
        f.write(source)
    try:
        proc = run([py, "-c", script], cwd=folder, env=env, capture_output=True, timeout=FILE_TIMEOUT)
        ok, tail = proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    except subprocess.TimeoutExpired:
        ok, tail = False, "timeout"
    with open(os.path.join(folder, "smoke.log"), "w") as f:
        f.write(tail)
    return {f"smoke::{client.smoke}": "passed" if ok else "failed"}


# ---- running -----------------------------------------------------------------

def side_env(side: str, py: str, include: str | None) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TETHER_", "VIRTUAL_ENV", "PYTHONPATH", "TVM_FFI_"))}
    # The environment's scripts (ninja, which tvm_ffi.cpp builds with) first.
    env["PATH"] = os.path.dirname(py) + os.pathsep + env.get("PATH", "")
    # Nothing here reaches the Hugging Face hub: fail fast, the same on both sides.
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", XGRAMMAR_TEST_OFFLINE="1",
               CUDA_VISIBLE_DEVICES="", PYTHONDONTWRITEBYTECODE="1")
    if side != "peer":
        env["TETHER_PROVIDE_TVM_FFI"] = "1"
    if include:
        env["TETHER_TVM_FFI_INCLUDE_DIR"] = include
    return env


def outcomes(xml_path: str) -> dict:
    """Test id -> passed/failed/skipped, from pytest's JUnit report."""
    return {f"{case.get('classname')}::{case.get('name')}": outcome for case, outcome in case_outcomes(xml_path)}


def run_file(py: str, root: str, test_file: str, client: Client, env: dict, xml_path: str) -> dict:
    """One file in its own process; its tests' outcomes, or a single
    ``<file>::<crash|timeout>`` entry when pytest left no report."""
    if os.path.exists(xml_path):
        os.remove(xml_path)
    cmd = [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml", xml_path, *client.pytest_args,
           os.path.relpath(test_file, root)]
    try:
        proc = run(cmd, cwd=root, env=env, capture_output=True, timeout=FILE_TIMEOUT)
        code = proc.returncode
        tail = (proc.stdout + proc.stderr)[-3000:]
    except subprocess.TimeoutExpired:
        code, tail = "timeout", ""
    rel = os.path.relpath(test_file, root)
    if not os.path.exists(xml_path):
        return {f"{rel}::<{code}>": "failed"}, tail
    res = outcomes(xml_path)
    if code not in (0, 1, 5):  # pytest's own codes: ok, failures, nothing collected
        res[f"{rel}::<exit {code}>"] = "failed"
    return res, tail


def test_files(client: Client, root: str) -> list:
    folder = os.path.join(root, client.tests)
    names = client.files or sorted(n for n in os.listdir(folder) if n.startswith("test_") and n.endswith(".py"))
    skipped = dict(client.skip)
    return [os.path.join(folder, n) for n in names if n not in skipped]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default=os.path.join(REPO, "target", "clients"))
    ap.add_argument("--clients", default="", help="comma-separated names (default: all)")
    ap.add_argument("--tether-wheel", help="a built tether wheel (default: build one from ./python)")
    ap.add_argument("--peer-headers", action="store_true",
                    help="also run tether with the peer's C++ headers on its include path (reported apart)")
    ap.add_argument("--files", default="", help="comma-separated test file names to run (default: all)")
    ap.add_argument("--table-only", action="store_true", help="print the table of the last runs (report.json)")
    ap.add_argument("--sides", default="peer,tether",
                    help="which sides to run (comma-separated: peer, tether); the others' last results are kept")
    args = ap.parse_args()
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    chosen = [c for c in CLIENTS if not args.clients or c.name in args.clients.split(",")]
    report_path = os.path.join(work, "report.json")
    if args.table_only:
        report = json.load(open(report_path)) if os.path.exists(report_path) else {}
        sides = ["peer", "tether"] + (["tether+headers"] if args.peer_headers else [])
        print_table(chosen, report, sides, work)
        return 0
    runnable = [c for c in chosen if not c.not_run]
    requirements = sorted({r for c in runnable for r in c.requirements})
    wheel = os.path.abspath(args.tether_wheel) if args.tether_wheel else build_tether_wheel(work)
    pys = {"peer": ensure_venv(work, "peer", requirements, None),
           "tether": ensure_venv(work, "tether", requirements, wheel)}
    sides = ["peer", "tether"] + (["tether+headers"] if args.peer_headers else [])
    include = peer_include(work) if args.peer_headers else None
    to_run = set(args.sides.split(",")) | ({"tether+headers"} if args.peer_headers else set())
    report = json.load(open(report_path)) if os.path.exists(report_path) else {}
    only = set(filter(None, args.files.split(",")))
    for c in runnable:
        root = fetch(c.sdist, work) if c.sdist else ""
        entry = report.setdefault(c.name, {})
        for side in sides:
            if side not in to_run or (side == "tether+headers" and not c.needs_headers):
                continue
            py = pys["tether" if side.startswith("tether") else "peer"]
            env = side_env(side, py, include if side == "tether+headers" else None)
            results = entry.setdefault(side, {})
            if c.smoke:
                results["smoke"] = run_smoke(py, c, env, work, side)
                log(f"[{side}] {c.name} smoke: {results['smoke']}")
            for f in test_files(c, root) if not c.smoke else ():
                if only and os.path.basename(f) not in only:
                    continue
                t0 = time.time()
                xml_path = os.path.join(work, "junit", c.name, side, os.path.basename(f) + ".xml")
                os.makedirs(os.path.dirname(xml_path), exist_ok=True)
                res, tail = run_file(py, root, f, c, env, xml_path)
                rel = os.path.relpath(f, root)
                results[rel] = res
                n = sum(v == "passed" for v in res.values())
                log(f"[{side}] {c.name} {rel}: {n}/{len(res)} passed ({time.time() - t0:.0f} s)")
                if n < len(res) and side != "peer":
                    with open(os.path.join(work, "junit", c.name, side, os.path.basename(f) + ".log"), "w") as fh:
                        fh.write(tail)
            with open(report_path, "w") as fh:
                json.dump(report, fh, indent=1, sort_keys=True)
    print_table(chosen, report, sides, work)
    return 0


def flat(side_results: dict) -> dict:
    return {tid: v for per_file in side_results.values() for tid, v in per_file.items()}


def lost_in_file(peer: dict, teth: dict) -> list:
    """Tests of one file the peer passes and tether does not. Some suites
    name parametrized cases after values whose order varies from run to
    run (sets): a passing case whose name the other side lacks is matched
    against the other side's unmatched passing cases, not counted lost."""
    passed = [t for t, v in peer.items() if v == "passed"]
    lost = [t for t in passed if t in teth and teth[t] != "passed"]
    missing = [t for t in passed if t not in teth]
    unmatched = [t for t, v in teth.items() if v == "passed" and t not in peer]
    return sorted(lost + missing[: max(0, len(missing) - len(unmatched))])


def print_table(chosen, report, sides, work) -> None:
    head = ["client", "peer passed", "tether passed", "peer-only passes"]
    if "tether+headers" in sides:
        head.append("tether + peer headers (workaround)")
    rows, regressions = [], []
    totals = [0, 0, 0, 0]
    for c in chosen:
        if c.not_run:
            rows.append([c.name, "-", "-", f"not run: {c.not_run}"] + (["-"] if len(head) > 4 else []))
            continue
        entry = report.get(c.name, {})
        peer, teth = flat(entry.get("peer", {})), flat(entry.get("tether", {}))
        pp = sum(v == "passed" for v in peer.values())
        tp = sum(v == "passed" for v in teth.values())
        lost = []
        for f, per_file in entry.get("peer", {}).items():
            lost += lost_in_file(per_file, entry.get("tether", {}).get(f, {}))
        regressions += [f"{c.name}: {t}" for t in lost]
        row = [c.name + (" (smoke check; its tests are not published)" if c.smoke else ""), str(pp), str(tp),
               str(len(lost))]
        totals[0] += pp
        totals[1] += tp
        totals[2] += len(lost)
        if len(head) > 4:
            if c.needs_headers:
                th = flat(entry.get("tether+headers", {}))
                n = sum(v == "passed" for v in th.values())
                totals[3] += n
                row.append(str(n))
            else:
                row.append("(no headers needed)")
        rows.append(row)
    rows.append(["**total**", str(totals[0]), str(totals[1]), str(totals[2])] +
                ([str(totals[3])] if len(head) > 4 else []))
    print("| " + " | ".join(head) + " |")
    print("| " + " | ".join(["---"] + ["---:"] * (len(head) - 1)) + " |")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    with open(os.path.join(work, "regressions.txt"), "w") as fh:
        fh.write("\n".join(regressions) + ("\n" if regressions else ""))


if __name__ == "__main__":
    sys.exit(main())
