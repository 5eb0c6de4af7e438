"""Dropping very deep object graphs built from Python does not overflow the
native stack: the core destroys objects iteratively. Each scenario runs in
a child interpreter, so a regression shows as a failed test (the child dies
of a stack overflow) instead of killing the whole pytest run."""

import subprocess
import sys
import textwrap


def run_child(source: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"child exited with {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.stdout


def test_million_nested_arrays_drop():
    out = run_child(
        """
        import gc
        import tether

        a = tether.Array([0])
        for _ in range(1_000_000):
            a = tether.Array([a])
        inner = a
        for _ in range(3):
            inner = inner[0]
        assert isinstance(inner, tether.Array) and len(inner) == 1
        del inner
        del a
        gc.collect()
        print("dropped")
        """
    )
    assert out.strip().endswith("dropped")


def test_py_class_linked_list_drop():
    out = run_child(
        """
        import gc
        from typing import Optional

        import tether.dataclasses as dc
        from tether.dataclasses import py_class

        @py_class("tests.deep.Node")
        class Node(dc.Object):
            value: int = 0
            next: Optional["Node"] = None

        head = None
        for i in range(300_000):
            head = Node(i, head)
        assert head.value == 299_999 and head.next.value == 299_998
        assert head.next.next is head.next.next
        del head
        gc.collect()
        print("dropped")
        """
    )
    assert out.strip().endswith("dropped")


def test_deep_chain_of_mixed_containers_in_process():
    # Shallow enough to be safe even recursively; checks the iterative path
    # keeps values intact and frees everything while pytest keeps running.
    import tether

    depth = 10_000
    x = tether.Array(["leaf"])
    for i in range(depth):
        x = tether.List([x, i]) if i % 2 else tether.Array([x])
    node = x
    for i in reversed(range(depth)):
        node = node[0]
    assert list(node) == ["leaf"]
    del node, x
