"""The Python API: conversions, errors both ways, containers, py_class semantics."""

import dataclasses
import pickle

import pytest

import typing

import tether
import tether.dataclasses as dc
from tether.dataclasses import field, py_class
from tether.testing import apply_n, echo, raise_error

from conftest import Holder, Inner


@pytest.mark.parametrize("value", [None, 0, -7, 2**62, 1.5, True, False, "", "short", "x" * 100, b"", b"\x00\xffbytes" * 3])
def test_scalars_round_trip(value):
    out = echo(value)
    # Strings and bytes beyond 7 bytes live on the heap and come back as
    # tether.core.String/Bytes holding the object (as tvm_ffi's do).
    heap = isinstance(value, (str, bytes)) and len(value.encode() if isinstance(value, str) else value) > 7
    expected = {str: tether.core.String, bytes: tether.core.Bytes}[type(value)] if heap else type(value)
    assert out == value and type(out) is expected


def test_ints_beyond_int64_cross_exactly():
    for v in (2**63, -(2**63) - 1, 2**70, -(2**200)):
        out = echo(v)
        assert out == v and type(out) is int


def test_lists_and_dicts_convert_to_containers():
    arr = tether.convert([1, "a", [2.5]])
    assert isinstance(arr, tether.Array)
    assert arr[0] == 1 and arr[1] == "a" and list(arr[2]) == [2.5]
    m = tether.convert({"k": 1, 2: "v"})
    assert isinstance(m, tether.Map)
    assert m["k"] == 1 and m[2] == "v" and len(m) == 2 and "k" in m and "zz" not in m
    with pytest.raises(KeyError):
        m["missing"]


def test_array_protocol():
    arr = tether.Array(range(5))
    assert len(arr) == 5 and list(arr) == [0, 1, 2, 3, 4]
    assert arr[-1] == 4 and arr[1:3] == [1, 2]
    with pytest.raises(IndexError, match="Index out of range"):
        arr[5]
    with pytest.raises(TypeError, match="integers"):
        arr["0"]
    assert pickle.loads(pickle.dumps(arr)).__class__ is tether.Array


def test_list_protocol():
    lst = tether.List([1, 2])
    lst.append(3)
    lst.insert(0, 0)
    lst[1] = "one"
    assert list(lst) == [0, "one", 2, 3]
    assert lst.pop() == 3 and len(lst) == 3
    lst.clear()
    assert len(lst) == 0
    with pytest.raises(IndexError):
        lst.pop()


def test_map_protocol():
    m = tether.Map({"a": 1, "b": 2})
    assert sorted(m.keys()) == ["a", "b"] and sorted(m.values()) == [1, 2]
    assert dict(m.items()) == {"a": 1, "b": 2}
    assert m.get("zz", 5) == 5
    assert dict(pickle.loads(pickle.dumps(m)).items()) == {"a": 1, "b": 2}


def test_callbacks_receive_and_return_values():
    calls = []
    result = apply_n(lambda a, b: calls.append((a, b)) or a + b, 3, 20, 22)
    assert result == 42 and calls == [(20, 22)] * 3


def test_python_exceptions_cross_back_as_themselves():
    class MyError(Exception):
        pass

    err = MyError("from a callback")

    def fail():
        raise err

    with pytest.raises(MyError) as info:
        apply_n(fail, 1)
    assert info.value is err

    def key_error():
        raise KeyError("k")

    with pytest.raises(KeyError):
        apply_n(key_error, 1)


@pytest.mark.parametrize("kind, exc", [("ValueError", ValueError), ("TypeError", TypeError), ("IndexError", IndexError), ("AttributeError", AttributeError)])
def test_native_errors_become_python_exceptions(kind, exc):
    with pytest.raises(exc, match="native message"):
        raise_error(kind, "native message")


def test_unknown_error_kind_becomes_runtime_error():
    # As tvm_ffi: a kind without a registered class raises RuntimeError with
    # the message; the FFI error (and its kind) stays on the exception.
    with pytest.raises(RuntimeError, match="^detail$") as info:
        raise_error("CustomKind", "detail")
    assert info.value.__tvm_ffi_error__.kind == "CustomKind"


def test_missing_function_is_named():
    with pytest.raises(ValueError, match="'no.such.func' is not registered"):
        tether.get_global_func("no.such.func")
    assert tether.get_global_func("no.such.func", allow_missing=True) is None
    with pytest.raises(TypeError, match="must be a str"):
        tether.get_global_func(3)


