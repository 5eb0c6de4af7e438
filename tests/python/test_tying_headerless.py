"""Tying for objects allocated without tether's allocation header.

Code built against upstream's headers, or plain C, allocates objects with
`new`/`malloc`: nothing in front of the body can be read. tether ties them
through a side table keyed by handle, with the same promises as for every
other object: live identity, the same `id` across drop and re-fetch while
the object lives, and nothing leaked when it dies."""

import gc
import sys

import pytest

import tether
from tether import _ffi
from tether.testing import tie_state
from plugins import build_headerless


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    tether.load_module(build_headerless(tmp_path_factory.mktemp("headerless")))

    class Node(tether.Object):
        __slots__ = ()

    tether.register_object("headerless.Node")(Node)

    class NS:
        pass

    ns = NS()
    ns.Node = Node
    ns.make = tether.get_global_func("headerless.make_node")
    ns.storage = tether.get_global_func("headerless.storage_count")
    ns.alive = tether.get_global_func("headerless.alive_count")
    return ns


echo = tether.get_global_func("testing.echo")


def test_live_identity(lib):
    inner = lib.make(1)
    outer = lib.make(2, inner)
    assert _ffi.tied_by_side_table(inner)
    assert outer.next is inner and outer.next is outer.next
    assert echo(inner) is inner
    assert tie_state(inner) == ("Active", True)
    assert outer.next.value == 1


def test_same_id_across_drop_and_refetch(lib):
    outer = lib.make(2, lib.make(1))
    first = id(outer.next)
    gc.collect()
    assert tie_state(outer)[0] == "Active"
    for _ in range(2000):
        assert id(outer.next) == first


def test_wrapper_holding_the_last_reference_frees_everything(lib):
    gc.collect()
    storage, entries = lib.storage(), _ffi.sweep_side_table()
    n = lib.make(5)
    assert _ffi.sweep_side_table() == entries + 1
    del n
    assert lib.storage() == storage
    assert _ffi.sweep_side_table() == entries


def test_ten_thousand_objects_leave_nothing_behind(lib):
    gc.collect()
    storage, alive, entries = lib.storage(), lib.alive(), _ffi.sweep_side_table()
    objects_before = len(gc.get_objects())
    blocks_before = sys.getallocatedblocks()  # lean wrappers are not GC objects
    keep = tether.List([lib.make(i) for i in range(10_000)])
    ids = [id(keep[i]) for i in range(10_000)]  # each wrapper dies at once: kept for revival
    assert len(set(ids)) > 1
    assert _ffi.sweep_side_table() == entries + 10_000
    assert [id(keep[i]) for i in range(0, 10_000, 997)] == ids[::997]  # revived in place
    del keep, ids  # the objects die natively; their kept wrappers are swept
    gc.collect()
    assert _ffi.sweep_side_table() == entries
    assert lib.storage() == storage and lib.alive() == alive
    assert len(gc.get_objects()) - objects_before < 50
    assert sys.getallocatedblocks() - blocks_before < 500


def test_classes_with_dict_are_tied_and_revived(lib):
    class Loose(tether.Object):
        __slots__ = ("__dict__",)  # instances have a __dict__

    tether.register_object("headerless.Node")(Loose)
    try:
        outer = lib.make(2, lib.make(1))
        x = outer.next
        assert isinstance(x, Loose) and outer.next is x and echo(x) is x
        x.note = 1
        first = id(x)
        del x
        gc.collect()
        assert id(outer.next) == first and outer.next.__dict__ == {}
    finally:
        tether.register_object("headerless.Node")(lib.Node)


def test_moves_of_headerless_objects(lib):
    outer = lib.make(2, lib.make(1))
    x = outer.next
    echo(0, x._move())  # not taken: x stays canonical
    assert outer.next is x and tie_state(x) == ("Active", True)
    y = echo(x._move())  # taken and handed back
    assert x.__chandle__() == 0 and outer.next is y


def test_objects_alive_only_natively_are_swept_after_gc(lib):
    gc.collect()
    entries = _ffi.sweep_side_table()
    holder = tether.List([lib.make(i) for i in range(100)])
    for i in range(100):
        holder[i].value  # tie, then drop: Inactive entries
    assert _ffi.sweep_side_table() == entries + 100
    holder.clear()  # the nodes die without Python noticing
    gc.collect()  # the gc callback sweeps
    assert _ffi.sweep_side_table() == entries


def test_weakref_callback_fetching_the_dying_wrapper_gets_another(lib):
    # The callback runs inside the wrapper's teardown: it must not revive
    # the memory being torn down, and nothing may leak or be freed twice.
    import weakref

    gc.collect()
    storage, entries = lib.storage(), _ffi.sweep_side_table()
    outer = lib.make(2, lib.make(1))
    seen = []
    for _ in range(50):
        x = outer.next
        r = weakref.ref(x, lambda ref: seen.append(outer.next))
        dying = id(x)
        del x
        assert r() is None
        fetched = seen.pop()
        # Made while the wrapper was dying: a working wrapper, not the
        # dying memory; it became the canonical one (the teardown then
        # found itself replaced and freed its memory).
        assert id(fetched) != dying and fetched.value == 1
        assert outer.next is fetched
        del fetched
    gc.collect()
    assert outer.next.value == 1
    del outer
    gc.collect()
    _ffi.sweep_side_table()
    assert lib.storage() == storage and _ffi.sweep_side_table() == entries
