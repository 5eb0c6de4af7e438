"""Build apache-tvm-ffi's own CMake examples, unmodified, against tether's
``tvm_ffi`` CMake package, and report pass/fail per check.

    python tools/cmake_examples/run.py [--cache target/upstream] [--work target/cmake_examples]
                                       [--only NAME ...] [--tether-wheel WHEEL]

The examples come from the pinned, sha256-checked sdist
(tools/upstream_sdist), extracted afresh under ``--work`` on every run and
never copied into this repository. The checks:

* ``quickstart``: ``examples/quickstart/run_all_cpu.sh`` -- CMake builds
  ``add_one_cpu.so``, ``load/load_numpy.py`` calls it on NumPy arrays, CMake
  builds and runs ``load_cpp`` -- on this interpreter with
  ``TETHER_PROVIDE_TVM_FFI=1`` (the CMakeLists asks ``python -m
  tvm_ffi.config --cmakedir`` where the package is);
* ``raw_compile``: ``examples/quickstart/raw_compile.sh``, the same library
  and program built with ``g++ $(tvm-ffi-config --cxxflags) ...``;
* ``python_packaging``: ``examples/python_packaging`` pip-installed
  (scikit-build-core, no build isolation) into a venv whose ``tvm_ffi`` is
  tether and which holds no apache-tvm-ffi, then its ``run_example.py``;
* ``consumer``: tests/cmake/consumer, this repository's own project: a
  program on TVM-FFI's headers built and run, and each misuse of the
  package stopping with its message.

Every library built must link libtether_core, directly or through the
libtvm_ffi.so tether ships (a filter library on the core, which
``tvm-ffi-config --libs`` names while tether serves as tvm_ffi), and not
apache-tvm-ffi's libtvm_ffi. The venv is ``--work``/venv; it links the tether installed for
this interpreter (``make python``'s) unless ``--tether-wheel`` names a
wheel to install. pip fetches scikit-build-core from the package index
once. Exit status 1 when any check fails.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "upstream_sdist"))
from sdist import DEFAULT_INDEX, extract_example, fetch_sdist  # noqa: E402

REPO = Path(__file__).resolve().parent.parent.parent
CONSUMER_SOURCE = REPO / "tests" / "cmake" / "consumer"
_TIMEOUT = 900


class CheckFailed(Exception):
    """A check's expectation did not hold; the message says which."""


def run(cmd, *, cwd, env, log: Path, timeout: int = _TIMEOUT) -> subprocess.CompletedProcess:
    """Run ``cmd``, appending its command line and output to ``log``."""
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"$ {' '.join(map(str, cmd))}   (in {cwd}, exit {proc.returncode})\n")
        f.write(proc.stdout + proc.stderr + "\n")
    return proc


def expect_success(proc: subprocess.CompletedProcess, what: str) -> None:
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr)[-1500:]
        raise CheckFailed(f"{what} exited with {proc.returncode}:\n{tail}")


