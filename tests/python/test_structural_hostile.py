"""Structural walk, visit, map and mutate on hostile input: chains 10^6
deep go through on the caller's thread in memory linear in the depth (the
peak resident size is measured in a fresh interpreter), self-cycles and
long cycles terminate with every node met once per path, callbacks that
own their descent and nest past the thread's stack get a clear error
instead of a crash, an error raised at the bottom of a deep chain comes
back whole, and threads walking and mapping one shared value all finish
with their own answers."""

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest

import tether
import tether.structural as structural
from tether.dataclasses import py_class
from thread_failures import run_threads

make_list = tether.get_global_func("ffi.List")


def chain(depth, leaf=0):
    """[[...[leaf]...]] nested `depth` Lists deep, built natively."""
    x = make_list(leaf)
    for _ in range(depth - 1):
        x = make_list(x)
    return x


def bottom(x):
    """The innermost element of a chain, and the chain's depth."""
    depth = 0
    while isinstance(x, tether.List):
        x, depth = x[0], depth + 1
    return x, depth


def run_fresh(script, timeout=600):
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                         timeout=timeout)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


MILLION_DEEP = """
    import gc, json, resource
    import tether, tether.structural as s
    make = tether.get_global_func("ffi.List")
    gc.disable()
    DEPTH = 1_000_000
    x = make(7)
    for _ in range(DEPTH - 1):
        x = make(x)
    peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    built = peak()
    out = {}
    calls = [0]
    def count(v):
        calls[0] += 1
    s.structural_walk(x, count)
    out["walk_calls"] = calls[0]
    out["walk_growth"] = peak() - built
    same = s.structural_map(x, lambda v: v)
    out["map_identity_same"] = same.same_as(x)
    seven = [0]
    def eight(v):
        seven[0] += 1
        return 8
    y = s.structural_map(x, [(int, eight)])
    out["map_changed_calls"] = seven[0]
    out["map_changed_is_copy"] = not y.same_as(x)
    depth, leaf = 0, y
    while isinstance(leaf, tether.List):
        leaf, depth = leaf[0], depth + 1
    out["map_depth"], out["map_leaf"] = depth, leaf
    m = s.structural_mutate(x, [])
    out["mutate_unchanged"] = m.same_as(x)
    out["total_growth"] = peak() - built
    print(json.dumps(out))
"""


def test_million_deep_chains_walk_map_and_mutate_in_linear_memory():
    DEPTH = 1_000_000
    r = run_fresh(MILLION_DEEP)
    assert r["walk_calls"] == DEPTH + 1  # every List and the leaf
    assert r["map_identity_same"] is True
    assert r["map_changed_calls"] == 1 and r["map_changed_is_copy"] is True
    assert (r["map_depth"], r["map_leaf"]) == (DEPTH, 8)
    assert r["mutate_unchanged"] is True
    # The walk's work stack is a few hundred bytes a level (the chain
    # itself and the mapped copy dominate the total); a quadratic or
    # unbounded cost would be orders of magnitude past these.
    assert r["walk_growth"] < 1024 * DEPTH, r
    assert r["total_growth"] < 2048 * DEPTH, r


DESCENT_OWNING_CALLBACKS = """
    import json, sys
    import tether, tether.structural as s
    sys.setrecursionlimit(10**7)   # Python would stop first otherwise
    make = tether.get_global_func("ffi.List")
    x = make()
    for _ in range(200_000):
        x = make(x)
    out = {}
    def visit(v, visitor):
        return visitor.default_visit(v)
    def mutate(v, m):
        return m.default_mutate(v)
    for name, run in (("visit", lambda: s.structural_visit(x, [(tether.List, visit)])),
                      ("mutate", lambda: s.structural_mutate(x, [(tether.List, mutate)]))):
        try:
            run()
            out[name] = ["ok"]
        except Exception as e:
            out[name] = [type(e).__name__, str(e)]
    # The thread is usable afterwards: a shallow visit still works.
    out["after"] = s.structural_visit(make(make()), [(tether.List, visit)]) is None
    print(json.dumps(out))
"""


