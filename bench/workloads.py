"""The operations the benchmark times, built the same way on each library.

A `Library` wraps one FFI library (tether or the peer, apache-tvm-ffi) and
builds, for every operation of the benchmark design, a zero-argument
callable that runs the operation `n` times. Both libraries get the same
Python code; only the module (`tether` or `tvm_ffi`) differs. `floors()`
gives the same operations on plain Python objects.
"""

from __future__ import annotations

import os
import subprocess
import sys
import typing
from dataclasses import dataclass
from typing import Callable, Dict, Optional

ARRAY_LEN = 64
DEPTHS = (1, 3, 5)
WIDTHS = (1, 8, 32)
CALL_ARGS = (0, 1, 3, 8)
CALLBACK_ARGS = (0, 1, 3)

Runner = Callable[[int], None]


@dataclass
class Library:
    name: str  # "tether" or "peer"
    mod: typing.Any  # the imported package
    py_class: Callable
    base: type  # the py_class base class
    include_dir: str
    lib_dir: str
    lib_name: str  # for -l

    @staticmethod
    def tether() -> "Library":
        import tether
        import tether.dataclasses as dc
        from tether import config

        return Library("tether", tether, dc.py_class, dc.Object, config.includedir(), config.libdir(), "tether_core")

    @staticmethod
    def peer() -> "Library":
        import tvm_ffi
        from tvm_ffi import libinfo
        from tvm_ffi.dataclasses import py_class

        lib = libinfo.find_libtvm_ffi()
        return Library(
            "peer", tvm_ffi, py_class, tvm_ffi.Object, libinfo.find_include_path(), os.path.dirname(lib), "tvm_ffi"
        )

    # ---- types -----------------------------------------------------------

    def node_class(self) -> type:
        """A py_class with an int and an object field, for chains."""
        ns = {"__annotations__": {"v": int, "x": typing.Any}, "v": 0, "x": None}
        return self.py_class(f"bench.{self.name}.Node")(type("Node", (self.base,), ns))

    def wide_class(self, width: int) -> type:
        ns = {"__annotations__": {f"f{i}": int for i in range(width)}}
        return self.py_class(f"bench.{self.name}.Wide{width}")(type(f"Wide{width}", (self.base,), ns))

    # ---- native loops ----------------------------------------------------

    def native_module(self, build_dir: str, peer_include: str):
        """Compile bench/native/loops.cc against TVM-FFI's headers, link it to
        this library and load it with this library's `load_module`."""
        src = os.path.join(os.path.dirname(__file__), "native", "loops.cc")
        out = os.path.join(build_dir, f"loops_{self.name}.so")
        cmd = [
            os.environ.get("CXX", "c++"), "-std=c++17", "-O2", "-shared", "-fPIC",
            f"-I{peer_include}", src, f"-L{self.lib_dir}", f"-l{self.lib_name}",
            f"-Wl,-rpath,{self.lib_dir}", "-o", out,
        ]
        subprocess.run(cmd, check=True)
        return self.mod.load_module(out)


def _chain(cls: type, depth: int):
    root = cls(0, None)
    node = root
    for _ in range(depth):
        node.x = cls(0, None)
        node = node.x
    return root


def operations(lib: Library, native) -> Dict[str, Runner]:
    """Every timed operation for `lib`, by name."""
    ops: Dict[str, Runner] = {}
    Node = lib.node_class()

    for depth in DEPTHS:
        root = _chain(Node, depth)
        keep = [root]
        node = root
        for _ in range(depth):
            node = node.x
            keep.append(node)  # every wrapper on the chain stays alive
        expr = "root" + ".x" * depth
        ops[f"attr_hit.depth{depth}"] = _loop(expr, {"root": root, "_keep": keep})
        churn_root = _chain(Node, depth)
        ops[f"attr_churn.depth{depth}"] = _loop(expr, {"root": churn_root})

    for width in WIDTHS:
        Wide = lib.wide_class(width)
        args = tuple(range(width))
        ops[f"create.width{width}"] = _loop("Wide(*args)", {"Wide": Wide, "args": args})
    for depth in DEPTHS:
        ops[f"create.nested_depth{depth}"] = _loop("chain(Node, depth)", {"chain": _chain, "Node": Node, "depth": depth})

    echo = lib.mod.get_global_func("testing.echo")
    obj = Node(1, None)
    for k in CALL_ARGS:
        ops[f"call.args{k}"] = _loop("echo(*args)", {"echo": echo, "args": (1,) * k})
    ops["call.object"] = _loop("echo(obj)", {"echo": echo, "obj": obj})
    try:
        import numpy

        arr = numpy.zeros(16, dtype="float32")
        ops["call.numpy"] = _loop("echo(arr)", {"echo": echo, "arr": arr})
    except ImportError:  # NumPy is optional for the benchmark
        pass

    loop = native.callback_loop
    for k in CALLBACK_ARGS:
        ops[f"callback.args{k}"] = _native(loop, lambda *a: None, k, obj)
    ops["callback.identity"] = _native(loop, lambda x: x, 1, obj)

    objs = lib.mod.convert([Node(i, None) for i in range(ARRAY_LEN)])
    obj_keep = list(objs)
    ints = lib.mod.convert(list(range(ARRAY_LEN)))
    index = f"a[{ARRAY_LEN // 2}]"
    ops["array.obj_hit"] = _loop(index, {"a": objs, "_keep": obj_keep})
    ops["array.obj_churn"] = _loop(index, {"a": lib.mod.convert([Node(i, None) for i in range(ARRAY_LEN)])})
    ops["array.int"] = _loop(index, {"a": ints})

    # Errors as control flow: a native raise caught in Python, and a Python
    # raise inside a callback caught by native code and raised again.
    raise_error = lib.mod.get_global_func("testing.test_raise_error")
    ops["error.native_raise"] = _raise_loop(raise_error, ("ValueError", "bench"), ValueError)
    apply = lib.mod.get_global_func("testing.apply")
    ops["error.callback_raise"] = _raise_loop(apply, (lib.mod.convert(_fail),), ValueError)

    make = native.make_object_loop
    ops["native.make_object.small"] = lambda n: make(n, False)
    ops["native.make_object.wide"] = lambda n: make(n, True)
    return ops


