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
