"""Wrapper tying: one wrapper per native object, revived in place."""

import gc
import pickle
import sys
import weakref

import pytest

import typing

import tether
import tether.dataclasses as dc
from tether.dataclasses import py_class
from tether.testing import echo, tie_state

from conftest import Base, BaseHolder, Holder, Inner, Leaf, Mid
from thread_failures import run_threads


def allocated_blocks():
    """Python memory blocks in use: live wrappers and kept (Inactive) wrapper
    memory among them. Lean wrappers are not GC objects, so
    `gc.get_objects` does not see them."""
    gc.collect()
    return sys.getallocatedblocks()


def test_live_identity(holder):
    assert holder.x is holder.x
    assert len({id(holder.x) for _ in range(100)}) == 1


def test_distinct_handles_distinct_wrappers():
    a, b = Holder(Inner(1)), Holder(Inner(1))
    assert a.x is not b.x
    assert not a.x.same_as(b.x)


def test_echo_returns_the_same_wrapper(holder):
    x = holder.x
    assert echo(x) is x
    assert echo(holder) is holder
    f = tether.get_global_func("testing.echo")
    assert f(f) is f


def test_revival_keeps_id_handle_and_value(holder):
    w = holder.x
    i, h = id(w), w.__chandle__()
    del w
    gc.collect()
    assert tie_state(holder)[0] == "Active"
    again = holder.x
    assert (id(again), again.__chandle__(), again.v) == (i, h, 7)
    assert tie_state(again) == ("Active", True)


def test_inactive_state_between_fetches(holder):
    w = holder.x
    h = w.__chandle__()
    del w
    # Reading through a second path still finds the kept wrapper.
    items = tether.Array([holder.x])
    assert items[0] is holder.x
    assert holder.x.__chandle__() == h


def test_2000_drop_refetch_cycles_reuse_one_address(holder):
    assert len({id(holder.x) for _ in range(2000)}) == 1


def test_gc_collect_inside_drop_refetch_loop(holder):
    ids = set()
    for _ in range(200):
        ids.add(id(holder.x))
        gc.collect()
    assert len(ids) == 1


def test_handle_dies_while_wrapper_inactive():
    holder = Holder(Inner(0))
    for round_ in range(8):
        w = holder.x
        old_id = id(w)
        del w  # wrapper goes Inactive, the holder keeps the handle
        holder.x = Inner(round_ + 1)  # the old handle dies: kept memory is freed
        gc.collect()
        assert holder.x.v == round_ + 1
        assert holder.x is holder.x
    del old_id


def test_distinct_handles_kept_natively_leave_no_live_wrappers():
    empty = allocated_blocks()
    items = tether.List([Inner(i) for i in range(1000)])
    before = allocated_blocks()
    assert before - empty > 900  # each wrapper died at once: its memory is kept
    for i in range(1000):
        assert items[i].v == i
    assert abs(allocated_blocks() - before) < 100  # revived and dropped again
    del items
    assert allocated_blocks() - empty < 100  # the kept memory went with the handles


def test_fifty_handles_revived_in_reverse_order_keep_their_ids():
    items = tether.List([Inner(i) for i in range(50)])
    ids = [id(items[i]) for i in range(50)]
    gc.collect()
    for i in reversed(range(50)):
        assert id(items[i]) == ids[i]
        assert items[i].v == i


class Finalized(dc.Object):
    pass


def test_del_type_runs_del_on_every_drop_and_keeps_live_identity():
    drops = []

    @py_class("tests.WithDel")
    class WithDel(dc.Object):
        v: int = 0

        def __del__(self):
            drops.append(1)

    items = tether.List([WithDel(3)])
    drops.clear()
    for n in range(1, 6):
        w = items[0]
        assert items[0] is w  # live identity still holds
        del w
        gc.collect()
        assert len(drops) == n
    assert items[0].v == 3


def test_dropping_the_last_reference_frees_cleanly():
    class Payload:
        pass

    p = Payload()
    ref = weakref.ref(p)
    h = Holder(Inner(1), p)
    assert h.anything is p
    del p, h
    gc.collect()
    assert ref() is None


def test_move_into_consuming_function_then_refetch(holder):
    x = holder.x
    assert tether.testing.object_use_count(x) == 2  # holder + wrapper
    y = echo(x._move())
    assert x.__chandle__() == 0
    assert "moved" in repr(x)
    assert y is holder.x  # the returned wrapper is the canonical one
    assert holder.x is holder.x
    with pytest.raises(ValueError, match="moved from"):
        echo(x)


