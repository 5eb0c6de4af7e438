"""Bulk operations: whole-container and whole-graph work per call.

Where `workloads.operations` times per-access costs (an attribute, a call),
these time surfaces that walk or copy a whole value: structural hashing and
equality, the JSON graph, converting Python containers, DLPack exchange,
repr and large strings. Each runs at a base size and at ten times that size
(the `x10` rows), so the table shows how the cost grows. The same Python
code builds the values on both libraries; only the module differs.
"""

from __future__ import annotations

import typing
from typing import Callable, Dict

Runner = Callable[[int], None]

# Base sizes; the `x10` rows use ten times these.
MAP_LEN = 1_000
INT_ARRAY_LEN = 10_000
TREE_NODES = 1_000
CONVERT_LEN = 10_000
TENSOR_LEN = 1_000
STR_LEN = 1_000
BYTES_LEN = 1_000_000
REPR_CHAIN = 1


def tree_class(lib) -> type:
    """A py_class binary tree node: an int and two object children."""
    ns = {"__annotations__": {"value": int, "left": typing.Any, "right": typing.Any}, "left": None, "right": None}
    return lib.py_class(f"bench.{lib.name}.Tree")(type("Tree", (lib.base,), ns))


def typed_tree_class(lib) -> type:
    """The same tree with typed children (``Optional[Object]``), as users
    declare them: each write goes through the field's type check."""
    ns = {"__annotations__": {"value": int, "left": typing.Optional[lib.mod.Object],
                              "right": typing.Optional[lib.mod.Object]}, "left": None, "right": None}
    return lib.py_class(f"bench.{lib.name}.TypedTree")(type("TypedTree", (lib.base,), ns))


def repr_node_class(lib) -> type:
    """The chain node of `workloads` (an int and an object field), under a
    key of its own."""
    ns = {"__annotations__": {"v": int, "x": typing.Any}, "v": 0, "x": None}
    return lib.py_class(f"bench.{lib.name}.ReprNode")(type("ReprNode", (lib.base,), ns))


def build_tree(cls: type, count: int):
    """A balanced tree of `count` nodes, values numbered in pre-order; built
    level by level (no recursion, so any count works)."""
    nodes = [cls(i) for i in range(count)]
    for i, node in enumerate(nodes):
        left, right = 2 * i + 1, 2 * i + 2
        if left < count:
            node.left = nodes[left]
        if right < count:
            node.right = nodes[right]
    return nodes[0]


def _sizes(base: int):
    return (("", base), ("_x10", base * 10))


def operations(lib, loop) -> Dict[str, Runner]:
    """Every bulk operation for `lib`, by name; `loop(expr, env)` compiles
    the timing loop."""
    mod = lib.mod
    ops: Dict[str, Runner] = {}
    Tree = tree_class(lib)
    TypedTree = typed_tree_class(lib)
    Node = repr_node_class(lib)
    shash, sequal = mod.structural_hash, mod.structural_equal
    ser = mod.serialization

    for suffix, n in _sizes(MAP_LEN):
        m = mod.Map({f"key{i}": i for i in range(n)})
        m2 = mod.Map({f"key{i}": i for i in range(n)})
        ops[f"shash.map{suffix}"] = loop("h(m)", {"h": shash, "m": m})
        ops[f"sequal.map{suffix}"] = loop("eq(a, b)", {"eq": sequal, "a": m, "b": m2})
    for suffix, n in _sizes(INT_ARRAY_LEN):
        ops[f"shash.int_array{suffix}"] = loop("h(a)", {"h": shash, "a": mod.Array(list(range(n)))})
    for suffix, n in _sizes(TREE_NODES):
        tree, tree2 = build_tree(Tree, n), build_tree(Tree, n)
        ops[f"shash.tree{suffix}"] = loop("h(t)", {"h": shash, "t": tree})
        ops[f"sequal.tree{suffix}"] = loop("eq(a, b)", {"eq": sequal, "a": tree, "b": tree2})
        text = ser.to_json_graph_str(tree)
        ops[f"json.save_tree{suffix}"] = loop("save(t)", {"save": ser.to_json_graph_str, "t": tree})
        ops[f"json.load_tree{suffix}"] = loop("load(s)", {"load": ser.from_json_graph_str, "s": text})
        typed_text = ser.to_json_graph_str(build_tree(TypedTree, n))
        ops[f"json.load_typed_tree{suffix}"] = loop("load(s)", {"load": ser.from_json_graph_str, "s": typed_text})
        maps = mod.Array([mod.Map({"a": mod.Array([i, 2, 3]), "b": mod.Array([4.0, 5.0])}) for i in range(n)])
        maps_text = ser.to_json_graph_str(maps)
        ops[f"json.load_maps{suffix}"] = loop("load(s)", {"load": ser.from_json_graph_str, "s": maps_text})
    for suffix, n in _sizes(CONVERT_LEN):
        d = {f"key{i}": i for i in range(n)}
        ops[f"convert.map_dict{suffix}"] = loop("Map(d)", {"Map": mod.Map, "d": d})
        ops[f"convert.array_list{suffix}"] = loop("Array(l)", {"Array": mod.Array, "l": list(range(n))})
    try:
        import numpy

        for suffix, n in _sizes(TENSOR_LEN):
            arr = numpy.zeros(n, dtype="float32")
            ops[f"dlpack.from_numpy{suffix}"] = loop("f(a)", {"f": mod.from_dlpack, "a": arr})
            ops[f"dlpack.to_numpy{suffix}"] = loop("f(t)", {"f": numpy.from_dlpack, "t": mod.from_dlpack(arr)})
    except ImportError:  # NumPy is optional for the benchmark
        pass
    for suffix, n in _sizes(REPR_CHAIN):
        root = node = Node(0, None)
        for i in range(1, n):
            node.x = Node(i, None)
            node = node.x
        ops[f"repr.node{suffix}"] = loop("repr(o)", {"o": root})
    echo = mod.get_global_func("testing.echo")
    for suffix, n in _sizes(STR_LEN):
        ops[f"echo.str{suffix}"] = loop("echo(s)", {"echo": echo, "s": "x" * n})
    for suffix, n in _sizes(BYTES_LEN):
        ops[f"echo.bytes{suffix}"] = loop("echo(b)", {"echo": echo, "b": b"x" * n})
    return ops


def floors(loop) -> Dict[str, Runner]:
    """The nearest plain-CPython costs: hashing/comparing/copying the same
    Python values."""
    out: Dict[str, Runner] = {}
    for suffix, n in _sizes(MAP_LEN):
        d, d2 = {f"key{i}": i for i in range(n)}, {f"key{i}": i for i in range(n)}
        out[f"shash.map{suffix}"] = loop("hash(frozenset(d.items()))", {"d": d})
        out[f"sequal.map{suffix}"] = loop("a == b", {"a": d, "b": d2})
    for suffix, n in _sizes(INT_ARRAY_LEN):
        out[f"shash.int_array{suffix}"] = loop("hash(t)", {"t": tuple(range(n))})
    for suffix, n in _sizes(CONVERT_LEN):
        d = {f"key{i}": i for i in range(n)}
        out[f"convert.map_dict{suffix}"] = loop("dict(d)", {"d": d})
        out[f"convert.array_list{suffix}"] = loop("list(l)", {"l": list(range(n))})
    for suffix, n in _sizes(STR_LEN):
        out[f"echo.str{suffix}"] = loop("f(s)", {"f": str, "s": "x" * n})
    for suffix, n in _sizes(BYTES_LEN):
        out[f"echo.bytes{suffix}"] = loop("f(b)", {"f": bytes, "b": b"x" * n})
    return out
