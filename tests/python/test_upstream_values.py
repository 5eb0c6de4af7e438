"""Values as tvm_ffi's Python layer returns them, and the object-level
entry points it offers.

Heap strings and bytes (``ffi.String``/``ffi.Bytes`` objects) come back
from every path as ``tether.core.String``/``Bytes`` holding the object,
small inline ones as plain ``str``/``bytes``; ``Object.__move_handle_from__``
moves a handle between wrappers under the tying rules;
``_register_type_attr`` sets a type attribute through the core; BigInt map
keys are found by value; float fields and the float schema take ints
beyond int64.
"""

import gc
from typing import Any

import pytest

import tether
from tether import _ffi
from tether.core import Bytes, Object, String, TypeSchema, _register_type_attr
from tether.dataclasses import py_class
from tether.testing import apply_n, echo, object_use_count, tie_state

LONG = "a string longer than seven bytes"
LONG_BYTES = b"bytes longer than seven"


# ---- strings and bytes ---------------------------------------------------------


@pytest.mark.parametrize("value", ["", "s", "seven!!", b"", b"b", b"seven!!"])
def test_small_strings_and_bytes_come_back_plain(value):
    out = echo(value)
    assert out == value and type(out) is type(value)


@pytest.mark.parametrize("value, cls", [(LONG, String), ("é" * 4, String), (LONG_BYTES, Bytes), (b"\x00" * 8, Bytes)])
def test_heap_strings_and_bytes_come_back_holding_their_object(value, cls):
    out = echo(value)
    assert type(out) is cls and out == value and hash(out) == hash(value)
    cached = out._tvm_ffi_cached_object
    assert isinstance(cached, Object) and _ffi.type_index_of(cached) == (65 if cls is String else 66)
    # A value, not an identity: the wrapper is not tied to the handle.
    assert tie_state(cached) == ("Detached", False)
    assert object_use_count(cached) == 1


def test_bytearray_comes_back_as_bytes():
    out = echo(bytearray(LONG_BYTES))
    assert type(out) is Bytes and out == LONG_BYTES


def test_passing_a_string_back_passes_its_object():
    s = echo(LONG)
    h = s._tvm_ffi_cached_object.__chandle__()
    again = echo(s)
    assert again == LONG and again._tvm_ffi_cached_object.__chandle__() == h
    b = echo(LONG_BYTES)
    assert echo(b)._tvm_ffi_cached_object.__chandle__() == b._tvm_ffi_cached_object.__chandle__()


def test_strings_in_containers_and_fields():
    arr = tether.convert([LONG, "s", LONG_BYTES])
    assert [type(v) for v in arr] == [String, str, Bytes]
    assert type(arr[0]) is String and type(arr[1]) is str
    m = tether.convert({LONG: LONG, "k": "v"})
    assert type(m[LONG]) is String and type(m["k"]) is str
    assert sorted(type(k).__name__ for k in m) == ["String", "str"]

    @py_class("tests.upstream_values.Named")
    class Named(Object):
        name: str = ""
        data: Any = None

    n = Named(LONG, LONG_BYTES)
    assert type(n.name) is String and type(n.data) is Bytes
    n.data = "short"
    assert type(n.data) is str


def test_callbacks_receive_strings_as_tvm_ffi_does():
    seen = []
    for value in (LONG, "s", LONG_BYTES, b"b"):
        assert apply_n(lambda x: seen.append(type(x)) or x, 1, value) == value
    assert seen == [String, str, Bytes, bytes]
    f = tether.convert(lambda: LONG)
    assert type(f()) is String


