"""tether.structural and tether.access_path as tvm_ffi's: the same snippets
run against both runtimes (parity.py), then what only tether promises (one
wrapper per object through these paths)."""

import gc

import pytest

import tether
from parity import assert_same_records

SCENARIOS = r'''
from typing import Any
S = tvm_ffi.structural
AP = tvm_ffi.access_path.AccessPath
eq, h, mm = tvm_ffi.structural_equal, tvm_ffi.structural_hash, tvm_ffi.get_first_structural_mismatch

# equality, hashing, options
run("eq lists", lambda: [eq([1, 2, 3], [1, 2, 3]), eq([1, 2, 3], [1, 2, 4]), eq([1], [1.0])])
run("eq dicts", lambda: [eq({"a": 1, "b": [2]}, {"b": [2], "a": 1}), eq({"a": 1}, {"a": 2})])
run("eq options", lambda: [eq([1], [1], True, True), eq("x", "x", map_free_vars=True, skip_tensor_content=True)])
run("hash values", lambda: [h(v) for v in ([1, 2, 3], "abc", 5, -1, None, {"k": [1.5]}, (1, (2,)))])
run("hash unsigned", lambda: all(0 <= h(v) < 2**64 for v in range(-50, 50)))
run("hash options", lambda: [h([1], True), h([1], skip_tensor_content=True)])
run("hash consistent", lambda: h([1, [2]]) == h(tvm_ffi.convert([1, [2]])))

# first mismatch and access paths
run("mismatch none", lambda: mm([1, 2], [1, 2]))
run("mismatch item", lambda: [str(p) for p in mm([1, [2, 3]], [1, [2, 4]])])
run("mismatch length", lambda: [str(p) for p in mm([1, 2, 3], [1, 2])])
run("mismatch map key", lambda: [str(p) for p in mm({"a": 1, "b": 2}, {"a": 1, "c": 2})])
run("mismatch map value", lambda: [str(p) for p in mm({"a": [1]}, {"a": [2]})])
run("mismatch type", lambda: [repr(p) for p in mm([1], ["1"])])
run("mismatch kinds", lambda: [type(p).__name__ for p in mm([1], [2])])
p = AP.root().attr("a").array_item(2).map_item("k").attr_missing("z")
run("path str", lambda: [str(p), repr(p)])
run("path missing", lambda: [str(AP.root().array_item_missing(3)), str(AP.root().map_item_missing(1))])
run("path steps", lambda: [(int(s.kind), s.key) for s in p.to_steps()])
run("path step repr", lambda: [repr(s) for s in p.to_steps()])
run("path fields", lambda: [p.depth, str(p.parent), repr(p.step), AP.root().parent, AP.root().depth])
run("path equality", lambda: [p == AP.root().attr("a").array_item(2).map_item("k").attr_missing("z"),
                               p != p, p == 1, p != 1, hash(p) == hash(p)])
run("path prefix", lambda: [AP.root().attr("a").is_prefix_of(p), p.is_prefix_of(AP.root().attr("a")),
                            AP.root().is_prefix_of(AP.root())])
run("path ctor", lambda: AP())
run("step ctor", lambda: tvm_ffi.access_path.AccessStep())
run("access kinds", lambda: [(k.name, int(k)) for k in tvm_ffi.access_path.AccessKind])

# StructuralKey
k0, k1, k2 = tvm_ffi.StructuralKey([1, 2, 3]), tvm_ffi.StructuralKey([1, 2, 3]), tvm_ffi.StructuralKey([1, 2, 4])
run("key dict", lambda: [{k0: "a", k2: "b"}[k1], len({k0: 1, k1: 2, k2: 3})])
run("key eq", lambda: [k0 == k1, k0 == k2, k0 != k1, k0 != k2, k0 == [1, 2, 3], k0 != 3])
run("key hash", lambda: [hash(k0) == h([1, 2, 3]), k0.hash_i64 & (2**64 - 1) == hash(k0)])
run("key fields", lambda: [repr(k0.key), repr(k0)])
run("key map", lambda: (lambda m: [len(m), m[k0]])(tvm_ffi.Map({k0: 1, k1: 2})))

# enums
run("enums", lambda: [[(e.name, int(e)) for e in E] for E in
                      (S.WalkOrder, S.WalkResult, S.InplaceMode, S.DefRegionKind)])
run("top-level names", lambda: [tvm_ffi.WalkOrder is S.WalkOrder, tvm_ffi.VisitInterrupt is S.VisitInterrupt,
                                tvm_ffi.StructuralKey is S.StructuralKey, tvm_ffi.structural_walk is S.structural_walk])

# walk
tree = [1, [2, "s", 2.5], {"k": [3]}, None]
def walked(callbacks=(), kinds=(), order="post"):
    seen = []
    def rec(tag):
        def cb(v, *k):
            seen.append([tag, show(v)] + [f"{type(x).__name__}.{x.name}" for x in k])
        return cb
    cbs = callbacks(rec) if callable(callbacks) else callbacks
    ks = kinds(rec) if callable(kinds) else kinds
    r = tvm_ffi.structural_walk(tree, cbs, ks, order=order)
    return [repr(r)] + seen
run("walk catch-all", lambda: walked(lambda rec: rec("any")))
run("walk pre", lambda: walked(lambda rec: rec("any"), order="pre"))
run("walk enum order", lambda: walked(lambda rec: rec("any"), order=S.WalkOrder.PREORDER))
run("walk typed", lambda: walked(lambda rec: (int, rec("int"))))
run("walk grouped", lambda: walked(lambda rec: ((int, str), rec("int|str"))))
run("walk list of entries", lambda: walked(lambda rec: [(float, rec("float")), (int, rec("int")), (object, rec("obj"))]))
run("walk Any", lambda: walked(lambda rec: [(Any, rec("any"))]))
run("walk class", lambda: walked(lambda rec: [(tvm_ffi.Array, rec("array")), (tvm_ffi.Map, rec("map"))]))
run("walk region kinds", lambda: walked((), lambda rec: rec("k")))
run("walk skip", lambda: walked(lambda rec: lambda v: S.WalkResult.SKIP if isinstance(v, tvm_ffi.Array) else rec("x")(v), order="pre"))
run("walk interrupt", lambda: (lambda r: [type(r).__name__, r.value])(
    tvm_ffi.structural_walk(tree, (str, lambda v: tvm_ffi.VisitInterrupt(v + "!")))))
run("walk interrupt none", lambda: tvm_ffi.structural_walk(tree, lambda v: tvm_ffi.VisitInterrupt()).value)
run("walk bad order", lambda: tvm_ffi.structural_walk(tree, print, order="x"))
run("walk bad callbacks", lambda: tvm_ffi.structural_walk(tree, 5))
run("walk bad entry", lambda: tvm_ffi.structural_walk(tree, [5]))
run("walk bad type", lambda: tvm_ffi.structural_walk(tree, (complex, print)))
run("walk string callbacks", lambda: tvm_ffi.structural_walk(tree, "abc"))
def boom(v):
    raise ValueError(f"boom at {v}")
run("walk raises", lambda: tvm_ffi.structural_walk(tree, (int, boom)))
run("interrupt ctor", lambda: [repr(tvm_ffi.VisitInterrupt()), repr(tvm_ffi.VisitInterrupt([1, "a"]))])

# visit
def visit_log(prune):
    seen = []
    def cb(v, vis):
        seen.append([show(v), type(vis).__name__, vis.def_region_kind().name])
        if prune(v):
            return None
        return vis.default_visit(v)
    r = tvm_ffi.structural_visit(tree, cb)
    return [repr(r)] + seen
run("visit default", lambda: visit_log(lambda v: False))
run("visit prune", lambda: visit_log(lambda v: isinstance(v, tvm_ffi.Map)))
def visit_first_child(v, vis):
    return vis.visit(v[1]) if isinstance(v, tvm_ffi.Array) and len(v) > 1 else None
run("visit selected", lambda: [repr(tvm_ffi.structural_visit([[5, [6, 7]], [8]], visit_first_child))])
def regioned(v, vis):
    inner = vis.with_def_region_kind(S.DefRegionKind.DEF_SIMPLE, lambda: vis.def_region_kind())
    return tvm_ffi.VisitInterrupt([int(vis.def_region_kind()), int(inner), type(inner).__name__])
run("visit regions", lambda: tvm_ffi.structural_visit([1], regioned).value)
run("visit typed interrupt", lambda: tvm_ffi.structural_visit(tree, (str, lambda v, vis: tvm_ffi.VisitInterrupt(v))).value)
run("visitor ctor", lambda: tvm_ffi.StructuralVisitor())

# map
plus = lambda v: v + 1
run("map post", lambda: tvm_ffi.structural_map(tree, (int, plus)))
run("map pre", lambda: tvm_ffi.structural_map(tree, (int, lambda v: [v + 10, v + 20] if v == 2 else v), order="pre"))
run("map grouped", lambda: tvm_ffi.structural_map(tree, ((int, float), lambda v: v * 2)))
run("map kinds", lambda: tvm_ffi.structural_map([1, [2]], (), (int, lambda v, k: [v, k.name, type(k).__name__])))
arr = tvm_ffi.convert([1, [2, "x"]])
run("map unchanged same", lambda: tvm_ffi.structural_map(arr, (str, lambda v: v)).same_as(arr))
run("map changed copy", lambda: (lambda r: [r.same_as(arr), r[1].same_as(arr[1]), show(r), show(arr)])(
    tvm_ffi.structural_map(arr, (str, lambda v: v + "!"))))
run("map moved", lambda: tvm_ffi.structural_map(tvm_ffi.List([1, tvm_ffi.List([2])])._move(), (int, plus)))
run("map bad order", lambda: tvm_ffi.structural_map(tree, plus, order="sideways"))

# mutate
def mut_log(with_mode):
    seen = []
    if with_mode:
        def cb(v, m, mode):
            seen.append([show(v), int(mode), mode == S.InplaceMode.ALLOW])
            return m.default_mutate(v)
    else:
        def cb(v, m):
            seen.append([show(v), type(m).__name__])
            return m.default_mutate(v)
    return cb, seen
def mutated(root, with_mode):
    cb, seen = mut_log(with_mode)
    return [show(tvm_ffi.structural_mutate(root, cb))] + seen
run("mutate two args", lambda: mutated([[1], 2], False))
run("mutate with mode", lambda: mutated([[1], 2], True))
run("mutate moved", lambda: mutated(tvm_ffi.List([tvm_ffi.List([1]), 2])._move(), True))
run("mutate typed", lambda: tvm_ffi.structural_mutate([1, [2]], (int, lambda v, m: v * 10)))
run("mutate explicit children", lambda: tvm_ffi.structural_mutate(
    [[1, 2], 3], [(tvm_ffi.Array, lambda v, m: [m.mutate(x) for x in v][::-1]), (int, lambda v, m: -v)]))
run("mutate mode default", lambda: tvm_ffi.structural_mutate([1], (int, lambda v, m, mode=None: [v, mode])))
run("mutate bad signature", lambda: tvm_ffi.structural_mutate([1], lambda v: v))
run("mutate remap non-var", lambda: tvm_ffi.structural_mutate([1], (int, lambda v, m: m.var_remap_get(v))))
run("mutate region", lambda: tvm_ffi.structural_mutate([1], (int, lambda v, m: [
    int(m.def_region_kind()), int(m.with_def_region_kind(1, lambda: m.def_region_kind()))])))
run("mutator ctor", lambda: tvm_ffi.StructuralMutator())
'''