def needed_libraries(path: Path) -> list:
    """The DT_NEEDED entries of ELF file ``path`` (readelf), or None where
    readelf is not available (not an ELF toolchain)."""
    readelf = shutil.which("readelf")
    if readelf is None or sys.platform != "linux":
        return None
    out = subprocess.run([readelf, "-d", str(path)], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def tether_filter_library() -> Path | None:
    """The installed tether's ``libtvm_ffi.so`` when it is what tether
    ships: a filter library on libtether_core (every symbol resolves to the
    core). None otherwise, or where readelf cannot tell."""
    readelf = shutil.which("readelf")
    if readelf is None or sys.platform != "linux":
        return None
    path = Path(importlib.metadata.distribution("tether").locate_file("tether/libtvm_ffi.so"))
    if not path.is_file():
        return None
    out = subprocess.run([readelf, "-d", str(path)], capture_output=True, text=True, check=True).stdout
    return path if re.search(r"\(FILTER\)\s+Filter library: \[libtether_core\.so\]", out) else None


def expect_links_tether(path: Path) -> str:
    """``path`` must need libtether_core, or ``libtvm_ffi.so`` where that is
    tether's filter library on the core: tvm-ffi-config answers ``-L<tether's
    directory> -ltvm_ffi`` while tether serves as tvm_ffi, so a build that
    follows it links tether's. A note for the report."""
    if not path.is_file():
        raise CheckFailed(f"{path} was not built")
    needed = needed_libraries(path)
    if needed is None:
        return "linkage not inspected (no readelf)"
    if any(n.startswith("libtether_core") for n in needed):
        if any(n.startswith("libtvm_ffi") for n in needed):
            raise CheckFailed(f"{path.name} links a libtvm_ffi beside libtether_core (NEEDED: {needed})")
        return f"{path.name} needs libtether_core"
    if "libtvm_ffi.so" in needed:
        if tether_filter_library() is None:
            raise CheckFailed(f"{path.name} needs libtvm_ffi.so, and the installed tether has no filter "
                              "library of that name on libtether_core")
        return f"{path.name} needs libtvm_ffi.so (tether's filter on libtether_core)"
    raise CheckFailed(f"{path.name} does not link libtether_core (NEEDED: {needed})")


def add_one_lines(text: str) -> tuple:
    """How many times the output shows [1 2 3 4 5] + 1, as NumPy prints a
    float32 array and as load_cpp prints its tensor."""
    numpy_form = re.findall(r"^\[2\. 3\. 4\. 5\. 6\.\]$", text, re.M)
    cpp_form = re.findall(r"^\[ 2 3 4 5 6 \]$", text, re.M)
    return len(numpy_form), len(cpp_form)


class Setup:
    """What every check shares: the sdist, the work directory, the tools and
    the environment in which tether serves as tvm_ffi."""

    def __init__(self, args) -> None:
        self.work = Path(args.work).resolve()
        self.work.mkdir(parents=True, exist_ok=True)
        self.logs = self.work / "logs"
        self.logs.mkdir(exist_ok=True)
        self.sdist = fetch_sdist(str(Path(args.cache).resolve()), args.sdist, args.index)
        self.tether_wheel = args.tether_wheel
        self.index = args.index
        self.bin_dir = Path(sys.executable).parent
        self.cmake = self._tool("cmake")
        self.ninja = self._tool("ninja")
        self.env = dict(os.environ)
        for var in ("PYTHONPATH", "PYTHONHOME", "TETHER_TVM_FFI_INCLUDE_DIR", "tvm_ffi_ROOT", "CMAKE_PREFIX_PATH"):
            self.env.pop(var, None)
        tool_dirs = [str(self.bin_dir)] + [str(Path(t).parent) for t in (self.cmake, self.ninja)]
        self.env["PATH"] = os.pathsep.join(dict.fromkeys(tool_dirs + [self.env.get("PATH", "")]))
        self.env["VIRTUAL_ENV"] = sys.prefix  # FindPython takes this interpreter first
        self.env["CMAKE_GENERATOR"] = "Ninja"
        self.env["TETHER_PROVIDE_TVM_FFI"] = "1"
        self.env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"

    def _tool(self, name: str) -> str:
        found = shutil.which(name, path=os.pathsep.join([str(self.bin_dir), os.environ.get("PATH", "")]))
        if found is None:
            raise SystemExit(f"{name} not found beside {sys.executable} or on PATH: "
                             f"`{sys.executable} -m pip install {name}` (make's .venv has it)")
        return found

    def example(self, name: str) -> Path:
        return Path(extract_example(self.sdist, str(self.work / name), name))

    def log(self, name: str) -> Path:
        path = self.logs / f"{name}.log"
        path.write_text("", encoding="utf-8")
        return path


def check_quickstart(s: Setup) -> str:
    src = s.example("quickstart")
    log = s.log("quickstart")
    proc = run(["bash", "run_all_cpu.sh"], cwd=src, env=s.env, log=log)
    expect_success(proc, "run_all_cpu.sh")
    out = proc.stdout + proc.stderr
    if out.count("tvm_ffi (tether): libtether_core at") != 2:
        raise CheckFailed("CMake did not configure both builds with tether's tvm_ffi package")
    numpy_lines, cpp_lines = add_one_lines(proc.stdout)
    if (numpy_lines, cpp_lines) != (1, 1):
        raise CheckFailed(f"expected add_one's result once from NumPy and once from load_cpp, got "
                          f"{numpy_lines} and {cpp_lines}:\n{proc.stdout[-1500:]}")
    notes = [expect_links_tether(src / "build" / "add_one_cpu.so"), expect_links_tether(src / "build" / "load_cpp")]
    return "; ".join(notes)


def check_raw_compile(s: Setup) -> str:
    src = s.example("quickstart")
    log = s.log("raw_compile")
    proc = run(["bash", "raw_compile.sh"], cwd=src, env=s.env, log=log)
    expect_success(proc, "raw_compile.sh")
    if add_one_lines(proc.stdout)[1] != 1:
        raise CheckFailed(f"load_cpp did not print add_one's result:\n{proc.stdout[-1500:]}")
    return "; ".join([expect_links_tether(src / "build" / "add_one_cpu.so"),
                      expect_links_tether(src / "build" / "load_cpp")])


# -- python_packaging ------------------------------------------------------------

def _tvm_ffi_headers() -> str:
    """The pinned apache-tvm-ffi's headers, as installed for this interpreter
    (PathFinder: found whether or not tether serves as tvm_ffi here)."""
    spec = importlib.machinery.PathFinder.find_spec("tvm_ffi")
    for root in (spec.submodule_search_locations or []) if spec else []:
        include = Path(root) / "include"
        if (include / "tvm" / "ffi" / "c_api.h").is_file():
            return str(include)
    raise CheckFailed("apache-tvm-ffi's headers are not installed for this interpreter "
                      "(make's .venv holds the pinned apache-tvm-ffi)")


def _link_installed_tether(site: Path) -> None:
    """Make the tether installed for this interpreter importable from the
    venv's ``site``: every top-level entry its wheel installed there (the
    package, its metadata, the .pth switch and the module it imports)."""
    dist = importlib.metadata.distribution("tether")
    top = Path(dist.locate_file(""))
    names = sorted({f.parts[0] for f in dist.files or () if f.parts and f.parts[0] not in ("..", "__pycache__")})
    if "tether" not in names or "tether-tvm-ffi.pth" not in names:
        raise CheckFailed(f"the installed tether's file list lacks its package or .pth (has {names})")
    for name in names:
        target, link = top / name, site / name
        if not target.exists():
            raise CheckFailed(f"the installed tether has no {target}")
        if link.is_symlink() or link.exists():
            if link.is_dir() and not link.is_symlink():
                shutil.rmtree(link)
            else:
                link.unlink()
        link.symlink_to(target, target_is_directory=target.is_dir())


def _venv(s: Setup, log: Path) -> Path:
    """--work/venv: no apache-tvm-ffi, tether, scikit-build-core; its python."""
    venv = s.work / "venv"
    python = venv / "bin" / "python"
    if not python.exists():
        proc = run([sys.executable, "-m", "venv", "--clear", venv], cwd=s.work, env=s.env, log=log)
        expect_success(proc, "creating the venv")
    env = dict(s.env, TETHER_PROVIDE_TVM_FFI="0")
    has_backend = run([python, "-c", "import scikit_build_core"], cwd=s.work, env=env, log=log).returncode == 0
    if not has_backend:
        proc = run([python, "-m", "pip", "install", "--quiet", "--index-url", s.index, "scikit-build-core>=0.10"],
                   cwd=s.work, env=env, log=log)
        expect_success(proc, "pip install scikit-build-core (from the package index)")
    site = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                    cwd=s.work, env=env, log=log).stdout.strip())
    if s.tether_wheel:
        proc = run([python, "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall", s.tether_wheel],
                   cwd=s.work, env=env, log=log)
        expect_success(proc, f"pip install {s.tether_wheel}")
    else:
        _link_installed_tether(site)
    if run([python, "-c", "import importlib.util as u, sys; sys.exit(u.find_spec('tvm_ffi') is not None)"],
           cwd=s.work, env=env, log=log).returncode != 0:
        raise CheckFailed(f"{venv} has a tvm_ffi of its own (apache-tvm-ffi must not be installed there)")
    return python


