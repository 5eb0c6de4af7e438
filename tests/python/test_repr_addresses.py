"""``TVM_FFI_REPR_WITH_ADDR=1``: ``ffi.ReprPrint`` shows object addresses
(read at each call), so shared and cyclic structure can be told apart;
without it the printed form carries none."""

import re

import numpy as np
import pytest

import tether
import tether.testing
from tether._ffi_api import ReprPrint


def _hex(obj) -> str:
    return f"0x{obj.__chandle__():x}"


@pytest.fixture
def with_addr(monkeypatch):
    monkeypatch.setenv("TVM_FFI_REPR_WITH_ADDR", "1")


def test_containers_end_with_their_own_address(with_addr):
    arr, lst, d, m = tether.Array([1, 2]), tether.List([3]), tether.Dict({"k": 1}), tether.Map({"k": 2})
    assert ReprPrint(arr) == f"(1, 2)@{_hex(arr)}"
    assert ReprPrint(lst) == f"[3]@{_hex(lst)}"
    assert ReprPrint(d) == f'{{"k": 1}}@{_hex(d)}'
    assert ReprPrint(m) == f'{{"k": 2}}@{_hex(m)}'


def test_objects_show_the_address_after_the_type_key(with_addr):
    pair = tether.testing.create_object("testing.TestIntPair", a=3, b=4)
    assert ReprPrint(pair) == f"testing.TestIntPair@{_hex(pair)}(a=3, b=4)"
    shared = tether.Array([pair, pair])
    text = ReprPrint(shared)
    assert text.count(f"testing.TestIntPair@{_hex(pair)}(a=3, b=4)") == 2
    assert text.endswith(f")@{_hex(shared)}")


def test_a_back_reference_names_the_object_it_closes_on(with_addr):
    lst = tether.List([1])
    lst.append(lst)
    try:
        assert ReprPrint(lst) == f"[1, ...@{_hex(lst)}]@{_hex(lst)}"
    finally:
        lst.clear()


def test_tensors_show_their_address_after_the_device(with_addr):
    t = tether.from_dlpack(np.zeros((2, 5), dtype="int8"))
    assert ReprPrint(t) == f"int8[2, 5]@cpu:0@{_hex(t)}"


def test_plain_values_and_strings_have_no_address(with_addr):
    assert ReprPrint(tether.Array(["a long enough string", 1.5, None])).startswith('("a long enough string", 1.5, None)@')


@pytest.mark.parametrize("setting", [None, "0", "true", ""])
def test_only_the_value_1_turns_addresses_on(monkeypatch, setting):
    if setting is None:
        monkeypatch.delenv("TVM_FFI_REPR_WITH_ADDR", raising=False)
    else:
        monkeypatch.setenv("TVM_FFI_REPR_WITH_ADDR", setting)
    pair = tether.testing.create_object("testing.TestIntPair", a=1, b=2)
    text = ReprPrint(tether.List([pair]))
    assert text == "[testing.TestIntPair(a=1, b=2)]"
    assert not re.search(r"0x[0-9a-f]+", text)
