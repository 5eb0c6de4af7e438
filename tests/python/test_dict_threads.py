"""Dict readers never crash while other threads mutate the same Dict.

Writers grow it through small -> dense and rehash, erase and clear it;
readers iterate (through the core's forward iterator, which raises
RuntimeError when the Dict changed under it) and index it (KeyError when a
key went away). Any other outcome — a crash, a wrong exception — fails.
"""

import threading

import tether
import time

from thread_failures import running_threads


def test_dict_iteration_and_indexing_survive_concurrent_mutation():
    d = tether.Dict()
    stop = threading.Event()
    errors = []  # readers' wrong items; anything else a thread raises fails the test too

    def writer(seed):
        i = 0
        while not stop.is_set():
            k = (i * 7 + seed) % 300
            d[k] = f"value {i} with a heap-sized string"
            if i % 3 == 0:
                d.pop(k, None)
            if i % 997 == 0:
                d.clear()
            i += 1

    def reader():
        while not stop.is_set():
            try:
                for k, v in d.items():
                    assert isinstance(k, int) and isinstance(v, str)
            except RuntimeError as e:
                assert "changed size during iteration" in str(e)
            for k in range(0, 300, 17):
                try:
                    assert isinstance(d[k], str)
                except KeyError:
                    pass
            _ = len(d), (5 in d), d.get(7)

    threads = [lambda s=s: writer(s) for s in range(2)] + [reader] * 3
    with running_threads(threads, stop=stop):
        time.sleep(3.0)
    assert not errors, errors
    for k, v in d.items():
        assert d[k] == v


def test_iterator_started_on_an_empty_dict_stays_empty_after_a_racing_insert():
    # The interleaving that used to escape as IndexError: the iterator is
    # made while the Dict is empty, then another thread inserts and erases
    # before the first step. The cursor answers from its own snapshot.
    d = tether.Dict()
    it = tether.get_global_func("ffi.DictForwardIterFunctor")(d)
    d[1] = "x"
    del d[1]
    assert it(3) is False
    d[2] = "y"
    it_full = tether.get_global_func("ffi.DictForwardIterFunctor")(d)
    assert it_full(3) is True
    assert (it_full(0), it_full(1)) == (2, "y")


def test_list_iteration_reports_a_shrink_as_changed_size():
    lst = tether.List(range(4))
    it = iter(lst)
    assert next(it) == 0
    lst.pop()
    try:
        next(it)
    except RuntimeError as e:
        assert "changed size during iteration" in str(e)
    else:
        raise AssertionError("a shrinking List must stop its iterator")
