"""scikit-build-core finds tether's CMake package without variables: the
wheel declares a ``cmake.prefix`` entry point (named ``tether``, so it never
clashes with an apache-tvm-ffi installed beside it) whose directory, added
to CMAKE_PREFIX_PATH as scikit-build-core adds it, is where CMake's own
search finds ``find_package(tvm_ffi)``: the package's core library and its
bundled copy of TVM-FFI's headers."""

import importlib
import os
import shutil
import subprocess
import sys
from importlib.metadata import entry_points

import pytest

from tether import config

CMAKELISTS = """
cmake_minimum_required(VERSION 3.18)
project(prefix_probe LANGUAGES CXX)
find_package(tvm_ffi CONFIG REQUIRED)
get_target_property(lib tvm_ffi::shared IMPORTED_LOCATION)
file(WRITE "${CMAKE_BINARY_DIR}/found.txt" "${tvm_ffi_INCLUDE_DIR}\\n${lib}\\n")
"""


def _prefix_entry_point():
    found = [ep for ep in entry_points(group="cmake.prefix") if ep.name == "tether"]
    assert len(found) == 1, "the installed tether declares no cmake.prefix entry point named tether"
    return found[0]


def test_the_entry_point_names_the_package():
    ep = _prefix_entry_point()
    module = importlib.import_module(ep.value)
    assert os.path.dirname(module.__file__) == config.libdir()


def test_cmake_finds_tvm_ffi_under_the_entry_points_prefix(tmp_path):
    cmake = shutil.which("cmake", path=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    if cmake is None:
        pytest.fail("cmake is part of the test environment (make test installs it)")
    prefix = os.path.dirname(importlib.import_module(_prefix_entry_point().value).__file__)
    (tmp_path / "CMakeLists.txt").write_text(CMAKELISTS)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "tvm_ffi", "CMAKE_PREFIX"))}
    done = subprocess.run([cmake, "-S", str(tmp_path), "-B", str(tmp_path / "build"), f"-DCMAKE_PREFIX_PATH={prefix}"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    include, lib = (tmp_path / "build" / "found.txt").read_text().split("\n")[:2]
    assert os.path.samefile(include, config.tvm_ffi_includedir())
    assert os.path.samefile(include, os.path.join(prefix, "include"))
    assert os.path.samefile(lib, config.libfiles())