def test_register_global_func_from_python():
    @tether.register_global_func("tests.py_add")
    def add(a, b):
        return a + b

    f = tether.get_global_func("tests.py_add")
    assert f(2, 3) == 5
    with pytest.raises(ValueError, match="already registered"):
        tether.register_global_func("tests.py_add", add)
    tether.register_global_func("tests.py_add", lambda a, b: a * b, override=True)
    assert tether.get_global_func("tests.py_add")(2, 3) == 6
    with pytest.raises(TypeError, match="needs a callable"):
        tether.register_global_func("tests.not_callable", 5)


def test_bad_field_types_name_the_field():
    # TVM-FFI's messages: setters say what they expected, constructors name the field.
    h = Holder(Inner(1))
    with pytest.raises(TypeError, match="^expected tests.Inner, got int$"):
        h.x = 5
    with pytest.raises(TypeError, match="^tests.Inner.__ffi_init__\\(\\) field 'v':\n  expected int, got str$"):
        Inner("nope")
    with pytest.raises(TypeError, match="expected tests.Inner, got tests.Holder"):
        Holder(h)


def test_py_class_follows_dataclass_semantics():
    @py_class("tests.Config", eq=True)
    class Config(dc.Object):
        name: str
        size: int = 3
        tags: typing.Any = field(default_factory=list)
        secret: str = field(default="s", repr=False)
        debug: bool = field(default=False, kw_only=True)

    c = Config("cfg", debug=True)
    assert (c.name, c.size, c.debug, c.secret) == ("cfg", 3, True, "s")
    assert list(c.tags) == []
    assert repr(c) == 'tests.Config(name="cfg", size=3, tags=(), debug=True)'  # ffi.ReprPrint, as TVM-FFI
    # Field-wise equality (TVM-FFI's RecursiveEq): containers by content.
    assert c == Config("cfg", tags=c.tags, debug=True)
    assert c == Config("cfg", debug=True)
    assert c != Config("cfg", size=4, tags=c.tags, debug=True)
    assert Config.__hash__ is tether.Object.__hash__  # TVM-FFI keeps the handle hash with eq=True
    with pytest.raises(TypeError, match="tests.Config.__ffi_init__\\(\\) missing required argument: 'name'"):
        Config()
    with pytest.raises(TypeError, match="takes at most 4 positional argument"):
        Config("a", 1, [], "s", True)
    assert not hasattr(c, "__dict__")
    assert [f.name for f in dc.fields(c)] == ["name", "size", "tags", "secret", "debug"]


def test_py_class_frozen_and_init_false():
    @py_class("tests.Frozen", frozen=True)
    class Frozen(dc.Object):
        x: int = 1
        derived: int = field(default=0, init=False)

    f = Frozen(5)
    assert f.x == 5 and f.derived == 0
    with pytest.raises(AttributeError, match="property of 'Frozen' object has no setter"):
        f.x = 3
    with pytest.raises(TypeError):
        Frozen(1, 2)


def test_py_class_rejects_bad_definitions():
    with pytest.raises(TypeError, match="must inherit from a registered FFI Object type"):
        py_class("tests.NotObject")(type("NotObject", (), {}))

    with pytest.raises(ValueError, match="already registered"):
        py_class("tests.Inner")(type("Again", (dc.Object,), {"__annotations__": {"v": int}}))

    with pytest.raises(ValueError, match="order=True requires eq=True"):
        py_class("tests.BadOrder", order=True)


def test_wrapper_helpers(holder):
    x = holder.x
    assert x.__chandle__() == x.__ctypes_handle__().value != 0
    assert x.same_as(holder.x) and not x.same_as(holder)
    assert x.type_key == "tests.Inner"
    assert tether.testing.object_use_count(x) >= 1


def test_tether_config_prints_build_flags(capsys):
    from tether import config

    assert config.main(["--includedir"]) == 0
    inc = capsys.readouterr().out.strip()
    import os

    assert os.path.exists(os.path.join(inc, "tether", "c_api.h"))
    assert config.main(["--libs"]) == 0
    assert capsys.readouterr().out.strip() == "-ltether_core"
    assert os.path.exists(os.path.join(config.libdir(), "libtether_core.so"))


def test_field_descriptors_reject_foreign_objects(holder):
    desc = Inner.__dict__["v"]
    with pytest.raises(TypeError, match='field "v" of tests.Inner read on a int object'):
        desc.__get__(5, Inner)
    with pytest.raises(TypeError, match='belongs to tests.Inner, not to tests.Holder'):
        desc.__get__(holder, Inner)
    with pytest.raises(TypeError, match="belongs to tests.Inner"):
        desc.__set__(holder, 3)