def test_structural_api_matches_tvm_ffi():
    assert_same_records(SCENARIOS)


def test_structural_map_keeps_identity_of_unchanged_objects():
    arr = tether.convert([1, [2, "x"], {"k": [3]}])
    out = tether.structural_map(arr, (str, lambda v: v))
    assert out is arr
    changed = tether.structural_map(arr, (str, lambda v: v + "!"))
    assert changed is not arr
    # untouched sub-objects are shared, and come back as their one wrapper
    assert changed[2] is arr[2]
    assert changed[1] is not arr[1]


def test_traversal_objects_are_tied():
    echo = tether.get_global_func("testing.echo")
    seen = []

    def cb(v, vis):
        seen.append(vis)
        assert echo(vis) is vis
        return vis.default_visit(v)

    tether.structural_visit([[1]], cb)
    assert len(seen) == 3 and all(v is seen[0] for v in seen)
    vi = tether.VisitInterrupt([1])
    payload = vi.value
    assert echo(vi) is vi and vi.value is payload
    r = tether.structural_walk([7], (int, lambda v: vi))
    assert r is vi


def test_structural_key_and_paths_are_tied():
    k = tether.StructuralKey([1, [2]])
    inner = k.key
    assert k.key is inner
    m = tether.Map({k: "v"})
    assert list(m.keys())[0] is k
    lhs, rhs = tether.get_first_structural_mismatch([1, [2, 3]], [1, [2, 4]])
    parent = lhs.parent
    assert lhs.parent is parent
    steps = lhs.to_steps()
    assert steps[0] is steps[0]
    first = id(lhs.step)
    gc.collect()
    assert id(lhs.step) == first


def test_structural_key_hash_is_cached_structural_hash():
    value = tether.convert({"a": [1, 2.5, "s"]})
    key = tether.StructuralKey(value)
    assert hash(key) == tether.structural_hash(value)
    assert {key: 1}[tether.StructuralKey({"a": [1, 2.5, "s"]})] == 1
    with pytest.raises(KeyError):
        {key: 1}[tether.StructuralKey({"a": [1, 2.5, "t"]})]
