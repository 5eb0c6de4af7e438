"""Structural equality/hash, JSON, JSON graphs, repr and deep copy through
tether's globals, compared with upstream tvm_ffi (run in a subprocess so
the two runtimes do not share the interpreter's registries)."""

import json
import subprocess
import sys

import pytest

import typing

import tether
import tether.dataclasses as dc
from tether.dataclasses import py_class

g = tether.get_global_func

# Each case: a Python literal of the value, evaluated on both sides.
CASES = [
    "[1, 2.5, 'a\\n\\u00e9', b'x\\x00', None, True, {'k': (1,)}]",
    "{'a': [1, 2, {'b': 'long string here'}], 'c': 1e300, 'd': -0.5}",
    "[[], {}, (), 'x' * 20, 3.0, -7]",
]

PEER_SCRIPT = r"""
import json, sys, tvm_ffi
g = tvm_ffi.get_global_func
out = []
for src in json.loads(sys.argv[1]):
    v = tvm_ffi.convert(eval(src))
    out.append({
        "repr": g("ffi.ReprPrint")(v),
        "graph": g("ffi.ToJSONGraphString")(v, None),
        "hash": g("ffi.StructuralHash")(v, False, False),
    })
print(json.dumps(out))
"""


def peer_outputs(cases):
    pytest.importorskip("tvm_ffi", reason="the upstream peer is needed to compare outputs")
    r = subprocess.run([sys.executable, "-c", PEER_SCRIPT, json.dumps(cases)],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def test_repr_graph_and_hash_agree_with_upstream():
    expected = peer_outputs(CASES)
    for src, exp in zip(CASES, expected):
        v = tether.convert(eval(src))
        assert g("ffi.ReprPrint")(v) == exp["repr"], src
        assert g("ffi.ToJSONGraphString")(v, None) == exp["graph"], src
        assert g("ffi.StructuralHash")(v, False, False) == exp["hash"], src


def test_json_stringify_and_parse_agree_with_upstream():
    pytest.importorskip("tvm_ffi", reason="the upstream peer is needed to compare outputs")
    script = r"""
import sys, tvm_ffi
g = tvm_ffi.get_global_func
v = tvm_ffi.convert([1, 2.0, 'a/"\x01\u00e9', {'x': None, 'y': True}, 1e300, float('nan'), [2, {'a': 3}]])
print(g('ffi.json.Stringify')(v, None))
print(g('ffi.json.Stringify')(v, 2))
for bad in ['', '[1,', '{"a" 1}', '"\\ud800"', '1 2', '"a\x01"']:
    try:
        g('ffi.json.Parse')(bad)
    except ValueError as e:
        print(e)
"""
    peer = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    v = tether.convert([1, 2.0, 'a/"\x01\u00e9', {"x": None, "y": True}, 1e300, float("nan"), [2, {"a": 3}]])
    lines = [g("ffi.json.Stringify")(v, None), g("ffi.json.Stringify")(v, 2)]
    for bad in ["", "[1,", '{"a" 1}', '"\\ud800"', "1 2", '"a\x01"']:
        with pytest.raises(ValueError) as e:
            g("ffi.json.Parse")(bad)
        lines.append(str(e.value))
    assert "\n".join(lines) + "\n" == peer


def test_json_round_trip_values():
    text = '[1, 2.5, 1e2, 9223372036854775808, -0, "\\u00e9\\ud83d\\ude00", {"a": null}]'
    v = g("ffi.json.Parse")(text)
    assert list(v)[:3] == [1, 2.5, 100.0]
    assert list(v)[5] == "\u00e9\U0001f600"
    again = g("ffi.json.Parse")(g("ffi.json.Stringify")(v, None))
    assert g("ffi.StructuralEqual")(v, again, False, False)


@py_class("test.structural.Node")
class Node(dc.Object):
    value: int = 0
    kids: typing.Any = None


def test_py_class_equal_hash_and_mismatch_path():
    a = Node(1, [Node(2, None), Node(3, None)])
    b = Node(1, [Node(2, None), Node(3, None)])
    c = Node(1, [Node(2, None), Node(4, None)])
    assert g("ffi.StructuralEqual")(a, b, False, False)
    assert not g("ffi.StructuralEqual")(a, c, False, False)
    h = g("ffi.StructuralHash")
    assert h(a, False, False) == h(b, False, False) != h(c, False, False)
    lhs, rhs = g("ffi.GetFirstStructuralMismatch")(a, c, False, False)
    assert g("ffi.ReprPrint")(lhs) == "<root>.kids[1].value"
    assert g("ffi.GetFirstStructuralMismatch")(a, b, False, False) is None


def test_py_class_repr_deep_copy_and_graph():
    a = Node(1, [Node(2, None)])
    assert g("ffi.ReprPrint")(a) == "test.structural.Node(value=1, kids=(test.structural.Node(value=2, kids=None),))"
    c = g("ffi.DeepCopy")(a)
    assert c is not a and c.kids is not a.kids
    assert g("ffi.StructuralEqual")(a, c, False, False)
    back = g("ffi.FromJSONGraphString")(g("ffi.ToJSONGraphString")(a, None))
    assert g("ffi.StructuralEqual")(a, back, False, False)


def test_deeply_nested_list_does_not_crash():
    v = None
    for _ in range(100_000):
        v = tether.convert([v]) if v is not None else tether.convert([])
    assert g("ffi.StructuralEqual")(v, g("ffi.DeepCopy")(v), False, False)
    assert isinstance(g("ffi.StructuralHash")(v, False, False), int)


def test_maps_compare_by_key_whatever_their_order():
    # Maps built in one order are matched position by position, others by
    # lookup; both must give the same answers and the same first mismatch.
    items = [(f"k{i}", [i, str(i)]) for i in range(40)] + [(i, i * 2) for i in range(40)]
    a = tether.Map(dict(items))
    same_order = tether.Map(dict(items))
    reversed_order = tether.Map(dict(reversed(items)))
    assert tether.structural_equal(a, same_order)
    assert tether.structural_equal(a, reversed_order)
    assert tether.structural_hash(a) == tether.structural_hash(reversed_order)
    for other in (dict(items), dict(reversed(items))):
        other = dict(other)
        other["k7"] = [7, "x"]
        changed = tether.Map(other)
        assert not tether.structural_equal(a, changed)
        lhs, rhs = tether.get_first_structural_mismatch(a, changed)
        assert str(lhs) == str(rhs) == '<root>["k7"][1]'
    renamed = dict(items)
    renamed["other"] = renamed.pop("k3")
    lhs, rhs = tether.get_first_structural_mismatch(a, tether.Map(renamed))
    assert (str(lhs), str(rhs)) == ('<root>["k3"]', '<root>[<missing:"k3">]')


def test_type_changes_between_calls_are_seen_by_the_next_comparison_and_hash():
    # Type facts are cached across calls until the type table changes: an
    # `__s_equal__`/`__s_hash__` hook registered after the first calls
    # decides the next ones.
    @py_class("testing.structural.LateHook")
    class LateHook(tether.Object):
        v: int

    a, b = LateHook(1), LateHook(1)
    assert tether.structural_equal(a, b)
    before = tether.structural_hash(a)
    assert before == tether.structural_hash(b)
    index = type(a).__tvm_ffi_type_info__.type_index
    tether.core._register_type_attr(index, "__s_equal__", lambda lhs, rhs, cmp: False)
    tether.core._register_type_attr(index, "__s_hash__", lambda obj, init, h: 12345)
    assert not tether.structural_equal(a, b)
    assert tether.structural_hash(a) != before


def test_a_repr_hook_registered_after_printing_is_used_by_the_next_print():
    @py_class("testing.structural.LateRepr")
    class LateRepr(tether.Object):
        v: int

    x = LateRepr(7)
    assert repr(x) == "testing.structural.LateRepr(v=7)"
    index = type(x).__tvm_ffi_type_info__.type_index
    tether.core._register_type_attr(index, "__ffi_repr__", lambda obj, fn_repr: f"<late {obj.v}>")
    assert repr(x) == "<late 7>"