def check_python_packaging(s: Setup) -> str:
    log = s.log("python_packaging")
    python = _venv(s, log)
    src = s.example("python_packaging")
    cmakedir = run([python, "-m", "tether.config", "--cmakedir"], cwd=s.work, env=s.env, log=log)
    expect_success(cmakedir, "tether.config --cmakedir")
    env = dict(s.env, VIRTUAL_ENV=str(python.parent.parent), tvm_ffi_ROOT=cmakedir.stdout.strip(),
               TETHER_TVM_FFI_INCLUDE_DIR=_tvm_ffi_headers())
    env["PATH"] = os.pathsep.join([str(python.parent), env["PATH"]])
    served = run([python, "-c", "import tvm_ffi, tether; assert tvm_ffi is tether"], cwd=s.work, env=env, log=log)
    expect_success(served, "import tvm_ffi yielding tether in the venv")
    proc = run([python, "-m", "pip", "install", "-v", "--no-build-isolation", "--no-deps", "--force-reinstall", "."],
               cwd=src, env=env, log=log)
    expect_success(proc, "pip install examples/python_packaging")
    if "tvm_ffi (tether): libtether_core at" not in proc.stdout + proc.stderr:
        raise CheckFailed("scikit-build-core's CMake run did not use tether's tvm_ffi package")
    lib = run([python, "-c", "import importlib.util as u, pathlib; "
               "print(pathlib.Path(u.find_spec('my_ffi_extension').origin).with_name('libmy_ffi_extension.so'))"],
              cwd=s.work, env=dict(env, TETHER_PROVIDE_TVM_FFI="0"), log=log)
    expect_success(lib, "locating the installed my_ffi_extension")
    note = expect_links_tether(Path(lib.stdout.strip()))
    ran = run([python, "run_example.py"], cwd=src, env=env, log=log)
    expect_success(ran, "run_example.py")
    expected = ["=========== Example 1: add_two ===========", "3",
                "=========== Example 2: add_one ===========", "4",
                "=========== Example 3: raise_error ===========",
                "=========== Example 4: IntPair ===========", "a=1", "b=2", "sum=3"]
    if ran.stdout.split() != " ".join(expected).split():
        raise CheckFailed(f"run_example.py printed:\n{ran.stdout}\nexpected:\n" + "\n".join(expected))
    if not re.search(r"^RuntimeError: This is an error$", ran.stderr, re.M):
        raise CheckFailed(f"raise_error did not surface as RuntimeError:\n{ran.stderr[-1500:]}")
    return note + "; " + _stub_changes(s, src)


