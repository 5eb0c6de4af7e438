"""Functions bound with nanobind take and return tether objects through
<tether/nanobind.h>: a returned object comes back through tether's one
return path, so identity holds as for tether Functions, and errors cross in
both directions as tether itself raises them."""

import ctypes
import gc
import os
import sys

import numpy as np
import pytest

import tether
from tether.testing import tie_state

from plugins import build_nanobind_plugin


@pytest.fixture(scope="module")
def nbm():
    so = build_nanobind_plugin()
    # The peer's libtvm_ffi (imported globally by other suites) exports the
    # same TVMFFI* names; Python's import would bind the module to it. Opened
    # first with tether.load_module's flags, the import reuses this handle,
    # bound to the core the module linked (see README, "From nanobind").
    # TETHER_LOAD_DEEPBIND=0 turns deep binding off here as for load_module
    # (the ASan runtime refuses it; `make test-asan` runs each file in a
    # process of its own instead, where the peer is not loaded).
    ctypes.CDLL(so, mode=os.RTLD_NOW | tether.module.Module._dlopen_mode(None))
    path = os.path.dirname(so)
    sys.path.insert(0, path)
    try:
        import nb_plugin
    finally:
        sys.path.remove(path)
    return nb_plugin


def test_identity_through_nanobind(nbm):
    x = tether.Array([1, 2, 3])
    assert nbm.identity(x) is x
    assert nbm.identity_any(x) is x
    m = tether.Map({"a": 1})
    assert nbm.identity(m) is m
    f = tether.get_global_func("testing.echo")
    assert nbm.identity(f) is f
    assert nbm.identity(None) is None  # bound with nb::arg("x").none()
    assert nbm.identity_any(None) is None
    # Other Python objects travel as tether passes them to a Function.
    o = object()
    assert nbm.identity(o) is o


def test_plain_values_and_conversions(nbm):
    # Arguments convert as for a tether Function: a list becomes an Array.
    assert nbm.array_sum([1, 2, 3]) == 6
    assert nbm.array_sum(tether.Array([4, 5])) == 9
    assert nbm.identity_any(7) == 7
    assert nbm.identity_any("text") == "text"
    assert nbm.str_of("hello") == "hello"
    a = nbm.make_array(3)
    assert type(a) is tether.Array
    assert list(a) == [0, 1, 2]
    assert nbm.type_key([1]) == "ffi.Array"


def test_type_mismatch_is_a_nanobind_type_error(nbm):
    with pytest.raises(TypeError, match="incompatible function arguments"):
        nbm.array_sum(tether.Array(["a"]))
    with pytest.raises(TypeError, match="incompatible function arguments"):
        nbm.counter_value(tether.Array([1]))
    with pytest.raises(TypeError, match="incompatible function arguments"):
        nbm.counter_value(object())
    with pytest.raises(TypeError, match="incompatible function arguments"):
        nbm.identity_strict(None)  # nanobind's rule: None only where .none() says so


def test_make_object_returned_through_nanobind_is_tied(nbm):
    payload = tether.List([1, 2])
    c = nbm.make_counter(5, payload)
    assert type(c).__name__ == "Counter" or isinstance(c, tether.Object)
    assert c.value == 5
    assert nbm.is_registry_allocated(c)
    assert tie_state(c) == ("Active", True)
    assert c.payload is payload
    assert c.payload is c.payload
    assert nbm.identity(c) is c
    assert tether.testing.echo(c) is c
    assert nbm.counter_value(c) == 5
    assert nbm.first(tether.Array([c])) is c
    first = id(c.payload)
    del payload
    gc.collect()
    assert id(c.payload) == first  # kept by the C++ object, revived in place


def test_references_are_released(nbm):
    x = tether.Array([1])
    before = tether.testing.object_use_count(x)
    for _ in range(100):
        nbm.identity(x)
        nbm.use_count(x)
        nbm.identity_any(x)
    assert tether.testing.object_use_count(x) == before


def test_cpp_errors_arrive_as_tether_raises_them(nbm):
    with pytest.raises(ValueError, match="from nanobind") as info:
        nbm.fail("ValueError", "from nanobind")
    with pytest.raises(ValueError) as direct:
        tether.testing.raise_error("ValueError", "from nanobind")
    assert type(info.value) is type(direct.value)
    with pytest.raises(KeyError):
        nbm.fail("KeyError", "missing")
    with pytest.raises(RuntimeError, match="plain C\\+\\+ failure"):
        nbm.fail_std()


def test_python_errors_cross_back_through_cpp(nbm):
    class Boom(Exception):
        pass

    def cb(x):
        if x < 0:
            raise Boom("negative")
        return x * 2

    assert nbm.call(cb, 21) == 42
    with pytest.raises(Boom, match="negative"):
        nbm.call(cb, -1)


def test_tensors(nbm):
    arr = np.arange(12, dtype="float32").reshape(3, 4)
    t = tether.from_dlpack(arr)
    assert nbm.tensor_numel(t) == 12
    assert nbm.same_tensor(t) is t
    assert nbm.tensor_numel(arr) == 12  # converted through DLPack as for a Function argument
