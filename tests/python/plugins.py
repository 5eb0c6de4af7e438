"""Building native test libraries with the system C compiler.

Shared by the suites that load separately built libraries into the process
(``test_one_registry``, ``test_foreign_core``): one place that finds the
compiler and links a plugin against tether's core the way a user would,
through ``tether-config``'s flags.
"""

import os
import shutil
import subprocess

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
    env = dict(os.environ, TETHER_CORE_LIB_DIR=config.libdir())
    subprocess.run([cargo, "build", "--quiet", "--release", "--manifest-path", manifest, "--target-dir", str(target)],
                   check=True, env=env)
    return str(target / "release" / "libtether_rust_plugin.so")


def cxx_compiler() -> str:
    """The C++ compiler to use, or skip the test when there is none."""
    cxx = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")
    if cxx is None:  # the build machines always have one; users may not
        pytest.skip("no C++ compiler on PATH to build the test's native library")
    return cxx


def upstream_include_dir() -> str:
    """apache-tvm-ffi's published C++ headers (the wheel is a test dependency)."""
    tvm_ffi_libinfo = pytest.importorskip("tvm_ffi.libinfo", reason="apache-tvm-ffi (the peer) is not installed")
    return tvm_ffi_libinfo.find_include_path()


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
        peer_lib = os.path.join(os.path.dirname(upstream_include_dir()), "lib")
        link = [f"-L{peer_lib}", "-ltvm_ffi", f"-Wl,-rpath,{peer_lib}"]
    cmd = [cxx_compiler(), "-std=c++17", "-O1", "-shared", "-fPIC", *extra_flags, "-o", str(out), str(source),
           f"-I{upstream_include_dir()}", *link]
    subprocess.run(cmd, check=True)
    return str(out)
