"""``tether.Shape``: a tuple of ints that keeps its ``ffi.Shape`` object, as
tvm_ffi's. Every path that hands an ``ffi.Shape`` to Python (call results,
container items, field reads, callback arguments) gives a Shape, and a
Shape crosses back as its object, never as a new Array."""

import copy
import pickle

import pytest

import typing

import tether
import tether.dataclasses as dc
from tether import _ffi
from tether.dataclasses import py_class

ECHO = tether.convert(lambda x: x)


def _same_object(a, b) -> bool:
    return a._tvm_ffi_cached_object.same_as(b._tvm_ffi_cached_object)


def test_a_shape_is_a_tuple_holding_its_object():
    s = tether.Shape((4, 5))
    assert isinstance(s, tuple) and s == (4, 5) and hash(s) == hash((4, 5))
    assert _ffi.type_index_of(s._tvm_ffi_cached_object) == 69
    assert s._tvm_ffi_cached_object._dims() == (4, 5)
    assert tether.Shape(()) == ()


def test_non_integer_dimensions_are_refused():
    with pytest.raises(ValueError, match="tuple of integers"):
        tether.Shape((1, 2.5))


def test_a_shape_crosses_as_its_object_and_comes_back_as_a_shape():
    s = tether.Shape((2, 3))
    back = ECHO(s)
    assert type(back) is tether.Shape and back == s and _same_object(back, s)
    converted = tether.convert(s)
    assert type(converted) is tether.Shape and _same_object(converted, s)


def test_shapes_inside_containers_stay_shapes():
    s = tether.Shape((7,))
    arr = tether.Array([s, (7,)])
    assert type(arr[0]) is tether.Shape and _same_object(arr[0], s)
    assert type(arr[1]) is tether.Array  # a plain tuple is still an Array
    lst = tether.convert([[s]])
    assert type(lst[0][0]) is tether.Shape


def test_callbacks_receive_shapes():
    seen = []
    f = tether.convert(lambda x: seen.append(x) or len(x))
    assert f(tether.Shape((1, 2, 3))) == 3
    assert type(seen[0]) is tether.Shape and seen[0] == (1, 2, 3)


@py_class("tests.shape_values.Holder")
class ShapeHolder(dc.Object):
    shape: tether.Shape
    anything: typing.Any = None


def test_fields_of_shape_type_and_any_type_read_as_shapes():
    s = tether.Shape((9, 9))
    h = ShapeHolder(s, tether.Shape((1,)))
    assert type(h.shape) is tether.Shape and _same_object(h.shape, s)
    assert type(h.anything) is tether.Shape and h.anything == (1,)
    h.shape = (2, 2)  # converted through ffi.Shape's __ffi_convert__
    assert type(h.shape) is tether.Shape and h.shape == (2, 2)
    with pytest.raises(TypeError, match="ffi.Shape"):
        h.shape = "not a shape"


def test_shapes_pickle_copy_and_print():
    s = tether.Shape((3, 1))
    for other in (pickle.loads(pickle.dumps(s)), copy.copy(s), copy.deepcopy(s)):
        assert type(other) is tether.Shape and other == s
    assert tether.get_global_func("ffi.ReprPrint")(s) == "Shape(3, 1)"
    assert repr(s) == "(3, 1)"


def test_the_shape_type_info_names_the_class():
    info = tether.core._type_cls_to_type_info(tether.Shape)
    assert info.type_key == "ffi.Shape" and info.type_cls is tether.Shape
