"""Behaviours behind tvm_ffi's names that clients (Apache TVM first) rely
on: where a name lives is part of the API, and so is what it does."""

from __future__ import annotations

import ctypes
import subprocess
import sys

import numpy as np
import pytest

import tether
import tether.dataclasses as dc
from tether import core, registry


def test_register_global_func_as_a_bare_decorator_takes_the_function_name():
    @tether.register_global_func
    def tether_test_bare_decorator(x):
        return x + 1

    try:
        f = tether.get_global_func("tether_test_bare_decorator")
        assert f(41) == 42
        assert isinstance(tether_test_bare_decorator, tether.Function)
    finally:
        tether.remove_global_func("tether_test_bare_decorator")


def test_register_global_func_rejects_a_name_that_is_not_a_string():
    with pytest.raises(ValueError, match="expect string function name"):
        tether.register_global_func(42, lambda: None)


def test_register_object_skips_unknown_keys_only_when_asked(monkeypatch):
    class Unknown(tether.Object):
        pass

    with pytest.raises(ValueError, match="Cannot find object type index for tests.NoSuchType"):
        registry.register_object("tests.NoSuchType")(Unknown)
    monkeypatch.setattr(registry, "_SKIP_UNKNOWN_OBJECTS", True)
    assert registry.register_object("tests.NoSuchType")(Unknown) is Unknown


def test_py_class_fields_may_name_classes_local_to_the_defining_function():
    @dc.py_class("tests.names.LocalInner")
    class Inner(dc.Object):
        x: int

    @dc.py_class("tests.names.LocalOuter")
    class Outer(dc.Object):
        a: Inner
        b: "Inner"

    out = Outer(a=Inner(x=1), b=Inner(x=2))
    assert (out.a.x, out.b.x) == (1, 2)
    with pytest.raises(TypeError):
        Outer(a=3, b=Inner(x=2))


def test_dtype_keeps_the_callers_spelling_and_numpy_dtypes_cross_as_dtypes():
    d = tether.dtype("i8")
    assert str(d) == "i8" and (d.type_code, d.bits, d.lanes) == (0, 8, 1)
    echo = tether.get_global_func("testing.echo")
    out = echo(np.dtype("float16"))
    assert isinstance(out, tether.dtype) and out == "float16"
    assert tether.convert(tether.int8) == "int8" and isinstance(tether.convert(tether.int8), tether.dtype)
    with pytest.raises(ValueError, match="scalable vector"):
        tether.dtype("int32xvscalex4").itemsize


def test_device_takes_numpy_ints_and_rejects_bad_input_by_type():
    assert tether.device("cuda", np.int32(1)) == tether.device("cuda:1")
    with pytest.raises(TypeError, match="device index must be an int"):
        tether.device("cpu", "?")
    with pytest.raises(ValueError, match="Unknown device: cpu:"):
        tether.device("cpu:")
    # Codes from 128 up are a runtime's own (TVM's RPC sessions): they pass.
    assert tether.device(128 + 1, 0).dlpack_device_type() == 129


def test_set_class_device_makes_every_device_the_subclass():
    class MyDevice(tether.Device):
        pass

    old = core._CLASS_DEVICE
    core._set_class_device(MyDevice)
    try:
        assert isinstance(tether.device("cpu"), MyDevice)
        assert isinstance(tether.get_global_func("testing.echo")(tether.device("cpu")), MyDevice)
        assert core._CLASS_DEVICE is MyDevice
    finally:
        core._set_class_device(old)
    assert type(tether.device("cpu")) is old


def test_assigned_object_repr_is_not_consulted():
    # Apache TVM assigns a runtime-only fallback printer here
    # (tvm.runtime._ffi_node_api) that raises on plain objects; tvm_ffi's
    # Object.__repr__ never calls it, and neither does tether's.
    func = tether.get_global_func("testing.echo")
    before = repr(func)
    core.__object_repr__ = lambda obj: 1 + ""
    try:
        assert repr(func) == before
    finally:
        del core.__object_repr__


def test_core_lookup_helpers():
    index = core._object_type_key_to_index("ffi.Array")
    assert index == 71 and core._object_type_key_to_index("no.such.key") is None
    info = core._type_index_to_type_info(index)
    assert info.type_key == "ffi.Array"
    assert core._lookup_or_register_type_info_from_type_key("ffi.Array") is info
    with pytest.raises(ValueError, match="no.such.key"):
        core._lookup_or_register_type_info_from_type_key("no.such.key")
    assert core._make_strides_from_shape((2, 3, 4)) == (12, 4, 1)
    assert core._shape_obj_get_py_tuple(tether.Shape((2, 3))) == (2, 3)
    assert core.CAny(5).type_index == 1 and core.CAny("a long string value").type_index == 65
    assert core._to_py_class_value(core.CAny([1, 2])) == [1, 2]


def test_python_errors_cross_as_ffi_errors_with_their_kind():
    try:
        raise KeyError("k")
    except KeyError as e:
        err = core._convert_to_ffi_error(e)
    assert isinstance(err, core.Error) and err.kind == "KeyError" and "test_tvm_ffi_names" in err.backtrace


def test_libinfo_finds_and_loads_libraries_by_target_name(tmp_path):
    from tether import libinfo

    lib = libinfo.load_lib_ctypes("tether", "tether_core", "RTLD_LOCAL")
    assert isinstance(lib, ctypes.CDLL)
    with pytest.raises(ValueError, match="mode must name a ctypes loading mode"):
        libinfo.load_lib_ctypes("tether", "tether_core", "RTLD_NOPE")
    with pytest.raises(RuntimeError, match="Cannot find library libno_such_target"):
        libinfo._find_library_by_basename("no-such-dist", "no_such_target", [tmp_path],
                                          use_env_path=False)
    with pytest.raises(TypeError, match="extra_lib_paths\\[0\\] must be a pathlib.Path"):
        libinfo._find_library_by_basename("no-such-dist", "x", ["not-a-path"])
    assert libinfo._resolve_and_validate([tmp_path / "a", tmp_path], lambda p: p.is_dir()) == str(tmp_path)
    assert libinfo._split_env_var("TETHER_SURELY_UNSET_VARIABLE", ":") == []


def test_ffi_api_module_holds_the_ffi_globals():
    from tether import _ffi_api

    assert _ffi_api.ReprPrint(tether.Array([1])) == repr(tether.Array([1]))
    assert isinstance(_ffi_api.Array, tether.Function)


def test_provide_tvm_ffi_resolves_every_submodule_to_tethers():
    code = ("import tether; tether.provide_tvm_ffi()\n"
            "import tvm_ffi.dataclasses.py_class as a, tether.dataclasses.py_class as b\n"
            "from tvm_ffi.libinfo import load_lib_ctypes\n"
            "assert a is b and load_lib_ctypes is tether.libinfo.load_lib_ctypes\n"
            "try:\n    import tvm_ffi.no_such_module\nexcept ModuleNotFoundError as e:\n    print(e.name)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "tvm_ffi.no_such_module"
