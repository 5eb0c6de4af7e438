"""Wrapper tying in a few lines: run with `make demo`."""

import gc

import tether
import tether.dataclasses as dc
from tether.dataclasses import py_class


@py_class("demo.Inner")
class Inner(dc.Object):
    value: int = 0


@py_class("demo.Outer")
class Outer(dc.Object):
    x: Inner


a = Outer(Inner(42))
print("a =", a)
print("a.x is a.x:", a.x is a.x)

echo = tether.get_global_func("testing.echo")
x = a.x
print("echo(x) is x:", echo(x) is x)

first = id(a.x)
del x
gc.collect()
print("id(a.x) survives drop and re-fetch:", id(a.x) == first)
print("ids over 2000 re-fetches:", len({id(a.x) for _ in range(2000)}))