def test_callbacks_receive_borrowed_c_strings_and_byte_arrays_as_plain_values():
    import ctypes
    import os

    class Any_(ctypes.Structure):
        _fields_ = [("type_index", ctypes.c_int32), ("small_str_len", ctypes.c_uint32), ("v", ctypes.c_void_p)]

    class ByteArray(ctypes.Structure):
        _fields_ = [("data", ctypes.c_char_p), ("size", ctypes.c_size_t)]

    core = ctypes.CDLL(os.path.join(os.path.dirname(tether.__file__), "libtether_core.so"))
    seen = []
    f = tether.convert(lambda *a: seen.extend(a))
    text = ctypes.create_string_buffer(LONG.encode())
    data = ByteArray(LONG_BYTES, len(LONG_BYTES))
    args = (Any_ * 2)(Any_(8, 0, ctypes.addressof(text)), Any_(9, 0, ctypes.addressof(data)))  # RawStr, ByteArrayPtr
    out = Any_(0, 0, None)
    assert core.TVMFFIFunctionCall(ctypes.c_void_p(f.__chandle__()), args, 2, ctypes.byref(out)) == 0
    assert seen == [LONG, LONG_BYTES] and [type(v) for v in seen] == [str, bytes]


def test_string_values_pickle_and_free_their_objects():
    import pickle

    s = echo(LONG)
    assert type(pickle.loads(pickle.dumps(s))) is str
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(2000):
        echo(LONG)
        echo(LONG_BYTES)
    gc.collect()
    assert len(gc.get_objects()) <= before + 5


# ---- move_handle -----------------------------------------------------------------


def _empty(cls):
    w = _ffi.CObject.__new__(cls)  # a wrapper without a handle
    assert w.__chandle__() == 0
    return w


def test_move_handle_moves_the_binding():
    src = tether.Array([1, 2, 3])
    h = src.__chandle__()
    assert tie_state(src) == ("Active", True)
    dst = _empty(tether.Array)
    dst.__move_handle_from__(src)
    assert dst.__chandle__() == h and src.__chandle__() == 0
    assert tie_state(dst) == ("Active", True)
    assert echo(dst) is dst and list(dst) == [1, 2, 3]
    assert object_use_count(dst) == 1
    with pytest.raises(ValueError):
        list(src)
    del src
    gc.collect()
    assert list(echo(dst)) == [1, 2, 3]


def test_move_handle_leaks_nothing_and_frees_once():
    inner = tether.Array([7])
    holder = tether.List([inner])
    assert object_use_count(inner) == 2
    dst = _empty(tether.Array)
    dst.__move_handle_from__(inner)
    assert object_use_count(dst) == 2
    del inner
    gc.collect()
    assert object_use_count(dst) == 2 and holder[0] is dst
    del dst
    gc.collect()
    assert object_use_count(holder[0]) == 2  # the list and the new wrapper
    assert list(holder[0]) == [7]


def test_move_handle_of_an_untied_wrapper_binds_the_target():
    s = echo(LONG)
    dst = _empty(Object)
    dst.__move_handle_from__(s._tvm_ffi_cached_object)
    assert tie_state(dst) == ("Active", True)
    assert s._tvm_ffi_cached_object.__chandle__() == 0
    assert _ffi.string_object_bytes(dst) == LONG.encode()


def test_move_handle_into_a_function_subclass():
    class Tagged:
        def __init__(self, tag):
            self.tag = tag

    class MyFunction(tether.Function, Tagged):
        def __init__(self, tag):
            Tagged.__init__(self, tag)

    f = tether.convert(lambda x: x + 1)
    g = MyFunction("t")
    g.__move_handle_from__(f)
    assert g.tag == "t" and g(1) == 2 and echo(g) is g
    assert f.__chandle__() == 0


def test_move_handle_refusals():
    a, b = tether.Array([1]), tether.Array([2])
    with pytest.raises(TypeError):
        a.__move_handle_from__(b)  # the target already has a handle
    assert list(a) == [1] and list(b) == [2]
    dst = _empty(tether.Array)
    with pytest.raises(TypeError):
        _ffi.move_handle(dst, "not a wrapper")
    moved = _empty(tether.Array)
    moved.__move_handle_from__(b)
    with pytest.raises(ValueError):
        dst.__move_handle_from__(b)  # b was moved from
    assert dst.__chandle__() == 0

    # A handle a running call holds by reference stays where it is.
    def grab(x):
        dst.__move_handle_from__(x)

    with pytest.raises(ValueError, match="running call"):
        apply_n(grab, 1, a)
    assert list(a) == [1] and dst.__chandle__() == 0


