"""Building native test libraries with the system C compiler.

Shared by the suites that load separately built libraries into the process
(``test_one_registry``, ``test_foreign_core``): one place that finds the
compiler and links a plugin against tether's core the way a user would,
through ``tether-config``'s flags.
"""

import glob
import hashlib
import importlib.machinery
import os
import shutil
import subprocess
import sys
import sysconfig

import pytest

from tether import config

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGIN_SOURCE = os.path.join(HERE, "native", "plugin.c")


def c_compiler() -> str:
    """The C compiler to use, or skip the test when there is none."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:  # the build machines always have one; users may not
        pytest.skip("no C compiler on PATH to build the test's native library")
    return cc


def build_shared(source: str, out, link_core: bool = True) -> str:
    """Compile ``source`` into the shared library ``out``; with ``link_core``
    it includes tether's headers and links ``libtether_core``."""
    cmd = [c_compiler(), "-shared", "-fPIC", "-std=c11", "-o", str(out), str(source)]
    if link_core:
        cmd += [f"-I{config.includedir()}", *config.ldflags().split(), config.libs()]
    subprocess.run(cmd, check=True)
    return str(out)


def build_plugin(out_dir) -> str:
    """The C plugin of ``native/plugin.c`` (registers ``plugin.*`` globals
    and the ``plugin.Thing`` type at load time; exports ``keep_and_return``)."""
    return build_shared(PLUGIN_SOURCE, os.path.join(str(out_dir), "libplugin.so"))


def build_gil_holder(out_dir) -> str:
    """The C library of ``native/gil_holder.c`` (exports
    ``call_with_gil_held`` and ``gil_held``), built against Python's headers too."""
    out = os.path.join(str(out_dir), "libgil_holder.so")
    py_include = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(py_include, "Python.h")):  # an interpreter without its headers
        pytest.skip("Python's C headers are not installed")
    cmd = [c_compiler(), "-shared", "-fPIC", "-std=c11", "-o", out, os.path.join(HERE, "native", "gil_holder.c"),
           f"-I{py_include}", f"-I{config.includedir()}", *config.ldflags().split(), config.libs()]
    subprocess.run(cmd, check=True)
    return out


def build_headerless(out_dir) -> str:
    """The C library of ``native/headerless.c``: ``headerless.Node`` objects
    allocated with malloc, without tether's allocation header or marker."""
    return build_shared(os.path.join(HERE, "native", "headerless.c"), os.path.join(str(out_dir), "libheaderless.so"))


def build_rust_plugin(tmp_path_factory) -> str:
    """The Rust library of ``tests/rust_plugin``, which reaches the core only
    through ``tether-sys``. Built once per session into a shared target
    directory (cargo makes later calls no-ops)."""
    cargo = shutil.which(os.environ.get("CARGO", "cargo"))
    if cargo is None:  # the build machines always have one; users may not
        pytest.skip("no cargo on PATH to build the Rust test plugin")
    target = tmp_path_factory.getbasetemp() / "rust_plugin_target"
    manifest = os.path.join(HERE, "..", "rust_plugin", "Cargo.toml")
    # Without the suite's LD_PRELOAD: under `make test-asan` that is the
    # ASan runtime, which rustc (not built for it) crashes under. The
    # library cargo builds is loaded into this process, where ASan runs.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    env["TETHER_CORE_LIB_DIR"] = config.libdir()
    subprocess.run([cargo, "build", "--quiet", "--release", "--manifest-path", manifest, "--target-dir", str(target)],
                   check=True, env=env)
    # cargo names a cdylib by the platform's convention.
    name = {"darwin": "libtether_rust_plugin.dylib", "win32": "tether_rust_plugin.dll"}.get(
        sys.platform, "libtether_rust_plugin.so")
    return str(target / "release" / name)


def cxx_compiler() -> str:
    """The C++ compiler to use, or skip the test when there is none."""
    cxx = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")
    if cxx is None:  # the build machines always have one; users may not
        pytest.skip("no C++ compiler on PATH to build the test's native library")
    return cxx


def upstream_package_dir() -> str:
    """The installed apache-tvm-ffi package's directory (the wheel is a test
    dependency), found on ``sys.path`` without importing it: the import loads
    its ``libtvm_ffi.so`` with ``RTLD_GLOBAL``, and a library built here and
    loaded without deep binding (``TETHER_LOAD_DEEPBIND=0``, as under
    ``make test-asan``) would then bind its ``TVMFFI*`` calls to the peer's
    core instead of tether's. ``PathFinder`` also looks past tether's own
    ``tvm_ffi`` alias."""
    spec = importlib.machinery.PathFinder.find_spec("tvm_ffi")
    for root in (spec.submodule_search_locations or []) if spec else []:
        if os.path.isfile(os.path.join(root, "include", "tvm", "ffi", "c_api.h")):
            return root
    pytest.skip("apache-tvm-ffi (the peer) is not installed: its C++ headers are needed")


def upstream_include_dir() -> str:
    """apache-tvm-ffi's published C++ headers."""
    return os.path.join(upstream_package_dir(), "include")


