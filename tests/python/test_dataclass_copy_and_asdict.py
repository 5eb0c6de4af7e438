"""Deep copies of a container that a Dict inside it holds as a key, and
``asdict``/``astuple`` keeping mapping subclasses such as ``defaultdict``."""

import collections
import copy

import pytest

import tether
from tether.dataclasses.common import _asdict_inner, _astuple_inner


@pytest.mark.parametrize("root_kind", ["array", "map"])
def test_a_dict_keyed_by_the_copied_root_gets_the_copy_as_key(root_kind):
    d = tether.Dict({"first": 0})
    root = tether.Array([d]) if root_kind == "array" else tether.Map({"d": d})
    d[root] = 1
    d["last"] = 2
    copied_dict = None
    try:
        copied = copy.deepcopy(root)
        copied_dict = copied[0] if root_kind == "array" else copied["d"]
        assert not copied_dict.same_as(d)
        keys = list(copied_dict.keys())
        assert keys[0] == "first" and keys[2] == "last"
        assert keys[1].same_as(copied) and not keys[1].same_as(root)
        assert copied_dict[copied] == 1 and root not in copied_dict
    finally:  # break both cycles
        d.clear()
        if copied_dict is not None:
            copied_dict.clear()


@pytest.mark.parametrize("inner", [_asdict_inner, _astuple_inner])
def test_defaultdict_keeps_its_type_and_factory(inner):
    dd = collections.defaultdict(list)
    dd["a"].append(tether.Array([1]))
    out = inner(dd, dict if inner is _asdict_inner else tuple)
    assert type(out) is collections.defaultdict and out.default_factory is list
    assert out["a"] == [[1]]
    out["new"].append(3)  # the factory still works on the result
    assert out["new"] == [3]


def test_other_dict_subclasses_are_rebuilt_from_pairs():
    class Tagged(dict):
        pass

    out = _asdict_inner(Tagged(x=tether.List([1, 2])), dict)
    assert type(out) is Tagged and out == {"x": [1, 2]}


def test_asdict_and_astuple_convert_deep_chains_and_refuse_cycles():
    """Both convert on an explicit work stack: a chain far deeper than
    Python's recursion limit converts; a reference cycle is a ValueError
    naming the value, not a hang or a RecursionError."""
    import sys
    import typing

    from tether import dataclasses as dc

    @dc.py_class("testing.asdict.ChainNode")
    class Node(tether.Object):
        val: int
        nxt: "typing.Optional[Node]" = None

    depth = 50 * sys.getrecursionlimit()
    node = None
    for i in range(depth):
        node = Node(i, node)
    as_dict, as_tuple = dc.asdict(node), dc.astuple(node)
    for _ in range(depth - 1):
        assert set(as_dict) == {"val", "nxt"} and len(as_tuple) == 2
        as_dict, as_tuple = as_dict["nxt"], as_tuple[1]
    assert as_dict == {"val": 0, "nxt": None} and as_tuple == (0, None)

    @dc.py_class("testing.asdict.Holder")
    class Holder(tether.Object):
        items: typing.Any

    looped = tether.List([1])
    looped.append(looped)
    try:
        for convert in (dc.asdict, dc.astuple):
            with pytest.raises(ValueError, match=r"reference cycle through a List value"):
                convert(Holder(looped))
        # Shared (not cyclic) values convert once per place they appear.
        shared = tether.List([2])
        assert dc.asdict(Holder([shared, shared])) == {"items": [[2], [2]]}
    finally:
        looped.clear()