# ---- register_type_attr ---------------------------------------------------------


def test_register_type_attr_sets_the_column():
    @py_class("tests.upstream_values.Attr")
    class Attr(Object):
        v: int = 0

    index = Attr.__tether_type_index__
    _register_type_attr(index, "__tests_upstream_value__", 5)
    assert _ffi.type_attr(index, "__tests_upstream_value__") == 5
    _register_type_attr(index, "__tests_upstream_fn__", lambda x: x * 2)
    assert _ffi.type_attr(index, "__tests_upstream_fn__")(21) == 42
    with pytest.raises(Exception, match="already registered"):
        _register_type_attr(index, "__tests_upstream_value__", 6)
    assert _ffi.type_attr(index, "__tests_upstream_value__") == 5
    with pytest.raises(ValueError):
        _ffi.register_type_attr(1 << 30, "__tests_upstream_value__", 1)


# ---- BigInt keys, float fields ------------------------------------------------------


@pytest.mark.parametrize("make", [tether.convert, tether.Dict])
def test_big_int_keys_are_found_by_value(make):
    keys = [2**70, -(2**70), 2**64, 2**200]
    m = make({k: i for i, k in enumerate(keys)})
    for i, k in enumerate(keys):
        assert m[k] == i and k in m
    assert 2**71 not in m and 1 not in m
    assert 2**70 in tether.List([2**70])


def test_float_schema_takes_ints_beyond_int64():
    assert TypeSchema("float").convert_value(2**70) == float(2**70)
    assert TypeSchema("float").convert_value(-(2**63) - 1) == float(-(2**63) - 1)
    with pytest.raises(OverflowError):
        TypeSchema("float").convert_value(10**400)


def test_float_fields_take_ints_beyond_int64():
    @py_class("tests.upstream_values.F")
    class F(Object):
        x: float = 0.0

    assert F(2**70).x == float(2**70)
    f = F(1.0)
    f.x = -(2**70)
    assert f.x == -float(2**70)
    with pytest.raises(Exception, match="too large"):
        F(10**400)


@pytest.mark.parametrize("value", ["x" * 600, "é" * 400, b"\x00b" * 300, "x" * 512, b"y" * 100_000])
def test_long_strings_and_bytes_are_lent_not_copied(value):
    # A str or bytes of 512 bytes and more crosses as an FFI object lending
    # the Python object's own buffer: it keeps the Python object alive (one
    # reference, whatever holds the FFI object), compares and hashes by
    # content like any string, and comes back equal, as String/Bytes.
    import sys

    base = sys.getrefcount(value)
    held = tether.Array([value, value])
    assert sys.getrefcount(value) == base + 2
    back = held[0]
    assert back == value and type(back) is (Bytes if isinstance(value, bytes) else String)
    copied = tether.convert(value[:-1] + value[-1:])  # equal content, another object
    assert tether.structural_equal(held[1], copied) and tether.structural_hash(held[1]) == tether.structural_hash(copied)
    assert tether.serialization.from_json_graph_str(tether.serialization.to_json_graph_str(held))[0] == value
    del held, back, copied
    gc.collect()
    assert sys.getrefcount(value) == base, "released with the FFI objects"


def test_lent_strings_outlive_the_name_they_came_from():
    kept = tether.Map({"k": "v" * 1000, "b": b"w" * 2000})
    gc.collect()
    assert kept["k"] == "v" * 1000 and kept["b"] == b"w" * 2000
    assert echo("z" * 700) == "z" * 700
