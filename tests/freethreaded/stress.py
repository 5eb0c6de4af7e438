"""Tying under free threading: 16 threads for 20 seconds (TETHER_STRESS_SECONDS
to change it) of mixed field reads, writes, drops, moves and callbacks, with
identity checked throughout. Run by `make test-freethreaded` on a
free-threaded CPython; it also runs (serialised by the GIL) on a normal one."""

import gc
import os
import random
import sys
import threading
import time

import tether
import tether.dataclasses as dc
from tether.dataclasses import py_class

THREADS = 16
SECONDS = float(os.environ.get("TETHER_STRESS_SECONDS", "20"))


@py_class("stress.Leaf")
class Leaf(dc.Object):
    v: int = 0


@py_class("stress.Node")
class Node(dc.Object):
    x: Leaf
    other: object = None


echo = tether.get_global_func("testing.echo")
apply_n = tether.get_global_func("testing.apply_n")
shared = [Node(Leaf(i)) for i in range(8)]
stop = threading.Event()
failures = []
counts = [0] * THREADS


def worker(k: int) -> None:
    rng = random.Random(k)
    own = Node(Leaf(-k))  # thread-private: its identity can be checked exactly
    first = id(own.x)
    n = 0
    try:
        while not stop.is_set():
            op = rng.randrange(7)
            h = shared[rng.randrange(len(shared))]
            if op == 0:  # read: FFI returns give back the same wrapper
                a = h.x
                assert echo(a) is a, "echo(a) is not a"
            elif op == 1:  # write
                h.x = Leaf(rng.randrange(1000))
            elif op == 2:  # callbacks from native code, with tied arguments
                a = h.x
                assert apply_n(lambda o: o, 5, a) is a, "callback result is not its argument"
            elif op == 3:  # revival: the private object's wrapper keeps its id
                assert id(own.x) == first, "revived wrapper moved"
            elif op == 4:  # a move the callee takes
                p = Leaf(7)
                q = echo(p._move())
                assert p.__chandle__() == 0 and q.v == 7, "move not taken"
            elif op == 5:  # a move the callee leaves
                x = own.x
                echo(0, x._move())
                assert own.x is x, "unconsumed move lost the binding"
                del x
            else:  # drops and collections
                a = h.x
                del a
                if rng.randrange(50) == 0:
                    gc.collect()
            n += 1
    except Exception as e:  # reported by the main thread
        failures.append(f"thread {k}: {type(e).__name__}: {e}")
        stop.set()
    counts[k] = n


def main() -> int:
    gil = getattr(sys, "_is_gil_enabled", lambda: True)()
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(THREADS)]
    t0 = time.time()
    for t in threads:
        t.start()
    time.sleep(SECONDS)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.time() - t0
    print(f"GIL {'enabled' if gil else 'disabled'}: {THREADS} threads, {elapsed:.1f} s, "
          f"{sum(counts)} operations, {len(failures)} failures")
    for f in failures[:10]:
        print(f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
