"""Deep and cyclic values through the core's recursive algorithms from
Python: a List nested 10^6 deep goes through structural equal/hash, repr,
JSON and a walk on the calling thread (a callback sees the caller's context
variables and thread-locals), a List that contains itself goes through every
algorithm and each terminates, and a deep walk whose Python callback runs
while the GIL is held (release_gil off) finishes instead of deadlocking."""

import contextvars
import copy
import gc
import os
import subprocess
import sys
import textwrap
import threading

import pytest

import tether
import tether.serialization as serialization
import tether.structural as structural

DEPTH = 1_000_000


def nested(depth):
    """A List nested ``depth`` deep, built through the core's constructor
    (the Python wrapper's per-call conversions would take much longer)."""
    make = tether.get_global_func("ffi.List")
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        x = make()
        for _ in range(depth):
            x = make(x)
    finally:
        if gc_was_on:
            gc.enable()
    return x


@pytest.fixture(scope="module")
def deep_pair():
    return nested(DEPTH), nested(DEPTH)


def test_deep_list_compares_hashes_and_prints(deep_pair):
    a, b = deep_pair
    assert structural.structural_equal(a, b)
    assert structural.structural_hash(a) == structural.structural_hash(b)
    text = repr(a)
    assert len(text) == 2 * (DEPTH + 1)
    assert text.startswith("[[[") and text.endswith("]]]")


def test_deep_list_goes_through_json_text(deep_pair):
    a, _ = deep_pair
    text = tether.get_global_func("ffi.json.Stringify")(a)
    assert len(text) == 2 * (DEPTH + 1)
    back = tether.get_global_func("ffi.json.Parse")(text)
    assert tether.get_global_func("ffi.json.Stringify")(back) == text


def test_deep_walk_calls_back_on_the_callers_thread_and_context(deep_pair):
    a, _ = deep_pair
    var = contextvars.ContextVar("depth_probe")
    local = threading.local()
    var.set("caller")
    local.mark = "caller"
    me = threading.get_ident()
    seen = {"calls": 0, "foreign": 0}

    def callback(value):
        seen["calls"] += 1
        if threading.get_ident() != me or var.get(None) != "caller" or getattr(local, "mark", None) != "caller":
            seen["foreign"] += 1

    assert structural.structural_walk(a, callback) is None
    assert seen["calls"] == DEPTH + 1
    assert seen["foreign"] == 0


def self_list():
    a = tether.List([1])
    a.append(a)
    return a


def test_cyclic_list_through_structural_equal_hash_and_key():
    a, b = self_list(), self_list()
    # c = [1, [1, c]] unfolds alike but closes its cycle two levels up.
    c = tether.List([1])
    c.append(tether.List([1, c]))
    assert structural.structural_equal(a, a)
    assert structural.structural_equal(a, b)
    assert not structural.structural_equal(a, c)
    assert structural.get_first_structural_mismatch(a, b) is None
    assert structural.get_first_structural_mismatch(a, c) is not None
    assert structural.structural_hash(a) == structural.structural_hash(b)
    assert structural.structural_hash(a) != structural.structural_hash(c)
    assert structural.StructuralKey(a) == structural.StructuralKey(b)
    assert hash(structural.StructuralKey(a)) == hash(structural.StructuralKey(b))
    assert tether.get_global_func("ffi.RecursiveEq")(a, b)


def test_cyclic_list_through_repr_json_graph_copy_and_walks():
    a = self_list()
    assert repr(a) == "[1, ...]"
    with pytest.raises(ValueError, match="ycle"):
        tether.get_global_func("ffi.json.Stringify")(a)
    with pytest.raises(ValueError, match="ycle"):
        serialization.to_json_graph_str(a)
    c = copy.deepcopy(a)
    assert len(c) == 2 and c[0] == 1 and c[1].same_as(c) and not c.same_as(a)
    visited = []
    structural.structural_walk(a, lambda v: visited.append(v))
    assert len(visited) == 3  # the list, its 1, and the back edge (not descended)
    mapped = structural.structural_map(a, lambda v: v)
    assert len(mapped) == 2


def test_deep_walk_with_release_gil_off_finishes():
    # Formerly the continuation thread's callback waited for the GIL that
    # the caller held; now the walk stays on the caller's thread.
    script = textwrap.dedent(
        """
        import tether, tether.structural as s
        make = tether.get_global_func("ffi.List")
        x = make()
        for _ in range(200_000):
            x = make(x)
        walk = tether.get_global_func("ffi.StructuralWalk")
        walk.release_gil = False
        calls = []
        walk(x, tether.Array([tether.Array([-1, lambda v: calls.append(1)])]), tether.Array([]), 1)
        print(len(calls))
        """
    )
    env = dict(os.environ, TVM_FFI_RELEASE_GIL_BY_DEFAULT="0")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "200001"


def test_reflected_objects_cyclic_and_chained_deep():
    from typing import Any

    from tether.dataclasses import py_class

    @py_class("test.deep_and_cyclic.Node", structural_eq="tree")
    class Node(tether.Object):
        val: int
        nxt: Any = None

    a, b, c = Node(1), Node(1), Node(2)
    a.nxt, b.nxt, c.nxt = a, b, c
    assert structural.structural_equal(a, b)
    assert not structural.structural_equal(a, c)
    assert structural.structural_hash(a) == structural.structural_hash(b)
    assert repr(a) == "test.deep_and_cyclic.Node(val=1, nxt=...)"
    for node in (a, b, c):
        node.nxt = None

    # 200,000 links: far past the native stack; building 10^6 Python-side
    # objects alone takes ~20 s, and the Lists above already cover 10^6.
    def chain():
        x = None
        for i in range(200_000):
            x = Node(i, x)
        return x

    x, y = chain(), chain()
    assert structural.structural_equal(x, y)
    assert structural.structural_hash(x) == structural.structural_hash(y)
