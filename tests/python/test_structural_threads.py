"""Structural hashing, equality and serialization while another thread
reassigns the fields being walked.

Structural calls release the GIL, so a Python thread may replace a field's
value (dropping the only reference to the old one) while the walk is inside
it. The walks hold a reference to every value they look into, so nothing
they read is freed under them: these runs must end, without a crash, with
answers that are each some state the value was in. Each run is a child
process with a watchdog (faulthandler dumps every thread's stack and the
process exits after a bounded time), so a crash or a hang fails the test
with the stacks instead of taking the suite down.
"""

import os
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    import faulthandler, sys, threading, time
    faulthandler.dump_traceback_later({deadline}, exit=True)
    import tether
    from tether.dataclasses import Object, py_class
    from typing import Any

    @py_class("tests.threads.Root")
    class Root(Object):
        x: Any = None

    def chain(n):
        return tether.Array([tether.Array([i, str(i) * 3, float(i)]) for i in range(n)])

    stop = threading.Event()
    failures = []
    {scenario}

    t = threading.Thread(target=mutate)
    t.start()
    end = time.monotonic() + {seconds}
    runs = 0
    while time.monotonic() < end:
        {operation}
        runs += 1
    stop.set()
    t.join()
    assert not failures, failures
    print("runs", runs)
    """
)

# What the other thread does. "deep": it replaces the one field of a root
# holding a 20,000-item Array, so walks spend long inside freed-to-be
# values. "wide": it replaces, one after another, the fields of 2,000 small
# objects the walk passes through, so the read of a field (load, then take
# a reference) keeps meeting the write that frees what the field held.
SCENARIOS = {
    "deep": """
    root, twin = Root(chain(20000)), Root(chain(20000))

    def mutate():
        try:
            k = 0
            while not stop.is_set():
                root.x = chain(20000 if k % 2 else 200)
                twin.x = chain(20000 if k % 3 else 200)
                k += 1
        except BaseException as e:
            failures.append(e)
    """,
    "wide": """
    nodes = [Root(tether.Array([i, str(i) * 3])) for i in range(2000)]
    twins = [Root(tether.Array([i, str(i) * 3])) for i in range(2000)]
    root, twin = Root(tether.Array(nodes)), Root(tether.Array(twins))

    def mutate():
        try:
            k = 0
            while not stop.is_set():
                for a, b in zip(nodes, twins):
                    a.x = tether.Array([k, str(k) * 3])
                    b.x = Root(k) if k % 2 else tether.Array([k])
                k += 1
        except BaseException as e:
            failures.append(e)
    """,
}

OPERATIONS = {
    "hash": "tether.structural_hash(root)",
    "equal": "assert tether.structural_equal(root, twin) in (True, False)",
    "json": "tether.serialization.to_json_graph_str(root)",
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
@pytest.mark.parametrize("operation", sorted(OPERATIONS))
@pytest.mark.parametrize("fast_path", ["1", "0"])
def test_walks_survive_fields_reassigned_by_another_thread(scenario, operation, fast_path):
    code = CHILD.format(
        deadline=120, seconds=1.5, operation=OPERATIONS[operation], scenario=textwrap.dedent(SCENARIOS[scenario]).strip("\n")
    )
    env = dict(os.environ, TETHER_STRUCTURAL_FAST_PATH=fast_path)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=180)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-6000:]}"
    assert int(proc.stdout.split()[-1]) > 0
