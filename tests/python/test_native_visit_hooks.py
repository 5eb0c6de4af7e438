"""A structural visit hook registered by C++ as a native function pointer
(`__s_visit__` through `TypeAttrDef::native_fn_attr`, as Apache TVM's IR
types register theirs) is what tether's walks from Python follow: the
hook below visits a pair's `first` field and skips `second` on purpose."""

import pytest

import tether
from plugins import build_upstream_kernel


@pytest.fixture(scope="module")
def make_pair(tmp_path_factory):
    import os

    source = os.path.join(os.path.dirname(__file__), "native", "visit_hook.cc")
    lib = build_upstream_kernel(source, tmp_path_factory.mktemp("visit_hook") / "libvisit_hook.so")
    tether.load_module(lib)
    return tether.get_global_func("tests.visit_hook.make_pair")


def test_walk_from_python_follows_the_native_hook(make_pair):
    seen_first, seen_second = tether.Array([1, 2]), tether.Array([3, 4])
    pair = make_pair(seen_first, seen_second)
    visited = []
    tether.structural_walk(pair, callbacks=[(object, lambda v: visited.append(v))])
    assert any(v is seen_first or v == seen_first for v in visited if isinstance(v, tether.Array))
    assert 1 in visited and 2 in visited
    assert 3 not in visited and 4 not in visited  # the hook skipped `second`


def test_the_hook_is_a_native_function_pointer_in_the_column(make_pair):
    pair = make_pair(tether.Array([]), tether.Array([]))
    index = tether.core._object_type_key_to_index("tests.visit_hook.Pair")
    assert index is not None and pair.type_key == "tests.visit_hook.Pair"
    hook = tether.core._lookup_type_attr(index, "__s_visit__")
    assert hook is not None and not isinstance(hook, tether.Function)  # an opaque pointer, not an ffi.Function
