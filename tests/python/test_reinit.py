"""Re-initialising a live wrapper (``__init__`` or
``__init_handle_by_constructor__`` run again): the wrapper gets a new
native object and stays its one canonical wrapper, the old object is
released (or, if something else keeps it, comes back as a wrapper of its
own), and a call holding the wrapper by reference refuses it."""

import tether
import tether.testing as tt
from tether import _ffi, core

import pytest


def _ffi_init_of(obj):
    return core._lookup_type_attr(type(obj).__tvm_ffi_type_info__.type_index, "__ffi_init__")


def test_reinit_gives_a_new_object_with_the_new_values_and_resets_init_false_fields():
    obj = tt._TestCxxAutoInit(1, c=3)
    obj.b = 999
    before = obj.__chandle__()
    obj.__init_handle_by_constructor__(_ffi_init_of(obj), core.KWARGS, "a", 100, "c", 300)
    assert (obj.a, obj.b, obj.c) == (100, 42, 300)
    assert obj.__chandle__() not in (0, before)


def test_the_wrapper_stays_the_canonical_wrapper_of_its_new_object():
    obj = tt._TestCxxAutoInit(1, c=3)
    obj.__init__(5, c=6)
    echo = tether.convert(lambda x: x)
    assert echo(obj) is obj
    assert tether.Array([obj])[0] is obj
    assert _ffi.tie_state(obj) == ("Active", True)


def test_an_old_object_kept_elsewhere_comes_back_as_its_own_wrapper():
    obj = tt._TestCxxAutoInit(1, c=3)
    keeper = tether.Array([obj])
    old = obj.__chandle__()
    obj.__init__(2, c=4)
    back = keeper[0]
    assert back is not obj
    assert back.__chandle__() == old and back.a == 1
    assert keeper[0] is back  # and that wrapper is canonical from then on


def test_the_old_object_is_released():
    arr = tether.Array([1])
    base = _ffi.use_count(arr)
    obj = tt.TestObjectDerived(v_i64=1, v_f64=0.0, v_str="", v_map=tether.Map({}), v_array=arr)
    assert _ffi.use_count(arr) == base + 1
    obj.__init__(v_i64=2, v_f64=0.0, v_str="", v_map=tether.Map({}), v_array=tether.Array([]))
    assert _ffi.use_count(arr) == base  # the old TestObjectDerived and its field are gone
    assert obj.v_i64 == 2


def test_a_call_holding_the_wrapper_by_reference_refuses_reinit():
    obj = tt._TestCxxAutoInit(1, c=3)
    before = obj.__chandle__()
    seen = []

    def reinit_inside(x):
        with pytest.raises(ValueError, match="running call holds by reference"):
            x.__init__(7, c=8)
        seen.append(x.a)

    tether.convert(reinit_inside)(obj)
    assert seen == [1]
    assert obj.__chandle__() == before and obj.a == 1


def test_a_failing_constructor_leaves_the_wrapper_as_it_was():
    obj = tt._TestCxxAutoInit(1, c=3)
    before = obj.__chandle__()
    with pytest.raises(TypeError):
        obj.__init__("not an int", c=3)
    assert obj.__chandle__() == before and obj.a == 1
    assert tether.Array([obj])[0] is obj
