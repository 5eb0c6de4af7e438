"""JSON graph loading on hostile input from Python: malformed graphs are
refused with the exact error type and a message naming the node and field
(wrong node shapes and kinds, dangling and out-of-range indices, None and
wrongly typed data, self-references and cycles); integers and sizes at
2^31, 2^62 and 2^64-1 load as integers or are refused, never as floats; a
py_class field annotated with a class takes only instances of it (None only
where Optional); a chain 10^6 nodes deep loads in memory linear in its size
(peak resident size measured in a fresh interpreter)."""

import json
import subprocess
import sys
import textwrap
from typing import Optional

import pytest

import tether
import tether.serialization as serialization
from conftest import BaseHolder, Holder, Inner, Leaf
from tether.dataclasses import py_class


def load(graph):
    text = graph if isinstance(graph, str) else json.dumps(graph)
    return serialization.from_json_graph_str(text)


def graph(root, *nodes):
    return {"root_index": root, "nodes": list(nodes)}


INT = {"type": "int", "data": 1}
PREFIX = "Invalid JSON Object Graph: "

MALFORMED = [
    (graph(0, 5), "node 0 must be an object with `type` and `data`, got an integer"),
    (graph(0, [1]), "node 0 must be an object with `type` and `data`, got an array"),
    (graph(0, {"data": 1}), "node 0: field `type` is missing"),
    (graph(0, {"type": None, "data": 1}), "node 0: field `type` must be a string, got None"),
    (graph(0, {"type": "int"}), "node 0 (`int`): field `data` is missing"),
    (graph(0, {"type": "int", "data": None}), "node 0 (`int`): field `data` is None"),
    (graph(0, {"type": "int", "data": "1"}), "node 0 (`int`): field `data` must be an integer, got a string"),
    (graph(0, {"type": "float", "data": [1.0]}), "node 0 (`float`): field `data` must be a number, got an array"),
    (graph(0, {"type": "ffi.Bytes", "data": 3}), "node 0 (`ffi.Bytes`): field `data` must be a string, got an integer"),
    (graph(0, {"type": "ffi.List", "data": None}), "node 0 (`ffi.List`): field `data` is None"),
    (graph(0, {"type": "ffi.List", "data": [0]}), "node 0 (`ffi.List`): field `data[0]` refers to the node itself"),
    (graph(1, INT, {"type": "ffi.Array", "data": [0, 9]}),
     "node 1 (`ffi.Array`): field `data[1]` refers to node 9, which does not exist (the graph has 2 nodes)"),
    (graph(1, INT, {"type": "ffi.Array", "data": [-1]}),
     "node 1 (`ffi.Array`): field `data[0]` refers to node -1, which does not exist (the graph has 2 nodes)"),
    (graph(1, INT, {"type": "ffi.Array", "data": [None]}), "node 1 (`ffi.Array`): field `data[0]` must be an integer, got None"),
    (graph(1, INT, {"type": "ffi.Array", "data": [0.0]}), "node 1 (`ffi.Array`): field `data[0]` must be an integer, got a float"),
    (graph(1, INT, {"type": "ffi.Map", "data": [0]}),
     "node 1 (`ffi.Map`): Map/Dict data must contain an even number of [key, value] entries, got 1"),
    (graph(0, {"type": "ffi.Array", "data": [1]}, {"type": "ffi.Dict", "data": [2, 0]}, INT),
     "node 1 (`ffi.Dict`): field `data[1]` refers to node 0, which contains this node (a cycle)"),
    (graph(0, {"type": "Device", "data": [1]}), "node 0 (`Device`): Device data must be an array of [device_type, device_id], got 1 element(s)"),
    (graph(0, {"type": "tests.Inner", "data": [1]}), "node 0 (`tests.Inner`): field `data` must be an object of fields, got an array"),
    (graph(0, {"type": "tests.Inner", "data": {"v": "seven"}}),
     "node 0 (`tests.Inner`): field `data.v` must be an integer within 64 bits, got a string"),
    (graph(1, INT, {"type": "tests.Holder", "data": {"x": None}}),
     "node 1 (`tests.Holder`): field `data.x` must be a node index, got None"),
    (graph(1, INT, {"type": "tests.Holder", "data": {"x": 5}}),
     "node 1 (`tests.Holder`): field `data.x` refers to node 5, which does not exist (the graph has 2 nodes)"),
    (graph(0, {"type": "tests.Holder", "data": {"x": 0}}), "node 0 (`tests.Holder`): field `data.x` refers to the node itself"),
]


