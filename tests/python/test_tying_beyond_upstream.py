"""Tying where upstream's binding gives up: weak references to wrappers,
and a stable `id` for wrapper classes with an instance `__dict__` or a
`__del__` (upstream drops revival for both)."""

import gc
import pickle
import sys
import weakref

import pytest

import tether
from tether.testing import tie_state
from conftest import Holder, Inner
from thread_failures import run_threads

echo = tether.get_global_func("testing.echo")


class TestWeakReferences:
    """A weakref dies with the wrapper's Python life; a revived wrapper starts with none."""

    @pytest.mark.parametrize("make", [
        lambda: Inner(1),                              # py_class
        lambda: tether.Array([1, 2]),                  # containers
        lambda: tether.List([1]),
        lambda: tether.Map({"a": 1}),
        lambda: tether.convert(lambda: 1),             # functions
    ])
    def test_every_wrapper_class_takes_weakrefs(self, make):
        obj = make()
        r = weakref.ref(obj)
        assert r() is obj
        assert not hasattr(obj, "__dict__")  # lean classes stay lean
        del obj
        gc.collect()
        assert r() is None

    def test_weakref_dies_with_the_python_life_and_revival_keeps_id(self, holder):
        died = []
        x = holder.x
        first = id(x)
        r = weakref.ref(x, lambda ref: died.append(ref))
        del x
        assert died == [r] and r() is None  # the callback ran when the wrapper died
        y = holder.x
        assert id(y) == first  # revived in place...
        assert weakref.getweakrefcount(y) == 0  # ...with no weakrefs
        r2 = weakref.ref(y)
        assert r2() is y and r2 is not r

    def test_weak_value_dictionary_and_finalize(self, holder):
        cache = weakref.WeakValueDictionary()
        cache["x"] = holder.x
        assert "x" not in cache  # the wrapper died at once
        x = holder.x
        cache["x"] = x
        assert cache["x"] is x
        calls = []
        weakref.finalize(x, calls.append, "finalized")
        del x
        assert calls == ["finalized"] and "x" not in cache

    def test_callback_fetching_the_object_does_not_resurrect_the_dying_wrapper(self, holder):
        seen = []
        x = holder.x
        r = weakref.ref(x, lambda ref: seen.append(holder.x))
        del x
        assert len(seen) == 1 and seen[0].v == holder.x.v
        assert r() is None
        assert holder.x is seen[0]  # the callback's wrapper is the canonical one now

    def test_weakrefs_survive_pickling_and_moves(self, holder):
        x = holder.x
        r = weakref.ref(x)
        y = pickle.loads(pickle.dumps(x))
        assert r() is x and weakref.ref(y)() is y
        echo(x._move())  # the handle moves out; the wrapper (and its weakref) lives on
        assert x.__chandle__() == 0 and r() is x
        del x
        assert r() is None

    def test_weakref_to_a_wrapper_in_a_collected_cycle(self):
        class Loose(Holder):  # a __dict__ lets the wrapper take part in a cycle
            __slots__ = ("__dict__",)

        died = []
        obj = Loose(Inner(1))
        obj.self_ref = obj
        r = weakref.ref(obj, lambda ref: died.append(1))
        del obj
        gc.collect()
        assert r() is None and died == [1]

    def test_threads_taking_and_dropping_weakrefs(self, holder):
        def work():
            for _ in range(2000):
                x = holder.x
                r = weakref.ref(x)
                assert r() is x
                del x

        run_threads([work] * 4)


class TestDictAndDel:
    """Classes with an instance __dict__ or a __del__ keep their id across drop and re-fetch."""

    def test_class_with_dict_keeps_id_and_starts_empty(self, wrap_inner_with):
        @wrap_inner_with
        class WithDict(Inner):  # instances get a __dict__
            __slots__ = ("__dict__",)

        h = Holder(Inner(3))
        x = h.x
        assert isinstance(x, WithDict)
        x.note = "set on the first life"
        first = id(x)
        del x
        gc.collect()
        y = h.x
        assert id(y) == first
        assert y.__dict__ == {}  # a revived wrapper starts like a new one
        assert h.x is y and echo(y) is y

    def test_del_runs_on_every_drop_and_id_is_kept(self, wrap_inner_with):
        drops = []

        @wrap_inner_with
        class WithDel(Inner):
            __slots__ = ()

            def __del__(self):
                drops.append(self.v)

        h = Holder(Inner(9))
        ids = set()
        for _ in range(5):
            ids.add(id(h.x))
            gc.collect()
        assert len(ids) == 1  # the same memory every time
        assert drops == [9] * 5  # __del__ ran again on each drop

    def test_dict_and_del_together(self, wrap_inner_with):
        drops = []

        @wrap_inner_with
        class Both(Inner):
            __slots__ = ("__dict__",)

            def __del__(self):
                drops.append(getattr(self, "tag", None))

        h = Holder(Inner(1))
        x = h.x
        x.tag = "first"
        first = id(x)
        del x
        assert drops == ["first"]
        y = h.x
        assert id(y) == first and not hasattr(y, "tag")
        del y
        assert drops == ["first", None]

    def test_del_resurrecting_the_wrapper_keeps_it(self, wrap_inner_with):
        keep = []

        @wrap_inner_with
        class Phoenix(Inner):
            __slots__ = ()

            def __del__(self):
                keep.append(self)

        h = Holder(Inner(1))
        first = h.x
        del first
        assert len(keep) == 1
        assert h.x is keep[0]  # the resurrected wrapper is still canonical
        assert tie_state(keep[0]) == ("Active", True)
        keep.clear()

    @pytest.mark.skipif(
        not getattr(sys, "_is_gil_enabled", lambda: True)(),
        reason="free-threaded CPython defers type objects' reference counts (sys.getrefcount and weakrefs to classes "
        "do not show what instances hold)",
    )
    def test_no_leak_when_the_handle_dies_while_the_wrapper_is_kept(self, wrap_inner_with):
        drops = []

        @wrap_inner_with
        class Counted(Inner):
            __slots__ = ("__dict__",)

            def __del__(self):
                drops.append(1)

        holders = tether.List([Holder(Inner(i)) for i in range(200)])
        for i in range(200):
            holders[i].x.tag = i  # tie, fill the __dict__, drop: 200 kept wrappers
        gc.collect()
        assert len(drops) == 200
        objects = len(gc.get_objects())
        refs = sys.getrefcount(Counted)
        del holders  # the handles die natively; the kept memory is freed once
        gc.collect()
        assert len(drops) == 200  # __del__ does not run for kept memory
        assert len(gc.get_objects()) <= objects
        after = sys.getrefcount(Counted)
        assert after == refs - 200  # each kept block released its class reference
