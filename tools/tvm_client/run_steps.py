"""Run a real client of tvm_ffi -- Apache TVM 0.27 -- step by step against
tether serving as tvm_ffi and against apache-tvm-ffi itself, and print the
results side by side.

    python tools/tvm_client/run_steps.py [--dir target/tvm-client] [--only tether|peer] [steps...]

Environment. TVM is pip-installed (``--no-deps``) into a venv of its own
under --dir, with the runtime requirements its wheel's METADATA lists
(Requires-Dist without an extra marker, apache-tvm-ffi left out). The
steps do not run on that venv's interpreter: they run on the interpreter
running this script (the repo's .venv, where ``make python`` installed
tether and the Makefile pinned the peer apache-tvm-ffi), with the TVM
venv's site-packages appended to sys.path. So there is one tether build
(the one under test), no second maturin build, and packages of the running
interpreter (numpy, tvm_ffi) win over the TVM venv's copies.

Each step runs in its own process with a timeout: once with
TETHER_PROVIDE_TVM_FFI=1 (tether's .pth aliases tvm_ffi to tether before
TVM loads, so TVM's native libraries bind to tether's libtvm_ffi.so), once
without it (the peer). The steps are in steps.py. export_library needs a C
compiler to link; when none is found the script installs gcc with apt-get
(as root) or reports it.

The exit status is 0 when every step that passes on the peer also passes
on tether; 1 otherwise (2 when the environment cannot be set up).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

TVM = "apache-tvm==0.27.0.post1"
PEER_VERSION = "0.1.15.post2"
STEPS_FILE = Path(__file__).resolve().parent / "steps.py"
STEPS = [
    "import",
    "tvmscript_vadd",
    "te_matmul",
    "script_roundtrip",
    "structural_equal_hash",
    "relax_vm",
    "export_load",
    "json_roundtrip",
]
_TIMEOUT = 600

# The step process: TVM's site-packages after the interpreter's own, then
# steps.py as __main__ (run from its file, so TVMScript can read the source).
_BOOT = (
    "import sys, runpy; sys.path.append(sys.argv[1]); "
    "sys.argv = [sys.argv[2], sys.argv[3]]; runpy.run_path(sys.argv[0], run_name='__main__')"
)


def _run(cmd, **kw):
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


def setup_tvm_venv(root: Path) -> str:
    """The TVM venv's site-packages, creating and filling the venv when needed."""
    env_dir = root / "venv"
    py = env_dir / "bin" / "python"
    stamp = env_dir / ".tvm-client-deps"
    if not py.exists():
        venv.EnvBuilder(with_pip=True).create(env_dir)
    if not stamp.exists() or stamp.read_text() != TVM:
        _run([py, "-m", "pip", "install", "--quiet", "--no-deps", TVM])
        requires = subprocess.run(
            [py, "-c", "import importlib.metadata as m; print('\\n'.join(m.requires('apache-tvm') or []))"],
            check=True, capture_output=True, text=True).stdout.splitlines()
        reqs = []
        for req in requires:
            if "extra ==" in req or not req.strip():
                continue
            name = re.split(r"[\s;<>=!~\[(]", req.strip(), maxsplit=1)[0]
            if name.lower().replace("_", "-") == "apache-tvm-ffi":
                continue
            reqs.append(req.split(";")[0].strip())
        if reqs:
            _run([py, "-m", "pip", "install", "--quiet", *reqs])
        stamp.write_text(TVM)
    return subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()


def check_interpreter() -> None:
    """The running interpreter must hold tether and the pinned peer."""
    for dist, want in (("tether", None), ("apache-tvm-ffi", PEER_VERSION)):
        try:
            have = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            sys.exit(f"{dist} is not installed in {sys.executable} (run `make python`)")
        if want and have != want:
            sys.exit(f"{dist} {have} is installed in {sys.executable}; the peer column needs {want}")


def ensure_compiler() -> None:
    """export_library links with the system C compiler."""
    if shutil.which(os.environ.get("CXX", "g++")) or shutil.which("gcc") or shutil.which("cc"):
        return
    if os.geteuid() == 0 and shutil.which("apt-get"):
        _run(["apt-get", "update", "-qq"])
        _run(["apt-get", "install", "-y", "-qq", "gcc", "g++"])
        return
    print("warning: no C compiler found; export_load will fail", file=sys.stderr)


def run_step(side: str, step: str, site: str) -> tuple[bool, str]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", TVM_CLIENT_SIDE=side)
    env.pop("TETHER_PROVIDE_TVM_FFI", None)
    if side == "tether":
        env["TETHER_PROVIDE_TVM_FFI"] = "1"
    cmd = [sys.executable, "-c", _BOOT, site, str(STEPS_FILE), step]
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=_TIMEOUT,
                              cwd=STEPS_FILE.parent)
    except subprocess.TimeoutExpired:
        return False, f"timed out after {_TIMEOUT}s"
    out = proc.stdout + proc.stderr
    if proc.returncode == 0:
        return True, ""
    if proc.returncode < 0:
        return False, f"killed by signal {-proc.returncode}"
    return False, first_error(out)


def first_error(out: str) -> str:
    """The exception line of a traceback (the last line that names an error)."""
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if re.match(r"^[\w.]+(Error|Exception|Interrupt)\b", ln) or ln.startswith("AssertionError"):
            return ln
    return lines[-1] if lines else "no output"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default=os.path.join("target", "tvm-client"))
    ap.add_argument("--only", choices=("tether", "peer"))
    ap.add_argument("--verbose", action="store_true", help="print each failing step's whole output tail")
    ap.add_argument("steps", nargs="*", help="default: all")
    args = ap.parse_args(argv)
    root = Path(args.dir).resolve()
    root.mkdir(parents=True, exist_ok=True)
    try:
        check_interpreter()
        site = setup_tvm_venv(root)
        ensure_compiler()
    except subprocess.CalledProcessError as e:
        print(f"setup failed: {e}", file=sys.stderr)
        return 2
    steps = args.steps or STEPS
    sides = [args.only] if args.only else ["tether", "peer"]
    results = {}
    print(f"\n{'step':<24}" + "".join(f"{s:>8}" for s in sides) + "  first error")
    for step in steps:
        i = STEPS.index(step) + 1
        row = {s: run_step(s, step, site) for s in sides}
        results[step] = row
        err = " | ".join(f"[{s}] {row[s][1][:110]}" for s in sides if not row[s][0])
        print(f"{f'{i}. {step}':<24}" + "".join(f"{'pass' if row[s][0] else 'FAIL':>8}" for s in sides)
              + f"  {err}", flush=True)
    worse = [st for st, row in results.items()
             if "tether" in row and not row["tether"][0] and ("peer" not in row or row["peer"][0])]
    if worse:
        print(f"\ntether fails where the peer passes: {', '.join(worse)}")
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