@pytest.mark.parametrize("bad, message", MALFORMED, ids=[m for _, m in MALFORMED])
def test_malformed_graphs_are_refused_naming_node_and_field(bad, message):
    with pytest.raises(ValueError) as info:
        load(bad)
    assert str(info.value) == PREFIX + message


def test_graph_level_errors_keep_their_messages():
    for text, message in [
        ("[]", "Invalid JSON Object Graph, expected an object"),
        ('{"nodes": []}', "Invalid JSON Object Graph, expected `root_index` integer field"),
        ('{"root_index": 0}', "Invalid JSON Object Graph, expected `nodes` array field"),
        ('{"root_index": 18446744073709551615, "nodes": []}', "Invalid JSON Object Graph, expected `root_index` integer field"),
        ('{"root_index": 1, "nodes": [{"type": "None"}]}', "Invalid JSON Object Graph: invalid node index 1"),
    ]:
        with pytest.raises(ValueError) as info:
            load(text)
        assert str(info.value) == message
    with pytest.raises(RuntimeError, match=r"^Check failed: \(it != type_key2index_.end\(\)\) is false: Cannot find type `x.Y`$"):
        load(graph(0, {"type": "x.Y", "data": 1}))


@pytest.mark.parametrize("value", [2**31, 2**62, 2**63 - 1, -(2**63), 2**64 - 1, -(2**64), 2**200])
def test_integers_at_and_past_64_bits_load_as_integers(value):
    back = load(graph(0, {"type": "int", "data": value}))
    assert type(back) is int and back == value
    assert load(serialization.to_json_graph_str(tether.List([value, value]))) == [value, value]


def test_sizes_at_the_64_bit_edges():
    dims = [2**31, 2**62, 2**63 - 1]
    shape = load(graph(0, {"type": "ffi.Shape", "data": dims}))
    assert list(shape) == dims
    with pytest.raises(ValueError) as info:
        load(graph(0, {"type": "ffi.Shape", "data": [2**64 - 1]}))
    assert str(info.value) == PREFIX + "node 0 (`ffi.Shape`): field `data[0]` must be an integer, got an integer beyond 64 bits"
    with pytest.raises(ValueError) as info:
        load(graph(0, {"type": "Device", "data": [1, 2**31]}))
    assert str(info.value) == PREFIX + "node 0 (`Device`): field `data[1]` 2147483648 is out of the 32-bit range"
    with pytest.raises(ValueError) as info:
        load(graph(0, {"type": "tests.Inner", "data": {"v": 2**64 - 1}}))
    assert str(info.value) == PREFIX + "node 0 (`tests.Inner`): field `data.v` must be an integer within 64 bits, got an integer beyond 64 bits"
    assert load(graph(0, {"type": "tests.Inner", "data": {"v": 2**62}})).v == 2**62


@py_class("test.json_graph_hostile.MaybeInner")
class MaybeInner(tether.Object):
    x: Optional[Inner] = None


def holder_graph(cls_key, x_node):
    """A graph whose root is a `cls_key` with field x naming node 0."""
    return graph(2, x_node, {"type": "None"}, {"type": cls_key, "data": {"x": 0, "anything": 1}})


