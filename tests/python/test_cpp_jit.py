"""tether.cpp: C++ written against TVM-FFI's headers compiled at run time,
linked to tether's core, cached, loaded with tether.load_module and called
on NumPy arrays and ints; with ninja and with direct compiler calls."""

import os
import subprocess
import sys

import numpy as np
import pytest

import tether
import tether.cpp
from tether.cpp import extension
from plugins import cxx_compiler, upstream_include_dir

KERNELS = r"""
void add_one(tvm::ffi::TensorView x, tvm::ffi::TensorView y) {
  TVM_FFI_ICHECK(x.ndim() == 1) << "x must be a 1D tensor";
  TVM_FFI_ICHECK(x.size(0) == y.size(0)) << "x and y must have the same shape";
  const float* xs = static_cast<const float*>(x.data_ptr());
  float* ys = static_cast<float*>(y.data_ptr());
  for (int64_t i = 0; i < x.size(0); ++i) ys[i] = xs[i] + 1.0f;
}
int64_t scale(int64_t v, int64_t by) { return v * by; }
tvm::ffi::Array<tvm::ffi::Any> wrap(tvm::ffi::Any v) { return {v, v}; }
"""


@pytest.fixture(params=["ninja", "direct"])
def build_tool(request, monkeypatch, tmp_path):
    """Each test runs with ninja (when it can be found) and without it."""
    if sys.platform == "win32":
        pytest.skip("tether.cpp is not supported on Windows (test_windows_is_refused_before_the_cache checks it says so)")
    cxx_compiler()
    upstream_include_dir()
    monkeypatch.setenv("TETHER_CACHE_DIR", str(tmp_path / "cache"))
    if request.param == "ninja":
        if extension._ninja_binary() is None:
            pytest.skip("ninja is not installed (pip install ninja); the direct build is tested instead")
    else:
        monkeypatch.setenv("TETHER_CPP_USE_NINJA", "0")
        assert extension._ninja_binary() is None
    return request.param


def _only_dir(root):
    (entry,) = os.listdir(root)
    return os.path.join(root, entry)


def test_load_inline_compiles_caches_and_runs(build_tool, tmp_path):
    mod = tether.cpp.load_inline("jit_kernels", cpp_sources=KERNELS,
                                 functions={"add_one": "Add one to each element.", "scale": "", "wrap": ""})
    x = np.arange(5, dtype="float32")
    y = np.empty_like(x)
    mod.add_one(x, y)
    np.testing.assert_array_equal(y, x + 1)
    assert mod.scale(7, 6) == 42
    v = tether.convert([1])
    pair = mod.wrap(v)
    assert pair[0] is v and pair[1] is v  # results are tied to the argument's wrapper
    with pytest.raises(RuntimeError, match="x must be a 1D tensor"):
        mod.add_one(np.zeros((2, 2), "float32"), np.zeros((2, 2), "float32"))

    build_dir = _only_dir(tmp_path / "cache")
    assert os.path.basename(build_dir).startswith("jit_kernels_")
    library = os.path.join(build_dir, "jit_kernels.so")
    stamp = os.stat(library).st_mtime_ns
    objects = {f: os.stat(os.path.join(build_dir, f)).st_mtime_ns for f in os.listdir(build_dir) if f.endswith(".o")}
    assert objects
    # the same call again: the cached build is reused, nothing recompiled
    again = tether.cpp.load_inline("jit_kernels", cpp_sources=KERNELS,
                                   functions={"add_one": "Add one to each element.", "scale": "", "wrap": ""})
    assert again.scale(2, 3) == 6
    assert os.stat(library).st_mtime_ns == stamp
    assert {f: os.stat(os.path.join(build_dir, f)).st_mtime_ns for f in objects} == objects
    # a change in the sources is a new cache entry
    tether.cpp.build_inline("jit_kernels", cpp_sources=KERNELS + "\nint64_t unused() { return 0; }",
                            functions=["scale"])
    assert len(os.listdir(tmp_path / "cache")) == 2


def test_build_from_files_links_tether_core_only(build_tool, tmp_path):
    src = tmp_path / "ops.cc"
    header = tmp_path / "ops.h"
    header.write_text("inline int64_t offset() { return 100; }\n")
    src.write_text('#include <tvm/ffi/function.h>\n#include "ops.h"\n'
                   "int64_t plus_offset(int64_t v) { return v + offset(); }\n"
                   "TVM_FFI_DLL_EXPORT_TYPED_FUNC(plus_offset, plus_offset);\n")
    out_dir = tmp_path / "build"
    path = tether.cpp.build("ops", sources=str(src), extra_include_paths=[str(tmp_path)],
                            build_directory=str(out_dir))
    assert path == str((out_dir / "ops.so").resolve())
    needed = subprocess.run(["readelf", "-d", path], capture_output=True, text=True).stdout \
        if sys.platform.startswith("linux") else ""
    if needed:
        assert "libtether_core" in needed and "libtvm_ffi" not in needed
    assert tether.load_module(path).plus_offset(1) == 101
    # a changed header (seen through the compiler's depfile) rebuilds
    first = os.stat(path).st_mtime_ns
    assert tether.cpp.build("ops", sources=str(src), extra_include_paths=[str(tmp_path)],
                            build_directory=str(out_dir)) == path
    assert os.stat(path).st_mtime_ns == first
    header.write_text("inline int64_t offset() { return 200; }\n")
    os.utime(header, ns=(first + 10**9, first + 10**9))
    tether.cpp.build("ops", sources=str(src), extra_include_paths=[str(tmp_path)], build_directory=str(out_dir))
    assert os.stat(path).st_mtime_ns != first
    m = tether.cpp.load("ops2", sources=[str(src)], extra_include_paths=[str(tmp_path)])
    assert m.plus_offset(1) == 201