def test_move_into_callback_then_refetch(holder):
    x = holder.x
    seen = []
    tether.testing.apply_n(lambda v: seen.append(v) or v, 1, x._move())
    assert x.__chandle__() == 0
    assert seen[0] is holder.x
    assert holder.x.v == 7


def test_move_not_consumed_keeps_binding(holder):
    x = holder.x
    f = tether.convert(lambda v: None)  # a callback that ignores its argument
    f(x._move())
    assert holder.x is not None


def test_pickle_round_trips_keep_identity_and_survive_revival():
    h = Holder(Inner(11))
    for _ in range(200):
        h = pickle.loads(pickle.dumps(h))
        assert h.x is h.x
        i = id(h.x)
        gc.collect()
        assert id(h.x) == i
    assert h.x.v == 11


def test_str_and_bytes_are_value_types():
    @py_class("tests.Named")
    class Named(dc.Object):
        name: str = ""
        data: typing.Any = None

    n = Named("a name long enough to live on the heap", b"some bytes long enough")
    # Heap strings come back as String/Bytes values holding the object,
    # each read a new value (no identity), as tvm_ffi's do.
    assert type(n.name) is tether.core.String and n.name == "a name long enough to live on the heap"
    assert type(n.data) is tether.core.Bytes and n.data == b"some bytes long enough"
    assert n.name is not n.name
    assert n.name._tvm_ffi_cached_object.same_as(n.name._tvm_ffi_cached_object)
    assert type(echo("short")) is str and echo("short") == "short"


def test_registering_new_types_between_accesses_keeps_revival(holder):
    i = id(holder.x)
    for k in range(20):
        py_class(f"tests.Extra{k}")(type(f"Extra{k}", (dc.Object,), {"__annotations__": {"q": int}}))
        assert id(holder.x) == i


def test_replacing_a_mutable_field_gives_a_fresh_canonical_wrapper(holder):
    old = holder.x
    holder.x = Inner(99)
    new = holder.x
    assert new is not old and new is holder.x and new.v == 99
    assert old.v == 7


def test_sixteen_threads_see_one_wrapper(holder):
    keep = holder.x
    seen = run_threads([lambda: {id(holder.x) for _ in range(2000)}] * 16)
    assert set().union(*seen) == {id(keep)}


def test_functions_and_errors_in_containers_alias():
    f = tether.get_global_func("testing.echo")
    err = tether.convert(ValueError("inside a container"))
    assert isinstance(err, tether.Error)
    arr = tether.Array([f, err])
    assert arr[0] is f
    assert arr[1] is err
    assert err.kind == "ValueError" and err.message == "inside a container"


def test_two_level_subclass_ties():
    leaf = Leaf(1, 2, 3)
    bh = BaseHolder(leaf)
    got = bh.item
    assert got is leaf and type(got) is Leaf
    assert isinstance(got, Mid) and isinstance(got, Base)
    assert (got.a, got.b, got.c) == (1, 2, 3)
    i = id(bh.item)
    del got, leaf
    gc.collect()
    assert id(bh.item) == i


def test_opaque_python_objects_round_trip_and_are_not_leaked():
    class Thing:
        pass

    things = [Thing() for _ in range(50)]
    refs = [weakref.ref(t) for t in things]
    for t in things:
        assert echo(t) is t
    arr = tether.Array(things)
    assert all(arr[i] is things[i] for i in range(50))
    del arr, things, t
    gc.collect()
    assert all(r() is None for r in refs)


def test_global_function_wrapper_is_stable():
    assert tether.get_global_func("testing.echo") is tether.get_global_func("testing.echo")


def test_interpreter_exit_with_inactive_wrappers_is_clean():
    # Handles still alive at exit keep Inactive wrapper memory; after the
    # at-exit hook, delete_space must not touch the interpreter.
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        import gc, tether
        import tether.dataclasses as dc
        from tether.dataclasses import py_class

        @py_class("exit.Inner")
        class Inner(dc.Object):
            v: int = 0

        keep = tether.List([Inner(i) for i in range(100)])
        for i in range(100):
            keep[i]  # each wrapper goes Inactive right away
        gc.collect()
        callback = tether.convert(lambda: None)  # a Python object held natively
        holder = tether.Array([callback, keep])
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
