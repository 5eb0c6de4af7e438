"""Tying under free threading: 16 threads for 20 seconds (TETHER_STRESS_SECONDS
to change it) of mixed field reads, writes, drops, moves and callbacks, with
identity checked throughout, and of structural hashing, equality and
serialization of nodes whose fields other threads reassign meanwhile, lent
strings written and read back across threads, and Arrays converted from a
list other threads mutate. Run by `make test-freethreaded` on a
free-threaded CPython and by `make test-tsan` under ThreadSanitizer; it also
runs (serialised by the GIL) on a normal one. A watchdog dumps every
thread's stack and fails the run when it does not end in time."""

import faulthandler
import gc
import os
import random
import sys
import threading
import time
import traceback
from typing import Any

import tether
import tether.dataclasses as dc
from tether.dataclasses import py_class

THREADS = 16
SECONDS = float(os.environ.get("TETHER_STRESS_SECONDS", "20"))
# Time the threads get to stop once told to, beyond SECONDS (generous: a
# ThreadSanitizer build runs many times slower).
GRACE = float(os.environ.get("TETHER_STRESS_GRACE", "300"))


@py_class("stress.Leaf")
class Leaf(dc.Object):
    v: int = 0


@py_class("stress.Node")
class Node(dc.Object):
    x: Leaf
    other: Any = None


echo = tether.get_global_func("testing.echo")
apply_n = tether.get_global_func("testing.apply_n")
shared = [Node(Leaf(i)) for i in range(8)]
# Mutated by some threads while others convert it (tether.Array(plist)).
plist = list(range(64))
stop = threading.Event()
failures = []
counts = [0] * THREADS


def worker(k: int) -> None:
    rng = random.Random(k)
    own = Node(Leaf(-k))  # thread-private: its identity can be checked exactly
    first = id(own.x)
    n = 0
    op = None
    try:
        while not stop.is_set():
            op = rng.randrange(11)
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
            elif op == 7:  # structural walks over fields other threads reassign
                w = rng.randrange(3)
                if w == 0:
                    assert isinstance(tether.structural_hash(h), int), "structural_hash"
                elif w == 1:
                    other = shared[rng.randrange(len(shared))]
                    assert tether.structural_equal(h, other) in (True, False), "structural_equal"
                else:
                    assert "stress.Node" in tether.serialization.to_json_graph_str(h), "to_json_graph_str"
            elif op == 8:  # lent strings written by one thread, read and dropped by others
                n_chars = rng.randrange(400, 3000)
                h.other = "s" * n_chars if rng.randrange(2) else b"b" * n_chars
                v = h.other
                if v is not None:
                    assert isinstance(v, (str, bytes)) and v == v[:1] * len(v), "torn lent string"
                if rng.randrange(4) == 0:
                    h.other = None
            elif op == 9:  # a list mutated while other threads convert it
                if rng.randrange(2):
                    plist.append(rng.randrange(1000))
                    try:
                        plist.pop(0)
                    except IndexError:
                        pass
                else:
                    arr = tether.Array(plist)
                    assert all(isinstance(x, int) for x in arr), "Array(list) item"
            elif op == 10:  # a Node of a fresh subtree, then dropped
                h.x = Leaf(n)
            else:  # drops and collections
                a = h.x
                del a
                if rng.randrange(50) == 0:
                    gc.collect()
            n += 1
    except Exception as e:  # reported by the main thread
        failures.append(f"thread {k}, operation {op} after {n}: {type(e).__name__}: {e}\n"
                        + "".join(traceback.format_exception(e)[-6:]))
        stop.set()
    counts[k] = n


def main() -> int:
    gil = getattr(sys, "_is_gil_enabled", lambda: True)()
    # A hang (a deadlock, a thread that never sees `stop`) dumps every
    # thread's stack and ends the process with a failure.
    faulthandler.dump_traceback_later(SECONDS + GRACE, exit=True)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(THREADS)]
    t0 = time.time()
    for t in threads:
        t.start()
    time.sleep(SECONDS)
    stop.set()
    for t in threads:
        t.join()
    faulthandler.cancel_dump_traceback_later()
    elapsed = time.time() - t0
    print(f"GIL {'enabled' if gil else 'disabled'}: {THREADS} threads, {elapsed:.1f} s, "
          f"{sum(counts)} operations, {len(failures)} failures")
    for f in failures[:10]:
        print(f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