def test_class_typed_fields_take_only_instances_of_their_class():
    ok = load(holder_graph("tests.Holder", {"type": "tests.Inner", "data": {"v": 3}}))
    assert isinstance(ok, Holder) and ok.x.v == 3
    for node, got in [({"type": "tests.Base", "data": {"a": 1}}, "tests.Base"), ({"type": "None"}, "None"),
                      ({"type": "int", "data": 5}, "int"), ({"type": "ffi.String", "data": "s"}, "str")]:
        with pytest.raises(TypeError) as info:
            load(holder_graph("tests.Holder", node))
        assert str(info.value) == PREFIX + f"node 2 (`tests.Holder`): field `data.x`: expected tests.Inner, got {got}"
    # Optional[Inner] also takes None, and still no other class.
    assert load(graph(1, {"type": "None"}, {"type": "test.json_graph_hostile.MaybeInner", "data": {"x": 0}})).x is None
    with pytest.raises(TypeError) as info:
        load(graph(1, {"type": "tests.Base", "data": {"a": 1}}, {"type": "test.json_graph_hostile.MaybeInner", "data": {"x": 0}}))
    assert str(info.value) == PREFIX + "node 1 (`test.json_graph_hostile.MaybeInner`): field `data.x`: expected tests.Inner, got tests.Base"
    # A subclass instance is an instance of the declared class.
    back = load(serialization.to_json_graph_str(BaseHolder(Leaf(1, 2, 3))))
    assert isinstance(back.item, Leaf) and (back.item.a, back.item.b, back.item.c) == (1, 2, 3)


MILLION_DEEP_GRAPH = """
    import json, resource
    import tether.serialization as s
    DEPTH = 1_000_000
    parts = ['{"root_index": %d, "nodes": [{"type": "int", "data": 5}' % DEPTH]
    parts += [', {"type": "ffi.List", "data": [%d]}' % i for i in range(DEPTH)]
    parts.append("]}")
    text = "".join(parts)
    del parts
    peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    before = peak()
    v = s.from_json_graph_str(text)
    grown = peak() - before
    depth = 0
    while not isinstance(v, int):
        v, depth = v[0], depth + 1
    cyclic = text.replace('{"type": "ffi.List", "data": [0]}', '{"type": "ffi.List", "data": [%d]}' % DEPTH, 1)
    try:
        s.from_json_graph_str(cyclic)
        error = None
    except ValueError as e:
        error = str(e)
    print(json.dumps({"depth": depth, "leaf": v, "grown": grown, "bytes": len(text), "error": error}))
"""


def test_a_million_deep_graph_loads_in_linear_memory_and_its_cycle_is_named():
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(MILLION_DEEP_GRAPH)], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert (r["depth"], r["leaf"]) == (1_000_000, 5)
    assert r["error"] == PREFIX + ("node 1 (`ffi.List`): field `data[0]` refers to node 1000000, "
                                   "which contains this node (a cycle)")
    # Parsed JSON nodes, the decoded Lists and the work stack: a few
    # hundred bytes a node; quadratic or unbounded growth would be far past.
    assert r["grown"] < 4096 * 1_000_000, r


@pytest.mark.parametrize("key", ["ffi.Function", "ffi.Tensor", "ffi.Module", "ffi.Object", "ffi.Error"])
def test_node_kinds_that_cannot_be_loaded_are_refused_by_node(key):
    with pytest.raises(TypeError) as info:
        load(graph(1, INT, {"type": key, "data": {}}))
    assert str(info.value) == f"Type `{key}` does not support FromJSONGraph (no __ffi_new__ type attr; node 1)"
    with pytest.raises(ValueError) as info:
        load(graph(0, {"type": "ffi.SmallStr", "data": "s"}))
    assert str(info.value) == PREFIX + "node 0 (`ffi.SmallStr`): values of this type cannot be loaded from a graph"


def test_a_required_field_missing_names_the_node():
    with pytest.raises(TypeError) as info:
        load(graph(1, INT, {"type": "tests.Holder", "data": {"anything": 0}}))
    assert str(info.value) == "Required field `x` not set in type `tests.Holder` (node 1)"
