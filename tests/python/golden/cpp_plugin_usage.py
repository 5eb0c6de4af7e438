# Type-checked with mypy --strict against the stubs tether-stubgen writes
# for native/cpp_plugin.cc (test_stubgen.py); never run.
import tether

import cpp_plugin


def total(points: list[cpp_plugin.Point]) -> int:
    return cpp_plugin.sum_x(points)


p = cpp_plugin.make_point(3, 4, "p", None)
x: int = p.x
p.label = "q"
n: int = p.norm2()
p.shift(2)
s: str = p.label
q = cpp_plugin.Point(1, 2, "r")
print(total([p, q]), x, n, s, cpp_plugin.sum_x(tether.Array([p])))