def _stub_changes(s: Setup, src: Path) -> str:
    """Which of the example's Python files the stub generator (a post-build
    step of tvm_ffi_configure_target) rewrote, against upstream's text."""
    pristine = s.work / "python_packaging.orig"
    extract_example(s.sdist, str(pristine), "python_packaging")
    changed = sorted(str(p.relative_to(pristine)) for p in (pristine / "python").rglob("*.py")
                     if (src / p.relative_to(pristine)).read_text() != p.read_text())
    shutil.rmtree(pristine, ignore_errors=True)
    return f"stubs regenerated differently from upstream's in: {', '.join(changed)}" if changed else \
        "stubs regenerated as upstream's"


# -- this repository's own consumer -----------------------------------------------

# Each misuse of the package and a piece of the message it must stop with.
_CONSUMER_ERRORS = {
    "not_a_target": "'no_such_target' is not an existing target",
    "stub_pkg_without_dir": "STUB_PKG/STUB_PREFIX require STUB_DIR",
    "stub_init_without_dir": "STUB_INIT=ON requires STUB_DIR",
    "bad_switch": "LINK_SHARED takes ON or OFF, got 'maybe'",
    "cubin": "does not build or embed CUDA binaries",
}


def check_consumer(s: Setup) -> str:
    log = s.log("consumer")
    build = s.work / "consumer"
    shutil.rmtree(build, ignore_errors=True)
    cmakedir = run([sys.executable, "-m", "tether.config", "--cmakedir"], cwd=s.work, env=s.env, log=log)
    expect_success(cmakedir, "tether.config --cmakedir")
    configure = [s.cmake, "-S", CONSUMER_SOURCE, "-B", build, f"-Dtvm_ffi_ROOT={cmakedir.stdout.strip()}"]
    expect_success(run(configure + ["-DCONSUMER_CASE=build"], cwd=s.work, env=s.env, log=log), "configuring")
    expect_success(run([s.cmake, "--build", build], cwd=s.work, env=s.env, log=log), "building consumer")
    ran = run([build / "consumer"], cwd=build, env=s.env, log=log)
    expect_success(ran, "consumer")
    note = expect_links_tether(build / "consumer")
    header_only = run(configure + ["-DCONSUMER_CASE=header_only"], cwd=s.work, env=s.env, log=log)
    expect_success(header_only, "configuring with LINK_SHARED OFF")
    unknown = run(configure + ["-DCONSUMER_CASE=unknown_keyword"], cwd=s.work, env=s.env, log=log)
    expect_success(unknown, "configuring with an unknown keyword (a warning, as upstream ignores it)")
    if "ignoring unknown arguments 'LINK_STATIC;ON'" not in unknown.stderr:
        raise CheckFailed("an unknown keyword of tvm_ffi_configure_target was not reported")
    for case, message in _CONSUMER_ERRORS.items():
        proc = run(configure + [f"-DCONSUMER_CASE={case}"], cwd=s.work, env=s.env, log=log)
        text = " ".join((proc.stdout + proc.stderr).split())  # CMake wraps messages
        if proc.returncode == 0 or message not in text:
            raise CheckFailed(f"case {case}: expected configuring to fail with '{message}':\n{text[-1500:]}")
    bad_env = dict(s.env, TETHER_TVM_FFI_INCLUDE_DIR=str(s.work / "no-such-include"))
    proc = run(configure + ["-DCONSUMER_CASE=build"], cwd=s.work, env=bad_env, log=log)
    text = " ".join((proc.stdout + proc.stderr).split())
    if proc.returncode == 0 or "the environment variable TETHER_TVM_FFI_INCLUDE_DIR" not in text:
        raise CheckFailed(f"a TETHER_TVM_FFI_INCLUDE_DIR without headers was accepted:\n{text[-1500:]}")
    return f"{note}; {len(_CONSUMER_ERRORS) + 1} misuses refused"