def test_callbacks_owning_their_descent_past_the_stack_get_an_error_not_a_crash():
    r = run_fresh(DESCENT_OWNING_CALLBACKS)
    tail = ("hooks or callbacks that call back into the traversal nest too deeply for the thread's stack "
            "(values the core descends into itself may nest without limit)")
    assert r["visit"] == ["RuntimeError", "structural visit: " + tail]
    assert r["mutate"] == ["RuntimeError", "structural mutate: " + tail]
    assert r["after"] is True


def test_an_error_at_the_bottom_of_a_deep_chain_comes_back_whole():
    x = chain(100_000, leaf="bottom")

    def fail(v):
        if v == "bottom":
            raise ValueError("refused at the bottom")

    with pytest.raises(ValueError, match="^refused at the bottom$"):
        structural.structural_walk(x, fail)
    with pytest.raises(ValueError, match="^refused at the bottom$"):
        structural.structural_map(x, [(str, fail)])


def list_cycle(length):
    """a0 -> a1 -> ... -> a(length-1) -> a0, each a List [i, next]."""
    first = tether.List([0])
    last = first
    for i in range(1, length):
        nxt = tether.List([i])
        last.append(nxt)
        last = nxt
    last.append(first)
    return first


@pytest.mark.parametrize("length", [1, 1000, 100_000])
def test_cycles_terminate_in_every_traversal(length):
    root = list_cycle(length)
    try:
        lists, ints = [], []
        structural.structural_walk(root, [(tether.List, lambda v: lists.append(v)), (int, lambda v: ints.append(v))])
        # Each List once on the path, then the back edge to the root (not
        # descended into again).
        assert len(lists) == length + 1 and lists[-1].same_as(root)
        assert sorted(ints) == list(range(length))
        visited = []
        structural.structural_visit(root, [(int, lambda v, visitor: visited.append(v))])
        assert sorted(visited) == list(range(length))
        assert structural.structural_map(root, lambda v: v).same_as(root)
        # A change below the cycle copies the path down to it; the copy's
        # back edge points at the original node where the cycle closed.
        mapped = structural.structural_map(root, [(int, lambda v: v + 1 if v == length - 1 else v)])
        assert not mapped.same_as(root) and mapped[0] == (1 if length == 1 else 0)
        node = mapped
        for _ in range(length - 1):
            node = node[1]
        assert node[0] == length and node[1].same_as(root)
        assert structural.structural_mutate(root, []).same_as(root)
    finally:
        node = root  # break the cycle so the Lists are freed
        for _ in range(length):
            nxt = node[1]
            node.pop()
            node = nxt


@py_class("test.structural_hostile.Link", structural_eq="tree")
class Link(tether.Object):
    val: int
    nxt: Any = None


def test_reflected_self_cycle_and_long_cycle_terminate():
    a = Link(1)
    a.nxt = a
    n = 50_000
    head = Link(0)
    tail = head
    for i in range(1, n):
        tail.nxt = Link(i)
        tail = tail.nxt
    tail.nxt = head
    try:
        seen = []
        structural.structural_walk(a, [(Link, lambda v: seen.append(v))])
        assert len(seen) == 2 and seen[0].same_as(a) and seen[1].same_as(a)
        vals = []
        structural.structural_walk(head, [(int, lambda v: vals.append(v))])
        assert vals == list(range(n))
        assert structural.structural_map(head, lambda v: v).same_as(head)
        bumped = structural.structural_map(a, [(int, lambda v: v + 1)])
        assert bumped.val == 2 and bumped.nxt.same_as(a)
    finally:
        a.nxt = None
        tail.nxt = None


def test_threads_walk_and_map_one_shared_deep_value():
    x = chain(100_000, leaf=3)

    def walker():
        n = [0]
        structural.structural_walk(x, lambda v: n.__setitem__(0, n[0] + 1))
        return n[0]

    def mapper():
        y = structural.structural_map(x, [(int, lambda v: v * 2)])
        return bottom(y)

    results = run_threads([walker, mapper] * 3)
    assert results == [100_001, (6, 100_000)] * 3
    assert bottom(x) == (3, 100_000)  # the shared input is left as it was


