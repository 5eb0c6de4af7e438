"""tvm_ffi_python_helpers.h: a C extension module built against the header
(found through ``libinfo.find_python_helper_include_path()``) converts
values both ways through tether, calls FFI functions, hands Python
callables to the FFI, and carries errors across in both directions."""

import importlib.util
import os
import subprocess
import sys
import sysconfig

import pytest

import tether
from tether import config, libinfo
from plugins import HERE, c_compiler


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    py_include = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(py_include, "Python.h")):  # an interpreter without its headers
        pytest.skip("Python's C headers are not installed")
    out_dir = tmp_path_factory.mktemp("python_helpers")
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    out = os.path.join(str(out_dir), "python_helpers_ext" + suffix)
    cmd = [c_compiler(), "-shared", "-fPIC", "-std=c11", "-Wall", "-Werror", "-o", out,
           os.path.join(HERE, "native", "python_helpers_ext.c"), f"-I{libinfo.find_python_helper_include_path()}",
           f"-I{config.includedir()}", f"-I{py_include}", *config.ldflags().split(), config.libs()]
    subprocess.run(cmd, check=True)
    spec = importlib.util.spec_from_file_location("python_helpers_ext", out)
    # Other suites of this process load apache-tvm-ffi's library with
    # RTLD_GLOBAL; on ELF its TVMFFI* definitions would then take the
    # extension's references ahead of the core it links. Deep binding
    # resolves them in the extension's own dependencies first, as
    # tether.load_module does for modules (the README says the same of
    # extension modules built on nanobind), and is turned off by the same
    # switch (TETHER_LOAD_DEEPBIND=0: the ASan runtime refuses it, and
    # `make test-asan` runs each file in a process of its own instead).
    deep = tether.module.Module._dlopen_mode(None) & getattr(os, "RTLD_DEEPBIND", 0)
    flags = sys.getdlopenflags()
    sys.setdlopenflags(flags | deep)
    try:
        module = importlib.util.module_from_spec(spec)  # loads the library
        spec.loader.exec_module(module)
    finally:
        sys.setdlopenflags(flags)
    return module


def test_the_helper_directory_holds_the_header():
    path = libinfo.find_python_helper_include_path()
    assert os.path.isfile(os.path.join(path, "tvm_ffi_python_helpers.h"))
    assert path in libinfo.include_paths()


@pytest.mark.parametrize("value", [None, True, False, 0, -7, 2**63 - 1, 2.5, "", "hi", "a longer string", b"\x00b"])
def test_plain_values_round_trip(ext, value):
    back = ext.roundtrip(value)
    assert back == value and type(back) in (type(value), tether.core.String, tether.core.Bytes)


def test_plain_values_take_their_type_index(ext):
    assert [ext.type_index(v) for v in (None, 3, True, 1.5)] == [0, 1, 2, 3]


def test_big_ints_and_containers_convert_as_tether_converts_them(ext):
    assert ext.roundtrip(2**80) == 2**80
    arr = ext.roundtrip([1, "x", [2.0]])
    assert isinstance(arr, tether.Array) and list(arr[:2]) == [1, "x"] and list(arr[2]) == [2.0]
    assert ext.type_index([1]) == 71  # ffi.Array


def test_objects_come_back_as_their_one_wrapper(ext):
    arr = tether.convert([1, 2])
    assert ext.roundtrip(arr) is arr


def test_other_python_objects_cross_as_opaque_values(ext):
    o = object()
    assert ext.roundtrip(o) is o
    assert ext.type_index(o) == 74  # ffi.OpaquePyObject


def test_calling_an_ffi_function_with_python_values(ext):
    concat = tether.get_global_func("ffi.Array")
    arr = ext.call(concat.__chandle__(), 1, "two", 3.0)
    assert list(arr) == [1, "two", 3.0]


def test_a_raised_ffi_error_becomes_its_python_exception(ext):
    def fail(x):
        raise ValueError(f"bad {x}")

    f = tether.convert(fail)
    with pytest.raises(ValueError, match="bad 5"):
        ext.call(f.__chandle__(), 5)


def test_python_callables_become_ffi_functions(ext):
    f = ext.as_function(lambda a, b: a * b)
    assert isinstance(f, tether.Function)
    assert f(6, 7) == 42
    with pytest.raises(TypeError, match="expected a callable"):
        ext.as_function(3)


def test_a_c_callback_calls_python_and_returns_errors_as_ffi_errors(ext):
    seen = []

    def body(*args):
        seen.append(args)
        if args and args[0] == "fail":
            raise KeyError("missing")
        return [len(args)]

    f = ext.c_callback(body)
    result = f(1, "s", tether.convert([3]))
    assert list(result) == [3]
    assert seen[0][:2] == (1, "s") and list(seen[0][2]) == [3]
    with pytest.raises(KeyError, match="missing"):
        f("fail")
    del f  # the callable's reference goes with the function
    import gc

    gc.collect()
