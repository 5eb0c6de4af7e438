"""Which library and directories ``libinfo``/``tether-config`` name, on
tether's own and while tether serves as tvm_ffi: ``-ltvm_ffi`` then links
(the wheel's ``libtvm_ffi.so`` is a filter library on the core) and the
program runs on tether's one core; DLPack's include directory and the
packaged core sources are real directories that the answers agree on."""

import os
import shutil
import subprocess
import sys

import pytest

from tether import config, libinfo
from plugins import c_compiler

SERVING_LIBRARY = os.path.join(config.libdir(), "libtvm_ffi.so")
needs_serving_library = pytest.mark.skipif(
    not os.path.isfile(SERVING_LIBRARY), reason="libtvm_ffi.so is built for ELF platforms only")

PROGRAM = r"""
#include <stdio.h>
#include <string.h>
#include <tether/c_api.h>
int main(void) {
  TVMFFIByteArray name = {"ffi.Array", 9};
  TVMFFIObjectHandle f = NULL;
  if (TVMFFIFunctionGetGlobal(&name, &f) != 0 || f == NULL) return 2;
  TVMFFIAny args[2], out;
  memset(args, 0, sizeof(args));
  memset(&out, 0, sizeof(out));
  args[0].type_index = kTVMFFIInt; args[0].v_int64 = 4;
  args[1].type_index = kTVMFFIInt; args[1].v_int64 = 5;
  if (TVMFFIFunctionCall(f, args, 2, &out) != 0) return 3;
  const TVMFFISeqCell* cell = (const TVMFFISeqCell*)((const char*)out.v_obj + sizeof(TVMFFIObject));
  printf("%d %lld\n", out.type_index, (long long)cell->size);
  TVMFFIObjectDecRef(out.v_obj);
  TVMFFIObjectDecRef(f);
  FILE* maps = fopen("/proc/self/maps", "r");
  char line[4096];
  while (maps && fgets(line, sizeof line, maps)) {
    if (strstr(line, "/libtether_core.so")) { printf("core mapped\n"); break; }
  }
  if (maps) fclose(maps);
  return 0;
}
"""


def _serving_config(*flags):
    env = dict(os.environ, TETHER_PROVIDE_TVM_FFI="1")
    done = subprocess.run([sys.executable, "-m", "tvm_ffi.config", *flags], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout.split("\n")[:-1]


def test_on_its_own_tether_names_the_core_with_an_rpath():
    lib = libinfo.find_libtvm_ffi()
    assert os.path.basename(lib).startswith(("libtether_core.", "tether_core."))
    if sys.platform != "win32":
        assert config.libs() == "-ltether_core"
        assert config.ldflags().split() == [f"-L{config.libdir()}", f"-Wl,-rpath,{config.libdir()}"]


@needs_serving_library
def test_serving_names_libtvm_ffi_and_tvm_ffi_configs_flags():
    # Printed in tvm-ffi-config's order, whatever the order asked in.
    libdir, libfiles, libs, ldflags = _serving_config("--ldflags", "--libs", "--libfiles", "--libdir")
    assert libs == "-ltvm_ffi"
    assert os.path.basename(libfiles) == "libtvm_ffi.so" and os.path.samefile(libfiles, SERVING_LIBRARY)
    assert os.path.samefile(libdir, os.path.dirname(libfiles))
    assert ldflags == f"-L{os.path.dirname(libfiles)}"


@needs_serving_library
def test_a_program_linked_with_ltvm_ffi_runs_on_the_core(tmp_path):
    libs, ldflags = _serving_config("--libs", "--ldflags")
    source = tmp_path / "prog.c"
    source.write_text(PROGRAM)
    exe = tmp_path / "prog"
    libdir = ldflags[len("-L"):]
    subprocess.run([c_compiler(), "-std=c11", "-o", str(exe), str(source), f"-I{config.includedir()}", ldflags, libs,
                    f"-Wl,-rpath,{libdir}"], check=True)
    needed = subprocess.run(["readelf", "-d", str(exe)], capture_output=True, text=True) if shutil.which("readelf") \
        else None
    if needed is not None:
        assert "[libtvm_ffi.so]" in needed.stdout and "[libtether_core.so]" not in needed.stdout
    done = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, (done.returncode, done.stderr)
    first, second = done.stdout.splitlines()
    assert first == "71 2"  # an ffi.Array of two items, made by the core's ffi.Array
    assert second == "core mapped"


@needs_serving_library
def test_the_serving_library_resolves_symbols_to_the_core():
    import ctypes

    core = ctypes.CDLL(os.path.join(config.libdir(), "libtether_core.so"))
    serving = ctypes.CDLL(SERVING_LIBRARY)
    for name in ("TVMFFIFunctionGetGlobal", "TVMFFIObjectIncRef", "TVMFFIGetTypeInfo"):
        assert ctypes.cast(getattr(serving, name), ctypes.c_void_p).value == \
            ctypes.cast(getattr(core, name), ctypes.c_void_p).value, name


def test_dlpack_directory_is_tvm_ffis_and_matches_the_flags():
    if config.tvm_ffi_includedir() is None:
        pytest.skip("no TVM-FFI headers installed (apache-tvm-ffi or $TETHER_TVM_FFI_INCLUDE_DIR): no DLPack header")
    path = libinfo.find_dlpack_include_path()
    assert os.path.isfile(os.path.join(path, "dlpack", "dlpack.h"))
    assert path == config.dlpack_includedir()
    dirs = f"-I{libinfo.find_include_path()} -I{path}"
    assert config.cflags() == dirs
    assert config.cxxflags() == f"{dirs} -std=c++17"


def test_missing_dlpack_headers_raise_runtime_error(monkeypatch):
    monkeypatch.delenv(config.TVM_FFI_INCLUDE_ENV, raising=False)
    monkeypatch.setattr(libinfo, "_installed_tvm_ffi_roots", lambda: [])
    monkeypatch.setattr(libinfo, "_bundled_tvm_ffi_includedir", lambda: None)
    with pytest.raises(RuntimeError, match="apache-tvm-ffi"):
        libinfo.find_dlpack_include_path()
    assert libinfo.find_include_path() in libinfo.include_paths()


def test_the_source_directory_is_a_cargo_workspace_of_the_core():
    try:
        src = libinfo.find_source_path()
    except RuntimeError:
        pytest.skip("this installation carries no sources (a Bazel-built package)")
    assert os.path.isfile(os.path.join(src, "rust", "core", "Cargo.toml"))
    assert os.path.isdir(os.path.join(src, "rust", "core", "src"))
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.skip("cargo is not on PATH to read the packaged workspace")
    done = subprocess.run([cargo, "metadata", "--offline", "--no-deps", "--format-version", "1", "--manifest-path",
                           os.path.join(src, "Cargo.toml")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    import json

    assert {p["name"] for p in json.loads(done.stdout)["packages"]} >= {"tether-core", "tether-sys"}