@pytest.mark.parametrize("value", [2**31, 2**62, 2**63 - 1, -(2**63), 2**64 - 1])
def test_walk_and_map_carry_integers_at_the_64_bit_edges(value):
    # Beyond 64 bits the value is an ffi.BigInt, not an `int` of the FFI's
    # type table, so the callbacks match every value.
    root = tether.List([value, tether.List([value])])
    seen = []
    structural.structural_walk(root, lambda v: seen.append(v))
    assert [v for v in seen if isinstance(v, int)] == [value, value]
    mapped = structural.structural_map(root, lambda v: v + 0 if isinstance(v, int) else v)
    assert mapped[0] == value and mapped[1][0] == value
    assert structural.structural_equal(mapped, root)


find_access_paths = tether.get_global_func("ffi.VisitErrorContext.FindAccessPaths")
make_object = tether.get_global_func("ffi.MakeObjectFromPackedArgs")


def error_context(*pattern):
    """A visit error context whose pattern lists `pattern`, innermost first."""
    return make_object("ffi.VisitErrorContext", "reverse_visit_pattern", tether.List(list(pattern)),
                       "prev_error_context", None)


def test_access_paths_of_an_error_context_in_deep_and_cyclic_objects():
    n = 100_000
    root = Link(0)
    node = root
    for i in range(1, n):
        node.nxt = Link(i)
        node = node.nxt
    bottom = node
    paths = find_access_paths(root, error_context(bottom, root), False)
    assert len(paths) == 1
    assert str(paths[0]) == "<root>" + ".nxt" * (n - 1)
    # A node the pattern names but the graph does not reach: with prefix
    # matching, the descent that matched the root ends at the bottom.
    stray = Link(-1)
    assert [str(p) for p in find_access_paths(root, error_context(stray, root), False)] == []
    prefix = find_access_paths(root, error_context(stray, root), True)
    assert [str(p) for p in prefix] == ["<root>" + ".nxt" * (n - 1)]
    # A cycle: the search ends instead of going round it.
    bottom.nxt = root
    try:
        assert [str(p) for p in find_access_paths(root, error_context(stray, root), False)] == []
        assert len(find_access_paths(root, error_context(bottom, root), False)) == 1
    finally:
        bottom.nxt = None


def test_deep_map_and_visit_call_back_on_the_callers_thread_and_context():
    import contextvars
    import threading

    var = contextvars.ContextVar("map_probe")
    var.set("caller")
    me = threading.get_ident()
    foreign = []

    def check(v, *rest):
        if threading.get_ident() != me or var.get(None) != "caller":
            foreign.append(v)
        return v if not rest else None

    x = chain(100_000, leaf=1)
    assert structural.structural_map(x, [(int, check)]).same_as(x)
    assert structural.structural_visit(x, [(int, check)]) is None
    assert structural.structural_mutate(x, [(int, lambda v, m: check(v))]).same_as(x)
    assert foreign == []


def test_a_callback_emptying_the_list_being_mapped_does_not_pull_children_away():
    lst = tether.List([tether.Array([1]), tether.Array([2]), tether.Array([3])])

    def bump(v):
        if v == 1:
            lst.clear()  # the map is still reading lst's children
        return v + 10

    mapped = structural.structural_map(lst, [(int, bump)])
    assert len(lst) == 0
    assert [list(a) for a in mapped] == [[11], [12], [13]]
    d = tether.Dict({"a": tether.Array([1]), "b": tether.Array([2])})

    def bump_and_clear(v):
        d.clear()
        return v + 10

    mapped = structural.structural_map(d, [(int, bump_and_clear)])
    assert len(d) == 0 and {k: list(v) for k, v in mapped.items()} == {"a": [11], "b": [12]}
