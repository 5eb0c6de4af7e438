"""tether-config's tvm-ffi-config options: where the CMake package is, which
include directories a build of sources written for TVM-FFI needs (TVM-FFI's
headers from $TETHER_TVM_FFI_INCLUDE_DIR or an installed apache-tvm-ffi),
and ``python -m tvm_ffi.config`` answering from tether while it serves as
tvm_ffi."""

import os
import subprocess
import sys

import pytest

from tether import config, libinfo


def _fake_headers(root):
    """A directory laid out as TVM-FFI's include directory (empty headers)."""
    for rel in ("tvm/ffi/c_api.h", "tvm/ffi/function.h", "dlpack/dlpack.h"):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    return root


def test_cmakedir_holds_the_tvm_ffi_package(capsys):
    assert config.main(["--cmakedir"]) == 0
    cmakedir = capsys.readouterr().out.strip()
    assert os.path.basename(cmakedir) == "tvm_ffi"
    for name in ("tvm_ffi-config.cmake", os.path.join("Utils", "Library.cmake"),
                 os.path.join("Utils", "EmbedCubin.cmake")):
        assert os.path.isfile(os.path.join(cmakedir, name)), name
    # The package finds the core two levels above share/cmake.
    core = os.path.join(cmakedir, os.pardir, os.pardir, os.pardir, os.path.basename(config.libfiles()))
    assert os.path.samefile(core, config.libfiles())


def test_headers_from_the_environment_variable(tmp_path, monkeypatch, capsys):
    headers = _fake_headers(tmp_path / "include")
    monkeypatch.setenv(config.TVM_FFI_INCLUDE_ENV, str(headers))
    assert config.main(["--tvm-ffi-includedir", "--dlpack-includedir"]) == 0
    assert capsys.readouterr().out.split() == [str(headers), str(headers)]
    assert config.main(["--cxxflags"]) == 0
    assert capsys.readouterr().out.split() == [f"-I{config.includedir()}", f"-I{headers}", "-std=c++17"]
    assert config.main(["--cflags"]) == 0
    assert capsys.readouterr().out.split() == [f"-I{config.includedir()}", f"-I{headers}"]


def test_environment_variable_without_headers_is_an_error(tmp_path, monkeypatch, capsys):
    (tmp_path / "tvm" / "ffi").mkdir(parents=True)
    (tmp_path / "tvm" / "ffi" / "c_api.h").write_text("")  # no function.h, no dlpack
    monkeypatch.setenv(config.TVM_FFI_INCLUDE_ENV, str(tmp_path))
    assert config.main(["--cxxflags"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert config.TVM_FFI_INCLUDE_ENV in captured.err and "holds no TVM-FFI headers" in captured.err


def test_bundled_headers_are_tethers_include_dir(monkeypatch, capsys):
    monkeypatch.delenv(config.TVM_FFI_INCLUDE_ENV, raising=False)
    assert config.tvm_ffi_includedir() == config.includedir()
    assert config.main(["--cxxflags"]) == 0
    assert capsys.readouterr().out.split() == [f"-I{config.includedir()}", f"-I{config.includedir()}", "-std=c++17"]


def test_installed_package_headers_are_found_without_bundled_ones(tmp_path, monkeypatch):
    monkeypatch.delenv(config.TVM_FFI_INCLUDE_ENV, raising=False)
    monkeypatch.setattr(libinfo, "_bundled_tvm_ffi_includedir", lambda: None)
    _fake_headers(tmp_path / "tvm_ffi" / "include")
    monkeypatch.setattr(libinfo, "_installed_tvm_ffi_roots", lambda: [str(tmp_path / "tvm_ffi")])
    assert config.tvm_ffi_includedir() == str(tmp_path / "tvm_ffi" / "include")


def test_missing_headers_name_what_to_install(monkeypatch, capsys):
    monkeypatch.delenv(config.TVM_FFI_INCLUDE_ENV, raising=False)
    monkeypatch.setattr(libinfo, "_installed_tvm_ffi_roots", lambda: [])
    monkeypatch.setattr(libinfo, "_bundled_tvm_ffi_includedir", lambda: None)
    assert config.tvm_ffi_includedir() is None
    # Flags for tether's own headers still work without TVM-FFI's.
    assert config.main(["--cxxflags"]) == 0
    assert capsys.readouterr().out.split() == [f"-I{config.includedir()}", "-std=c++17"]
    assert config.main(["--dlpack-includedir"]) == 1
    err = capsys.readouterr().err
    assert "apache-tvm-ffi" in err and config.TVM_FFI_INCLUDE_ENV in err


def test_libfiles_and_libs_name_the_core(capsys):
    assert config.main(["--libfiles", "--libs"]) == 0
    libfile, libs = capsys.readouterr().out.split()
    assert os.path.basename(libfile).startswith(("libtether_core", "tether_core")) and os.path.isfile(libfile)
    assert libs == "-ltether_core"


@pytest.mark.parametrize("interpreter_options", [[], ["-X", "utf8"]])
def test_python_m_tvm_ffi_config_answers_from_tether(interpreter_options, capsys):
    assert config.main(["--cmakedir", "--libdir"]) == 0
    expected = capsys.readouterr().out.split()
    env = dict(os.environ, TETHER_PROVIDE_TVM_FFI="1")
    done = subprocess.run([sys.executable, *interpreter_options, "-m", "tvm_ffi.config", "--cmakedir", "--libdir"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert [os.path.realpath(p) for p in done.stdout.split()] == [os.path.realpath(p) for p in expected]