def build_upstream_kernel(source: str, out) -> str:
    """Compile a C++ library written against apache-tvm-ffi's headers and
    link it to tether's core, as a kernel author would for a drop-in."""
    cmd = [cxx_compiler(), "-std=c++17", "-O1", "-shared", "-fPIC", "-o", str(out), str(source),
           f"-I{upstream_include_dir()}", *config.ldflags().split(), config.libs()]
    subprocess.run(cmd, check=True)
    return str(out)


CPP_PLUGIN_SOURCE = os.path.join(HERE, "native", "cpp_plugin.cc")


def build_cpp_plugin(out_dir) -> str:
    """The C++ plugin of ``native/cpp_plugin.cc``, written against tether's
    own header-only C++ layer (the headers the package carries) and linked
    to its core through ``tether-config``'s flags."""
    out = os.path.join(str(out_dir), "libcpp_plugin.so")
    cmd = [cxx_compiler(), "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-o", out,
           CPP_PLUGIN_SOURCE, f"-I{config.includedir()}", *config.ldflags().split(), config.libs()]
    subprocess.run(cmd, check=True)
    return out


def build_kernel_for(runtime: str, source: str, out, extra_flags=()) -> str:
    """Compile a C++ library written against apache-tvm-ffi's headers and
    link it to ``runtime``'s core: tether's (``"tether"``) or the peer's own
    ``libtvm_ffi`` (``"tvm_ffi"``, for running the same library on both)."""
    if runtime == "tether":
        link = [*config.ldflags().split(), config.libs()]
    else:
        peer_lib = os.path.join(upstream_package_dir(), "lib")
        link = [f"-L{peer_lib}", "-ltvm_ffi", f"-Wl,-rpath,{peer_lib}"]
    cmd = [cxx_compiler(), "-std=c++17", "-O1", "-shared", "-fPIC", *extra_flags, "-o", str(out), str(source),
           f"-I{upstream_include_dir()}", *link]
    subprocess.run(cmd, check=True)
    return str(out)


NB_PLUGIN_SOURCE = os.path.join(HERE, "native", "nb_plugin.cc")
BUILD_CACHE = os.path.join(HERE, "..", "..", "target", "nanobind")


def _cached_build(key_parts, out_name: str, build) -> str:
    """``build(path)`` once per distinct ``key_parts``, kept under
    ``target/nanobind/<digest>/``: nanobind's own sources take most of a
    minute to compile, so ``make test`` compiles them only when the
    compiler, the flags or the sources change."""
    digest = hashlib.sha256("\0".join(key_parts).encode()).hexdigest()[:20]
    out_dir = os.path.join(BUILD_CACHE, digest)
    out = os.path.join(out_dir, out_name)
    if not os.path.exists(out):
        os.makedirs(out_dir, exist_ok=True)
        tmp = f"{out}.{os.getpid()}.tmp"
        build(tmp)
        os.replace(tmp, out)  # a concurrent build finishes with the same bytes
    return out


def _file_text(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def build_nanobind_plugin() -> str:
    """The nanobind extension of ``native/nb_plugin.cc`` (module
    ``nb_plugin``), built with nanobind from PyPI (its sources compiled
    directly, no CMake) against tether's headers and core. Returns the
    path of the extension module."""
    nanobind = pytest.importorskip("nanobind", reason="nanobind is a test dependency (make installs it)")
    cxx = cxx_compiler()
    version = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=True).stdout
    py_include = sysconfig.get_paths()["include"]
    nb_include = nanobind.include_dir()
    robin_map = os.path.join(os.path.dirname(nanobind.include_dir()), "ext", "robin_map", "include")
    flags = ["-std=c++17", "-O1", "-fPIC", "-fvisibility=hidden", "-fno-strict-aliasing",
             f"-I{py_include}", f"-I{nb_include}", f"-I{robin_map}"]
    combined = os.path.join(nanobind.source_dir(), "nb_combined.cpp")

    def compile_nanobind(out):
        subprocess.run([cxx, *flags, "-c", combined, "-o", out], check=True)

    nb_object = _cached_build([cxx, version, *flags, nanobind.__version__], "libnanobind.o", compile_nanobind)

    headers = sorted(glob.glob(os.path.join(config.includedir(), "tether", "*.h")))
    link = [*config.ldflags().split(), config.libs()]
    module_flags = [*flags, "-Wall", "-Wextra", "-Werror", f"-I{config.includedir()}"]
    suffix = sysconfig.get_config_var("EXT_SUFFIX")

    def compile_module(out):
        subprocess.run([cxx, *module_flags, "-shared", NB_PLUGIN_SOURCE, nb_object, *link, "-o", out], check=True)

    key = [cxx, version, *module_flags, *link, nb_object, _file_text(NB_PLUGIN_SOURCE),
           *(_file_text(h) for h in headers)]
    return _cached_build(key, "nb_plugin" + suffix, compile_module)


def run_python(code: str, **env) -> str:
    """Run ``code`` (dedented) in a fresh interpreter with ``env`` added to
    the environment; its stdout, stripped. A non-zero exit fails the test
    with the child's stderr."""
    import textwrap

    full = dict(os.environ, **env)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=full,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()
