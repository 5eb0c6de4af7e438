"""Releasing FFI values that own Python state never waits for the GIL.

A long ``str``/``bytes`` crosses as a String lending the Python object's
buffer; an ``ffi.OpaquePyObject`` and a Python callback's Function hold a
Python object too. Native threads drop such values while the thread that
holds the GIL waits for them (a join, a lock): the release is parked and
done when the GIL is next held, so these calls finish, and the Python
objects are released once the interpreter runs again. Each run is a child
process with a watchdog, so a hang fails with every thread's stack.
"""

import os
import subprocess
import sys
import textwrap

import pytest

from plugins import build_shared

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = textwrap.dedent(
    """
    import faulthandler, gc, sys
    faulthandler.dump_traceback_later(60, exit=True)
    import tether
    mod = tether.load_module(sys.argv[1])
    keep = mod.keep
    for name in ("drop_kept_on_thread", "drop_kept_under_lock"):
        drop = getattr(mod, name)
        drop.release_gil = {release_gil}
        for label, make in (
            ("lent str", lambda: "s" * 4096),
            ("lent bytes", lambda: b"b" * 4096),
            ("opaque", lambda: object()),
            ("callback", lambda: (lambda: None)),
        ):
            for _ in range(20):
                v = make()
                base = sys.getrefcount(v)
                obj = tether.convert(v)
                keep(obj)
                del obj  # the native side holds the last reference
                assert drop() is True, (name, label)
                # The release, parked or not, is done once the GIL is held again.
                tether.get_global_func("testing.nop")()
                assert sys.getrefcount(v) == base, (name, label, base, sys.getrefcount(v))
    print("ok")
    """
)


@pytest.mark.parametrize("release_gil", [False, True])
def test_native_threads_drop_values_while_python_waits(tmp_path, release_gil):
    lib = build_shared(os.path.join(HERE, "native", "release_threads.c"), tmp_path / "librelease_threads.so")
    code = CHILD.format(release_gil=release_gil)
    proc = subprocess.run([sys.executable, "-c", code, lib], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "ok" in proc.stdout, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr[-6000:]}"
