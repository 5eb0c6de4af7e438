"""Function wrappers called from many threads at once, from their very
first call and again after a drop and revival: every call returns the
result for its own argument. The wrappers' vectorcall entry is set when the wrapper is
allocated, before another thread can see it; on free-threaded CPython,
setting it at the first call (as tether once did) raced with the other
threads' calls, which `make test-tsan` reports."""

import gc
import threading

import tether
from thread_failures import run_threads

THREADS = 8
CALLS = 200


def call_together(f, tag):
    """Call `f` from THREADS threads released at the same moment; return
    the mismatches they saw."""
    barrier = threading.Barrier(THREADS)

    def worker(k):
        barrier.wait()
        wrong = []
        for i in range(CALLS):
            v = (tag * THREADS + k) * CALLS + i
            got = f(v)
            if got != v + 1:
                wrong.append(f"thread {k}: f({v}) returned {got!r}")
        return wrong

    # An exception in any thread fails the test (ThreadFailures).
    return [w for ws in run_threads([lambda k=k: worker(k) for k in range(THREADS)]) for w in ws]


def test_new_function_wrappers_called_first_from_many_threads():
    for round_ in range(20):
        f = tether.convert_func(lambda v: v + 1)  # a fresh wrapper, never called
        assert call_together(f, round_) == []


def test_revived_function_wrapper_called_from_many_threads():
    holder = tether.List([tether.convert_func(lambda v: v + 1)])
    first = id(holder[0])
    gc.collect()  # the wrapper dies; its memory is kept for revival
    f = holder[0]
    assert id(f) == first, "the Function wrapper was not revived in place"
    assert call_together(f, 1000) == []


IDLE_THREADS_CHILD = """
import os, sys, threading
import tether

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

data = list(range(100000))
work = sys.argv[1] == "1"
tether.Array(data)
before = rss()
ready, stop = threading.Barrier(101), threading.Event()

def run():
    if work:  # one long sequence and one long argument list, then idle
        tether.Array(data)
        tether.get_global_func("testing.echo")(*range(20))
    ready.wait()
    stop.wait()

threads = [threading.Thread(target=run) for _ in range(100)]
for t in threads:
    t.start()
ready.wait()
print(rss() - before)
stop.set()
for t in threads:
    t.join()
"""


def test_idle_threads_keep_little_after_one_bulk_conversion():
    # Each thread keeps a small buffer of its own; the large one is kept
    # once for the process. (Keeping the large one per thread held about
    # 2 MiB per idle thread.)
    import os
    import subprocess
    import sys

    import pytest

    if not os.path.exists("/proc/self/statm"):
        pytest.skip("reads the resident set size from /proc (Linux)")
    if os.environ.get("TETHER_UNDER_ASAN") == "1":
        pytest.skip("AddressSanitizer keeps freed blocks in quarantine, so the resident set does not show what "
                    "the buffers keep")

    def growth(work):
        out = subprocess.run([sys.executable, "-c", IDLE_THREADS_CHILD, work], capture_output=True, text=True,
                             timeout=120, check=True)
        return int(out.stdout.split()[-1])

    extra = growth("1") - growth("0")
    assert extra < 100 * (1 << 20), f"100 idle threads hold {extra / (1 << 20):.1f} MiB after one conversion each"