def floors() -> Dict[str, Runner]:
    """The same shapes of operation on plain CPython objects."""

    class Slot:
        __slots__ = ("v", "x")

        def __init__(self, v=0, x=None):
            self.v, self.x = v, x

    def chain(depth):
        root = node = Slot()
        for _ in range(depth):
            node.x = Slot()
            node = node.x
        return root

    out: Dict[str, Runner] = {}
    for depth in DEPTHS:
        expr = "root" + ".x" * depth
        out[f"attr_hit.depth{depth}"] = out[f"attr_churn.depth{depth}"] = _loop(expr, {"root": chain(depth)})
        out[f"create.nested_depth{depth}"] = _loop("chain(depth)", {"chain": chain, "depth": depth})
    for width in WIDTHS:
        cls = type(f"W{width}", (), {"__slots__": tuple(f"f{i}" for i in range(width))})
        out[f"create.width{width}"] = _loop("cls()", {"cls": cls})
    builtin_calls = {0: (tuple, ()), 1: (abs, (1,)), 3: (max, (1, 1, 1)), 8: (max, (1,) * 8)}
    for k in CALL_ARGS:
        f, args = builtin_calls[k]
        out[f"call.args{k}"] = _loop("f(*args)", {"f": f, "args": args})
    out["call.object"] = out["call.numpy"] = _loop("f(o)", {"f": id, "o": Slot()})
    lst = list(range(ARRAY_LEN))
    for op in ("array.obj_hit", "array.obj_churn", "array.int"):
        out[op] = _loop(f"a[{ARRAY_LEN // 2}]", {"a": lst})
    out["error.native_raise"] = _raise_loop(_fail, (), ValueError)
    out["error.callback_raise"] = _raise_loop(lambda f: f(), (_fail,), ValueError)
    return out


def _fail(*_args):
    raise ValueError("bench")


def _raise_loop(func, args: tuple, exc: type) -> Runner:
    """A function calling `func(*args)` n times, catching the `exc` each raises."""

    def run(n: int) -> None:
        for _ in range(n):
            try:
                func(*args)
            except exc:
                pass

    return run


def _loop(expr: str, env: dict) -> Runner:
    """A function running `expr` n times in a tight loop."""
    code = f"def run(n):\n    for _ in range(n):\n        {expr}\n"
    namespace = dict(env)
    exec(code, namespace)  # a compiled loop per operation, no per-iteration indirection
    return namespace["run"]


def _native(loop, func, nargs: int, arg) -> Runner:
    def run(n: int) -> None:
        loop(func, n, nargs, arg)

    return run


def memory_per_object(lib_name: str, width: int, count: int) -> Optional[float]:
    """Resident bytes per live py_class object of `width` int fields, measured
    in a fresh interpreter so the two libraries do not share an arena.

    The figure is the growth from `count` to `2 * count` live objects: the
    first batch absorbs whatever free heap the process started with (which
    differs between the libraries) and every fixed cost."""
    code = f"""
import gc, os, sys
sys.path.insert(0, {os.path.dirname(__file__)!r})
from workloads import Library
lib = Library.{lib_name}()
Wide = lib.wide_class({width})
args = tuple(range({width}))
keep = [Wide(*args) for _ in range(1000)]
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
first = [Wide(*args) for _ in range({count})]
gc.collect(); before = rss()
objs = [Wide(*args) for _ in range({count})]
gc.collect(); after = rss()
print((after - before) / {count})
"""
    if not os.path.exists("/proc/self/statm"):
        return None
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(r.stdout.strip())
