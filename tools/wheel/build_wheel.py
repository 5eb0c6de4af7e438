"""`make wheel`: manylinux_2_28 wheels of tether built here without Docker,
checked with auditwheel and installed into a fresh virtualenv that runs the
Python suite.

The core and the testing library are built by cargo-zigbuild against glibc
2.28's symbol versions (Zig's libc stubs), then maturin builds the extension
with Zig for the same platform and packs them (python/build.rs copies the
libraries named by TETHER_CORE_LIB_DIR instead of building its own). The
tools come from the package index into a virtualenv of their own:
maturin, ziglang, cargo-zigbuild and auditwheel.

One wheel per interpreter given (``--python``, the running one by default):
the extension uses CPython's non-limited API (list items, frames, the
object header), so there is no abi3 wheel. ``auditwheel show`` must report
the manylinux_2_28 tag (or a lower one) for the wheel to be kept.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import venv
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
POLICY = "manylinux_2_28"
GLIBC = "2.28"
TOOLS = ["maturin>=1.16,<2", "ziglang==0.13.0", "cargo-zigbuild==0.20.1", "auditwheel==6.8.2"]
# The suite files a wheel must pass in a fresh environment: every file
# that needs no build tools or peer library beside the wheel.
SUITE_NEEDS = ["pytest", "numpy"]


def run(cmd, **kw):
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, **kw)


def tools_env(target: str) -> str:
    """A virtualenv with the build tools; its bin directory."""
    path = os.path.join(target, "wheel-tools")
    bin_dir = os.path.join(path, "bin")
    stamp = os.path.join(path, ".tools")
    if not (os.path.exists(stamp) and open(stamp).read() == json.dumps(TOOLS)):
        venv.EnvBuilder(with_pip=True, clear=True).create(path)
        run([os.path.join(bin_dir, "python"), "-m", "pip", "install", "--quiet", *TOOLS])
        with open(stamp, "w") as f:
            f.write(json.dumps(TOOLS))
    return bin_dir


def rust_target() -> str:
    machine = platform.machine()
    arch = {"x86_64": "x86_64", "AMD64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}.get(machine)
    if arch is None or sys.platform != "linux":
        raise SystemExit(f"make wheel builds manylinux wheels on Linux x86_64/aarch64, not {sys.platform} {machine}")
    return f"{arch}-unknown-linux-gnu"


def build(python: str, target: str, out: str) -> str:
    tools = tools_env(target)
    env = dict(os.environ, PATH=tools + os.pathsep + os.environ.get("PATH", ""))
    triple = rust_target()
    core_dir = os.path.join(target, "wheel-core")
    run(["cargo", "zigbuild", "--release", "--target", f"{triple}.{GLIBC}", "-p", "tether-core", "-p",
         "tether-testing", "--lib", "--manifest-path", os.path.join(ROOT, "Cargo.toml"), "--target-dir", core_dir],
        env=env)
    env["TETHER_CORE_LIB_DIR"] = os.path.join(core_dir, triple, "release")
    before = set(glob.glob(os.path.join(out, "*.whl")))
    # maturin's own repair step cannot see the libraries the package carries
    # beside the extension (found through $ORIGIN); auditwheel show below
    # checks the finished wheel.
    run([os.path.join(tools, "maturin"), "build", "--release", "--zig", "--compatibility", POLICY, "--auditwheel", "skip",
         "--target", triple, "--interpreter", python, "--manifest-path", os.path.join(ROOT, "python", "Cargo.toml"),
         "--out", out], env=env)
    made = sorted(set(glob.glob(os.path.join(out, "*.whl"))) - before, key=os.path.getmtime) or \
        sorted(glob.glob(os.path.join(out, "*.whl")), key=os.path.getmtime)[-1:]
    if not made:
        raise SystemExit("maturin wrote no wheel")
    wheel = made[-1]
    show = subprocess.run([os.path.join(tools, "auditwheel"), "show", wheel], capture_output=True, text=True, env=env)
    print(show.stdout + show.stderr, flush=True)
    tag = re.search(r'consistent with the following platform tag:\s*"manylinux_2_(\d+)_', show.stdout.replace("\n", " "))
    if show.returncode != 0 or tag is None or int(tag.group(1)) > int(GLIBC.split(".")[1]):
        raise SystemExit(f"auditwheel does not find {wheel} consistent with {POLICY}")
    check_contents(wheel)
    return wheel


def check_contents(wheel: str) -> None:
    """What tether alone needs is in the wheel: the core, the testing
    library, the extension, TVM-FFI's headers with their licenses, the
    CMake package."""
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = ["tether/libtether_core.so", "tether/libtether_testing.so", "tether/include/tvm/ffi/function.h",
              "tether/include/dlpack/dlpack.h", "tether/include/tether/c_api.h",
              "tether/licenses/apache-tvm-ffi/LICENSE", "tether/licenses/apache-tvm-ffi/NOTICE",
              "tether/share/cmake/tvm_ffi/tvm_ffi-config.cmake"]
    missing = [n for n in wanted if n not in names]
    if not any(n.startswith("tether/_ffi.") and n.endswith(".so") for n in names):
        missing.append("tether/_ffi.*.so")
    if missing:
        raise SystemExit(f"{wheel} lacks {missing}")


def test_in_fresh_venv(wheel: str, python: str, target: str, files: list[str]) -> None:
    """Install the wheel (no build step, so no compiler is involved) into a
    new virtualenv and run the suite files there."""
    path = os.path.join(target, "wheel-venv")
    shutil.rmtree(path, ignore_errors=True)
    run([python, "-m", "venv", path])
    py = os.path.join(path, "bin", "python")
    run([py, "-m", "pip", "install", "--quiet", "--only-binary", ":all:", wheel, *SUITE_NEEDS])
    run([py, "-c", "import tether, tether.testing; assert tether.Array([1])[0] == 1; print(tether.__file__)"],
        cwd=target)
    run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files], cwd=os.path.join(ROOT, "tests", "python"))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", action="append", help="interpreters to build for (default: this one)")
    parser.add_argument("--target", default=os.path.join(ROOT, "target"))
    parser.add_argument("--out", default=os.path.join(ROOT, "target", "wheels"))
    parser.add_argument("--no-test", action="store_true", help="build and check only")
    parser.add_argument("--suite", nargs="*", default=["test_tying.py", "test_tying_edges.py", "test_containers.py",
                                                       "test_api.py", "test_tensor.py", "test_structural.py",
                                                       "test_tether_alone.py", "test_cmake_prefix_entry_point.py"],
                        help="suite files run in the fresh virtualenv")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    for python in args.python or [sys.executable]:
        wheel = build(python, args.target, args.out)
        print(f"wheel: {wheel}", flush=True)
        if not args.no_test:
            test_in_fresh_venv(wheel, python, args.target, args.suite)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
