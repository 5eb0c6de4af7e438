"""Identity on the edges: failed conversions next to a move, moves racing
lookups, class references held by wrappers, moves out of callbacks, and
arguments passed as borrowed views."""

import gc
import sys
import threading
import weakref

import pytest

import tether
from tether.testing import tie_state
from conftest import Holder, Inner
from thread_failures import run_threads

echo = tether.get_global_func("testing.echo")
apply_n = tether.get_global_func("testing.apply_n")


def test_failed_conversion_after_a_move_leaves_the_binding_intact(holder):
    x = holder.x
    cyclic = []
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match="contains itself"):
        echo(x._move(), cyclic)
    assert x.__chandle__() != 0
    assert tie_state(x) == ("Active", True)
    assert holder.x is x


def test_moving_an_object_that_is_also_borrowed_is_refused(holder):
    x = holder.x
    with pytest.raises(ValueError, match="also passed by reference"):
        echo(x, x._move())
    with pytest.raises(ValueError, match="moved twice"):
        echo(x._move(), x._move())
    assert holder.x is x and tie_state(x) == ("Active", True)


def test_unconsumed_move_racing_lookups_never_leaves_two_canonical_wrappers():
    holder = Holder(Inner(1))
    x = holder.x
    stop = threading.Event()
    fetched = []

    def mover():
        try:
            for _ in range(20_000):
                echo(0, x._move())  # echo returns its first argument: the move is not taken
        finally:
            stop.set()  # a failing mover still releases the looker

    def looker():
        while not stop.is_set():
            fetched.append(holder.x)
            if len(fetched) > 1000:
                fetched.clear()

    run_threads([mover, looker])
    fetched.clear()
    assert x.__chandle__() != 0
    assert tie_state(x) == ("Active", True)
    assert holder.x is x


@pytest.mark.skipif(
    not getattr(sys, "_is_gil_enabled", lambda: True)(),
    reason="free-threaded CPython defers type objects' reference counts (sys.getrefcount and weakrefs to classes "
    "do not show what instances hold)",
)
def test_wrappers_release_their_class():
    # (Kept memory of a wrapper whose handle lives on holds its class: a
    # constructor's init Function, for one; so each class is measured alone.)
    before = sys.getrefcount(tether.Function)
    for _ in range(1000):
        tether.convert(lambda: 1)
    gc.collect()
    after = sys.getrefcount(tether.Function)  # (outside assert: pytest's rewriting holds operands)
    assert after == before
    Inner(2)
    before = sys.getrefcount(Inner)
    for _ in range(1000):
        Inner(2)
    gc.collect()
    after = sys.getrefcount(Inner)
    assert after == before


@pytest.mark.skipif(
    not getattr(sys, "_is_gil_enabled", lambda: True)(),
    reason="free-threaded CPython defers type objects' reference counts (sys.getrefcount and weakrefs to classes "
    "do not show what instances hold)",
)
def test_dynamic_subclass_is_freed_after_its_instances():
    Dyn = type("Dyn", (tether.Object,), {"__slots__": ()})
    objs = [Dyn.__new__(Dyn) for _ in range(100)]
    ref = weakref.ref(Dyn)
    del objs, Dyn
    gc.collect()
    assert ref() is None


@pytest.mark.skipif(
    not getattr(sys, "_is_gil_enabled", lambda: True)(),
    reason="free-threaded CPython defers type objects' reference counts (sys.getrefcount and weakrefs to classes "
    "do not show what instances hold)",
)
def test_kept_wrapper_memory_keeps_its_class_until_the_handle_dies():
    base = sys.getrefcount(Inner)
    holder = Holder(Inner(3))
    first = id(holder.x)
    gc.collect()
    assert tie_state(holder.x)[0] == "Active"
    gc.collect()
    kept = sys.getrefcount(Inner)
    assert kept == base + 1  # kept (Inactive) memory holds Inner
    assert id(holder.x) == first
    del holder
    gc.collect()
    after = sys.getrefcount(Inner)
    assert after == base


def test_move_returned_from_a_callback_moves_the_handle_into_the_result(holder):
    x = holder.x
    got = apply_n(lambda: x._move(), 1)
    assert x.__chandle__() == 0
    assert got is holder.x
    assert got.v == 7


def test_arguments_cross_as_borrowed_views():
    count = tether.get_global_func("testing.object_use_count")
    obj = Inner(5)
    assert tether.testing.object_use_count(obj) == 1
    assert count(obj) == 1  # only the caller's reference: no count per argument
    seen = []
    apply_n(lambda o: seen.append(tether.testing.object_use_count(o)), 1, obj)
    assert seen == [1]