CHECKS = {
    "quickstart": check_quickstart,
    "raw_compile": check_raw_compile,
    "python_packaging": check_python_packaging,
    "consumer": check_consumer,
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", default=str(REPO / "target" / "upstream"), help="where the sdist is kept")
    parser.add_argument("--sdist", help="a local copy of the pinned sdist (sha256-checked)")
    parser.add_argument("--index", default=DEFAULT_INDEX, help="package index (simple API)")
    parser.add_argument("--work", default=str(REPO / "target" / "cmake_examples"), help="build directory")
    parser.add_argument("--only", nargs="+", choices=sorted(CHECKS), help="run these checks only")
    parser.add_argument("--tether-wheel", help="install this tether wheel into the venv instead of linking")
    args = parser.parse_args(argv)
    setup = Setup(args)
    results = []
    for name in args.only or CHECKS:
        start = time.monotonic()
        try:
            verdict, detail = "pass", CHECKS[name](setup)
        except CheckFailed as err:
            verdict, detail = "FAIL", str(err)
        except subprocess.TimeoutExpired as err:
            verdict, detail = "FAIL", f"timed out after {err.timeout}s: {err.cmd}"
        results.append((name, verdict, time.monotonic() - start, detail))
        print(f"{name}: {verdict} ({results[-1][2]:.1f}s) -- {detail}", flush=True)
    print(f"\nupstream examples against tether's tvm_ffi CMake package (logs: {setup.logs})")
    print(f"{'check':<18} {'result':<6} {'seconds':>7}")
    for name, verdict, seconds, _ in results:
        print(f"{name:<18} {verdict:<6} {seconds:>7.1f}")
    failed = [name for name, verdict, _, _ in results if verdict != "pass"]
    if failed:
        print(f"FAILED: {', '.join(failed)}")
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
