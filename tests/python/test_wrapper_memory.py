"""Wrapper memory: lean wrapper classes are not GC types, classes that add
storage are, and both tie, weak-reference and revive the same way."""

import ctypes
import gc
import sys
import weakref

import pytest

import tether
from tether.testing import echo, tie_state

from conftest import Holder, Inner

HAVE_GC = 1 << 14
POINTER = ctypes.sizeof(ctypes.c_void_p)


def is_gc_type(cls):
    return bool(cls.__flags__ & HAVE_GC)


class TestLeanWrappers:
    def test_have_no_gc_header_and_are_not_tracked(self):
        w = Inner(1)
        for cls in type(w).__mro__[:-1]:  # every wrapper class up to the native base
            assert not is_gc_type(cls), cls
        assert not gc.is_tracked(w)
        # The Python header, the handle, the borrow count and the weak-reference
        # list; nothing in front of it.
        assert type(w).__basicsize__ == object.__basicsize__ + 3 * POINTER
        assert sys.getsizeof(w) == type(w).__basicsize__

    def test_function_wrappers_are_lean_too(self):
        f = tether.get_global_func("testing.echo")
        assert not is_gc_type(type(f)) and not gc.is_tracked(f)
        # Plus the vectorcall entry and the release_gil flag (a padded byte).
        assert type(f).__basicsize__ == object.__basicsize__ + 5 * POINTER
        assert f(3) == 3

    def test_weak_references_work_and_die_with_the_wrapper(self, holder):
        w = holder.x
        fired = []
        ref = weakref.ref(w, lambda r: fired.append(r))
        assert ref() is w
        del w
        assert fired and ref() is None
        again = holder.x  # the handle lives on: revived, weak references start afresh
        assert weakref.ref(again)() is again

    def test_revival_keeps_id_across_collections(self, holder):
        w = holder.x
        first, h = id(w), w.__chandle__()
        del w
        gc.collect()
        assert tie_state(holder)[0] == "Active"
        again = holder.x
        assert (id(again), again.__chandle__(), again.v) == (first, h, 7)
        assert not gc.is_tracked(again)
        assert tie_state(again) == ("Active", True)

    def test_kept_memory_is_freed_with_its_handle(self):
        gc.collect()
        empty = sys.getallocatedblocks()
        items = tether.List([Inner(i) for i in range(500)])
        gc.collect()
        kept = sys.getallocatedblocks()
        assert kept - empty > 400  # each dropped wrapper's memory is kept
        first = id(items[0])
        for _ in range(3):
            for i in range(500):
                assert items[i].v == i  # revived in place, dropped again
        assert id(items[0]) == first
        gc.collect()
        assert abs(sys.getallocatedblocks() - kept) < 50
        del items
        gc.collect()
        assert sys.getallocatedblocks() - empty < 50

    def test_class_with_del_stays_lean_and_runs_del_on_every_drop(self, wrap_inner_with):
        drops = []

        @wrap_inner_with
        class WithDel(Inner):
            __slots__ = ()

            def __del__(self):
                drops.append(self.v)

        assert not is_gc_type(WithDel)
        h = Holder(Inner(5))
        first = id(h.x)  # the wrapper dies at once: __del__ runs, memory kept
        assert drops == [5]
        for n in range(2, 5):
            assert id(h.x) == first
            gc.collect()
            assert drops == [5] * n


class TestClassesThatAddStorage:
    def test_dict_subclass_is_tracked_and_its_cycles_are_collected(self, wrap_inner_with):
        @wrap_inner_with
        class Loose(Inner):
            __slots__ = ("__dict__",)

        assert is_gc_type(Loose)
        h = Holder(Inner(3))
        w = h.x
        assert isinstance(w, Loose) and gc.is_tracked(w)
        w.me = w  # a cycle through the instance dict
        ref = weakref.ref(w)
        first = id(w)
        del w
        assert ref() is not None  # only the collector can break the cycle
        gc.collect()
        assert ref() is None
        again = h.x  # the kept memory is revived, with an empty dict
        assert id(again) == first and again.__dict__ == {} and gc.is_tracked(again)
        assert echo(again) is again

    def test_slot_subclass_is_tracked_and_its_cycles_are_collected(self, wrap_inner_with):
        @wrap_inner_with
        class Slotted(Inner):
            __slots__ = ("other",)

        assert is_gc_type(Slotted)
        a, b = Holder(Inner(1)), Holder(Inner(2))
        x, y = a.x, b.x
        x.other, y.other = y, x
        refs = weakref.ref(x), weakref.ref(y)
        del x, y
        assert all(r() is not None for r in refs)
        gc.collect()
        assert all(r() is None for r in refs)
        assert (a.x.v, b.x.v) == (1, 2)

    def test_subclasses_below_a_gc_class_stay_gc_and_lean_ones_stay_lean(self):
        class Loose(Inner):
            __slots__ = ("__dict__",)

        class BelowLoose(Loose):
            __slots__ = ()

        class Lean(Inner):
            __slots__ = ()

        class BelowLean(Lean):
            pass  # the metaclass makes a missing __slots__ empty

        assert is_gc_type(Loose) and is_gc_type(BelowLoose)
        assert not is_gc_type(Lean) and not is_gc_type(BelowLean)

    def test_class_assignment_between_lean_and_gc_classes_is_refused(self, holder):
        class Loose(Inner):
            __slots__ = ("__dict__",)

        class Lean(Inner):
            __slots__ = ()

        w = holder.x
        with pytest.raises(TypeError):
            w.__class__ = Loose
        w.__class__ = Lean  # same layout and kind: allowed, as for any class
        assert type(w) is Lean and not gc.is_tracked(w)