def test_object_output_and_c_sources(build_tool, tmp_path):
    csrc = tmp_path / "plain.c"
    csrc.write_text("int plain_value(void) { return 7; }\n")
    obj = tether.cpp.build("plain", sources=str(csrc), output="plain.o", build_directory=str(tmp_path / "b"))
    assert obj.endswith("plain.o") and os.path.getsize(obj) > 0


def test_object_files_and_archives_are_linked_not_compiled(build_tool, tmp_path):
    helper = tmp_path / "helper.cc"
    helper.write_text('extern "C" int helper_value() { return 41; }\n')
    main = tmp_path / "main.cc"
    main.write_text('#include <tvm/ffi/function.h>\nextern "C" int helper_value();\n'
                    "int plus_one() { return helper_value() + 1; }\n"
                    "TVM_FFI_DLL_EXPORT_TYPED_FUNC(plus_one, plus_one);\n")
    # An object built by tether.cpp itself, and one built by the compiler.
    obj = tether.cpp.build("jit_helper_obj", cpp_files=[str(helper)], output="helper_built.o",
                           build_directory=str(tmp_path / "b1"))
    compiled = tmp_path / "helper.o"
    subprocess.run([cxx_compiler(), "-fPIC", "-c", str(helper), "-o", str(compiled)], check=True)
    archive = tmp_path / "libhelper.a"
    subprocess.run(["ar", "rcs", str(archive), str(compiled)], check=True)
    for i, extra in enumerate((obj, str(compiled), str(archive))):
        lib = tether.cpp.build(f"jit_obj_main{i}", cpp_files=[str(main), extra], build_directory=str(tmp_path / f"m{i}"))
        assert tether.load_module(lib).plus_one() == 42
    with pytest.raises(FileNotFoundError, match="missing.o"):
        tether.cpp.build("jit_obj_missing", cpp_files=[str(main), str(tmp_path / "missing.o")])


def test_compile_errors_carry_the_compiler_output(build_tool):
    with pytest.raises(RuntimeError, match="no_such_type"):
        tether.cpp.build_inline("broken", cpp_sources="no_such_type f();", functions=[])


def test_gpu_sources_are_refused():
    with pytest.raises(NotImplementedError):
        tether.cpp.build_inline("gpu", cuda_sources="__global__ void k() {}")


def test_to_cpp_dtype_matches_tvm_ffi():
    assert [tether.cpp.to_cpp_dtype(d) for d in ("float32", "torch.int8", "bool", "uint64", "float64")] == \
        ["float", "int8_t", "bool", "uint64_t", "double"]
    assert tether.cpp.to_cpp_dtype(tether.float32) == "float"
    with pytest.raises(ValueError, match="Unsupported dtype string: float16"):
        tether.cpp.to_cpp_dtype("float16")


def test_signatures_match_tvm_ffi():
    # Read in a fresh interpreter per runtime, so tvm_ffi's library never
    # joins this process.
    script = (
        "import inspect, json, sys, importlib\n"
        "cpp = importlib.import_module(sys.argv[1] + '.cpp')\n"
        "print(json.dumps({n: [[p.name, str(p.kind), repr(p.default)] for p in "
        "inspect.signature(getattr(cpp, n)).parameters.values()] for n in ('build', 'build_inline', 'load', 'load_inline')}))\n"
    )
    upstream_include_dir()
    sigs = [subprocess.run([sys.executable, "-c", script, runtime], capture_output=True, text=True, check=True).stdout
            for runtime in ("tether", "tvm_ffi")]
    assert sigs[0] == sigs[1]


@pytest.mark.parametrize("name", ["../escape", "/tmp/abs", "a/b", "..", "", "a\\b", ".hidden"])
def test_module_names_cannot_leave_the_cache_directory(name, tmp_path, monkeypatch):
    monkeypatch.setenv("TETHER_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(ValueError, match="module name .* must be letters, digits"):
        tether.cpp.build_inline(name, cpp_sources="int f() { return 1; }")
    assert not (tmp_path / "escape").exists() and not any(tmp_path.glob("*escape*"))


@pytest.mark.parametrize("entry", ["build_inline", "build"])
def test_windows_is_refused_before_the_cache(entry, tmp_path, monkeypatch):
    # What a Windows user gets: a NotImplementedError saying what to do
    # instead, raised before anything is written to the cache.
    monkeypatch.setattr(extension, "IS_WINDOWS", True)
    monkeypatch.setenv("TETHER_CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "f.cc"
    source.write_text("int f() { return 1; }\n")
    with pytest.raises(NotImplementedError, match="not supported on Windows.*tether.load_module"):
        if entry == "build_inline":
            tether.cpp.build_inline("win", cpp_sources="int f() { return 1; }")
        else:
            tether.cpp.build("win", sources=[str(source)])
    assert not (tmp_path / "cache").exists()
