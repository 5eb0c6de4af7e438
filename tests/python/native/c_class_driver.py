"""Driver of test_dataclasses_parity's c_class case: ``python
c_class_driver.py tvm_ffi|tether <library>`` loads the library built from
dc_point.cc and prints what code written for tvm_ffi sees of its type."""
import sys, inspect
mod = sys.argv[1]
if mod == "tether":
    import tether; sys.modules["tvm_ffi"] = tether; sys.modules["tvm_ffi.dataclasses"] = tether.dataclasses
import tvm_ffi, copy
from tvm_ffi.dataclasses import c_class, fields, replace
tvm_ffi.load_module(sys.argv[2])
def show(f):
    try: print("ok", f())
    except Exception as e: print(type(e).__name__, str(e).replace(chr(10), "|"))
@c_class("testing.dc.Point", eq=True, order=True, unsafe_hash=True)
class Point(tvm_ffi.Object):
    x: int
    y: float
    label: str
    hidden: int
p = Point(1)
show(lambda: repr(p))
show(lambda: str(inspect.signature(Point.__init__)))
show(lambda: repr(Point(2, 3.0, label="q")))
show(lambda: Point())
show(lambda: Point(1, label=3))
show(lambda: Point(1, hidden=3))
show(lambda: (p == Point(1), p < Point(2), hash(p) == hash(Point(1))))
def s(): p.label = "z"
show(s)
def s2(): p.x = 5; return p.x
show(s2)
show(lambda: [(f.name, f.init, f.kw_only, f.repr, f.frozen) for f in fields(Point)])
show(lambda: repr(replace(p, label="r")))
show(lambda: repr(copy.copy(p)))
show(lambda: repr(copy.deepcopy(p)))
show(lambda: Point.__match_args__)
