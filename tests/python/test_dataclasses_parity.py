"""tether.dataclasses against apache-tvm-ffi's tvm_ffi.dataclasses.

Each case is one snippet written for tvm_ffi (``import tvm_ffi``); it runs
in a fresh interpreter once with the real tvm_ffi and once with
``import tether as tvm_ffi``, and the printed lines (reprs, equality,
errors with their messages) must be the same. Tying through the new paths
is checked in-process below.
"""

import copy
import gc
import importlib.util
import pickle
import subprocess
import sys
import textwrap
from typing import Optional

import pytest

import tether
import tether.dataclasses as dc
from tether.dataclasses import KW_ONLY, field, py_class

PRELUDE = """
import copy, inspect
from typing import Any, Optional
from tvm_ffi.dataclasses import (py_class, field, KW_ONLY, fields, replace, asdict, astuple,
                                 is_dataclass, init_property)
def show(f):
    try:
        r = f()
        print("ok", r)
    except Exception as e:
        print(type(e).__name__, str(e).replace(chr(10), "|"))
"""

CASES = {
    "init_defaults_and_errors": """
@py_class("p.P")
class P(tvm_ffi.Object):
    x: int
    y: float = 1.5
    s: str = field(default="a", repr=False)
show(lambda: repr(P(1)))
show(lambda: repr(P(2, 3, "z")))
show(lambda: repr(P(x=4, s="q")))
show(lambda: P())
show(lambda: P(1, 2, "s", 4))
show(lambda: P(1, z=3))
show(lambda: P(1, x=3))
show(lambda: P("a"))
show(lambda: str(inspect.signature(P.__init__)))
""",
    "required_after_default_and_kw_only": """
@py_class("p.Q")
class Q(tvm_ffi.Object):
    a: int = 0
    b: int
    _: KW_ONLY
    c: int
    d: int = field(default=5)
    e: int = field(default=1, kw_only=False)
show(lambda: str(inspect.signature(Q.__init__)))
show(lambda: repr(Q(2, c=3)))
show(lambda: repr(Q(2, 9, 8, c=3)))
show(lambda: Q(1))
show(lambda: [(f.name, f.kw_only, f.init, f.default) for f in fields(Q)])
show(lambda: Q.__match_args__)
@py_class("p.K", kw_only=True)
class K(tvm_ffi.Object):
    a: int
    b: int = field(default=1, kw_only=False)
show(lambda: str(inspect.signature(K.__init__)))
show(lambda: K(1))
""",
    "field_types": """
@py_class("p.Item")
class Item(tvm_ffi.Object):
    v: int = 0
@py_class("p.T")
class T(tvm_ffi.Object):
    l: list[int] = field(default_factory=list)
    d: dict[str, int] = field(default_factory=dict)
    o: Optional[int] = None
    u: int | None = None
    an: Any = None
    it: Optional[Item] = None
    b: bool = False
    f: float = 0.0
    s: str = ""
t = T()
show(lambda: repr(t))
show(lambda: (type(t.l).__name__, type(t.d).__name__))
def set_(name, value):
    def go():
        setattr(t, name, value)
        v = getattr(t, name)
        # Plain values: the containers' own reprs are not part of this comparison.
        return repr(list(v) if type(v).__name__ == "List" else dict(v.items()) if type(v).__name__ == "Dict" else v)
    return go
for name, value in [("l", [1, 2]), ("l", ["x"]), ("d", {"k": 1}), ("d", {"k": "v"}), ("o", 3), ("o", "x"),
                    ("u", None), ("u", 2.5), ("an", "anything"), ("it", Item(3)), ("it", t), ("b", True),
                    ("f", 2), ("s", 3), ("s", None)]:
    show(set_(name, value))
show(lambda: T(l=[1, "a"]))
""",
    "eq_order_hash": """
@py_class("p.E", eq=True, order=True, unsafe_hash=True)
class E(tvm_ffi.Object):
    x: int
    y: str = "a"
    ignored: int = field(default=0, compare=False)
show(lambda: (E(1) == E(1), E(1) == E(1, ignored=5), E(1) != E(2), E(1) == 1))
show(lambda: (E(1) < E(2), E(1, "b") > E(1, "a"), E(1) <= E(1), E(2) >= E(3)))
show(lambda: hash(E(1)) == hash(E(1, ignored=9)))
show(lambda: sorted([E(3), E(1), E(2)]) == [E(1), E(2), E(3)])
@py_class("p.N")
class N(tvm_ffi.Object):
    x: int
show(lambda: (N(1) == N(1), N(1).same_as(N(1))))
@py_class("p.NL", eq=True)
class NL(tvm_ffi.Object):
    items: list[int] = field(default_factory=list)
show(lambda: NL([1, 2]) == NL([1, 2]))
show(lambda: NL.__hash__ is tvm_ffi.Object.__hash__)
""",
    "frozen": """
@py_class("p.F", frozen=True)
class F(tvm_ffi.Object):
    x: int
    derived: int = field(default=0, init=False)
f = F(1)
def assign():
    f.x = 2
show(assign)
show(lambda: repr(replace(f, x=5)))
show(lambda: repr(f))
show(lambda: (type(f).x.set(f, 7), f.x)[1])
@py_class("p.FP", frozen=True)
class FP(tvm_ffi.Object):
    a: int
@py_class("p.MC")
class MC(FP):
    b: int = 0
m = MC(1)
def set_b():
    m.b = 4
    return m.b
show(set_b)
def set_a():
    m.a = 4
show(set_a)
@py_class("p.FF")
class FF(tvm_ffi.Object):
    a: int = field(default=0, frozen=True)
    b: int = 0
ff = FF()
def set_ff():
    ff.a = 1
show(set_ff)
""",
    "init_forms_super_post_init": """
@py_class("p.Base")
class Base(tvm_ffi.Object):
    a: int
    def total(self):
        return self.a
@py_class("p.Child")
class Child(Base):
    b: int = 2
    def total(self):
        return super().total() + self.b
show(lambda: (Child(1).total(), repr(Child(1, 5))))
@py_class("p.UI")
class UI(tvm_ffi.Object):
    a: int
    def __init__(self, v):
        self.a = v * 2
show(lambda: UI(3).a)
@py_class("p.UIS")
class UIS(Base):
    c: int = 0
    def __init__(self, v):
        super().__init__(v)
        self.a = v
        self.c = v + 1
show(lambda: repr(UIS(4)))
@py_class("p.NoInit", init=False)
class NoInit(tvm_ffi.Object):
    a: int
show(lambda: NoInit(3))
@py_class("p.NoInitUser", init=False)
class NoInitUser(tvm_ffi.Object):
    a: int
    def __init__(self):
        self.a = 11
show(lambda: NoInitUser().a)
@py_class("p.Post")
class Post(tvm_ffi.Object):
    a: int
    b: int = field(default=0, init=False)
    def __post_init__(self):
        self.b = self.a + 1
show(lambda: repr(Post(1)))
@py_class("p.IP")
class IP(tvm_ffi.Object):
    a: int
    @init_property
    def twice(self) -> int:
        return self.a * 2
show(lambda: (IP(4).twice, repr(IP(4)), [x.name for x in fields(IP)]))
@py_class("p.OwnRepr")
class OwnRepr(tvm_ffi.Object):
    a: int
    def __repr__(self):
        return "own"
show(lambda: repr(OwnRepr(1)))
""",
    "default_of_the_wrong_type": """
@py_class("p.L")
class L(tvm_ffi.Object):
    v: int = 0
@py_class("p.WithNone")
class WithNone(tvm_ffi.Object):
    o: L = None
show(lambda: WithNone())
show(lambda: repr(WithNone(L())))
""",
    "options_and_helpers": """
show(lambda: py_class("p.Bad", order=True))
show(lambda: py_class("p.Bad2", structural_eq="x"))
show(lambda: field(default=1, default_factory=list))
show(lambda: field(default_factory=3))
show(lambda: field(structural_eq="bogus"))
@py_class("p.H")
class H(tvm_ffi.Object):
    a: int
    l: list[int] = field(default_factory=list)
    m: Any = field(default=None, metadata={"unit": "m"})
h = H(1, [2, 3])
show(lambda: asdict(h))
show(lambda: astuple(h))
show(lambda: asdict(h, dict_factory=list))
show(lambda: (is_dataclass(h), is_dataclass(H), is_dataclass(tvm_ffi.Array([1])), is_dataclass(1)))
show(lambda: fields(1))
show(lambda: asdict(H))
show(lambda: fields(H)[2].metadata)
show(lambda: repr(replace(h, a=9)))
show(lambda: replace(h, a=9).l.same_as(h.l))
show(lambda: copy.copy(h).l.same_as(h.l))
show(lambda: copy.deepcopy(h).l.same_as(h.l))
show(lambda: repr(copy.deepcopy(h)))
@py_class("p.Tree", structural_eq="tree")
class Tree(tvm_ffi.Object):
    v: int
    span: int = field(default=0, structural_eq="ignore")
se = tvm_ffi.get_global_func("ffi.StructuralEqual")
show(lambda: (se(Tree(1, 5), Tree(1, 6), False, False), se(Tree(1), Tree(2), False, False)))
@py_class("p.Single", structural_eq="singleton")
class Single(tvm_ffi.Object):
    v: int
show(lambda: se(Single(1), Single(1), False, False))
""",
}


def _run(module: str, body: str) -> str:
    # Code written for tvm_ffi, run on tether: the module names resolve to tether.
    alias = ("import sys, tether\nsys.modules['tvm_ffi'] = tether\n"
             "sys.modules['tvm_ffi.dataclasses'] = tether.dataclasses\n") if module == "tether" else ""
    source = alias + "import tvm_ffi\n" + PRELUDE + textwrap.dedent(body)
    out = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_behaviour_as_tvm_ffi(name):
    # Both runs are subprocesses; the peer is looked for, not imported here
    # (see plugins.upstream_package_dir).
    if importlib.util.find_spec("tvm_ffi") is None:
        pytest.skip("apache-tvm-ffi (the peer) is not installed")
    expected = _run("tvm_ffi", CASES[name])
    got = _run("tether", CASES[name])
    assert got.splitlines() == expected.splitlines()


def test_c_class_over_a_cxx_type_matches_tvm_ffi(tmp_path):
    """The same C++ source (apache-tvm-ffi's ObjectDef with defaults,
    keyword-only, read-only and init=False fields; no explicit init, so the
    runtime's ffi._RegisterFFIInit makes __ffi_init__) built once against
    libtvm_ffi and once against libtether_core."""
    import os

    from plugins import build_upstream_kernel, cxx_compiler, upstream_include_dir, upstream_package_dir

    here = os.path.dirname(os.path.abspath(__file__))
    source = os.path.join(here, "native", "dc_point.cc")
    ours = build_upstream_kernel(source, tmp_path / "libdc_point.so")
    # The peer's library directory, found without importing the peer here
    # (both runs are subprocesses; see plugins.upstream_package_dir).
    peer_dir = os.path.join(upstream_package_dir(), "lib")
    theirs = str(tmp_path / "libdc_point_peer.so")
    subprocess.run([cxx_compiler(), "-std=c++17", "-O1", "-shared", "-fPIC", "-o", theirs, source,
                    f"-I{upstream_include_dir()}", f"-L{peer_dir}", "-ltvm_ffi", f"-Wl,-rpath,{peer_dir}"], check=True)
    driver = os.path.join(here, "native", "c_class_driver.py")
    run = lambda mod, lib: subprocess.run([sys.executable, driver, mod, lib], capture_output=True, text=True,
                                          timeout=120)
    expected, got = run("tvm_ffi", theirs), run("tether", ours)
    assert expected.returncode == 0 and got.returncode == 0, expected.stderr + got.stderr
    assert "ok testing.dc.Point(x=1, y=1.5, label=\"p\")" in expected.stdout
    assert got.stdout.splitlines() == expected.stdout.splitlines()


def test_c_class_over_cxx_objects_in_process(tmp_path):
    """c_class in this process over objects the C++ library allocates with
    its own ``make_object`` (not through tether's allocator registry, so
    their wrappers are not tied: the same native object, a fresh wrapper
    per return)."""
    from plugins import build_upstream_kernel
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    lib = build_upstream_kernel(os.path.join(here, "native", "dc_point.cc"), tmp_path / "libdc_point_inproc.so")
    tether.load_module(lib)

    @dc.c_class("testing.dc.Point", eq=True)
    class Point(tether.Object):
        x: int
        label: str

    p = Point(1)
    back = tether.testing.echo(p)
    assert type(back) is Point and back.same_as(p) and back == p
    holder = tether.List([p])
    assert holder[0].same_as(p) and holder[0].label == "p" and holder[0].x == 1
    q = dc.replace(p, x=2)
    assert (q.x, p.x, q.label) == (2, 1, "p") and not q.same_as(p)



# ---------------------------------------------------------------- tying


@py_class("tests.dcp.Leaf")
class Leaf(tether.Object):
    v: int = 0


@py_class("tests.dcp.Node", eq=True)
class Node(tether.Object):
    leaf: Leaf
    other: Optional[Leaf] = None
    items: list = field(default_factory=list)
    name: str = ""
    _: KW_ONLY
    link: "Optional[Node]" = None


def test_field_reads_are_tied_and_revived():
    n = Node(Leaf(1))
    assert n.leaf is n.leaf
    first = id(n.leaf)
    gc.collect()
    assert id(n.leaf) == first
    assert not hasattr(n, "__dict__") and not hasattr(n.leaf, "__dict__")


def test_replace_keeps_unchanged_fields_tied():
    leaf = Leaf(2)
    n = Node(leaf, leaf)
    r = dc.replace(n, name="r")
    assert r is not n and r.leaf is leaf and r.other is leaf
    assert copy.copy(n).leaf is leaf


def test_deepcopy_preserves_sharing_and_cycles():
    leaf = Leaf(3)
    n = Node(leaf, leaf)
    n.link = n  # a cycle through the object itself
    d = copy.deepcopy(n)
    assert d is not n and d.leaf is not leaf
    assert d.leaf is d.other  # one copy of the shared leaf, one wrapper
    assert d.link is d
    assert d.leaf.v == 3


def test_pickle_round_trip_keeps_sharing_and_cycles():
    leaf = Leaf(4)
    n = Node(leaf, leaf, [leaf], "p")
    n.link = n
    back = pickle.loads(pickle.dumps(n))
    assert back.name == "p" and back.leaf.v == 4
    assert back.leaf is back.other
    assert back.link is back
    assert back.items[0] is back.leaf


def test_zero_argument_super_and_class_identity():
    class Mixin:
        def describe(self):
            return "mixin"

    @py_class("tests.dcp.Sub")
    class Sub(Leaf, Mixin):
        w: int = 1

        def describe(self):
            return "sub+" + super().describe()

    cls_before = Sub
    s = Sub(1, 2)
    assert type(s) is cls_before and s.describe() == "sub+mixin"
    assert tether.testing.echo(s) is s


def test_enum_variants_are_singletons():
    class Color(dc.Enum, type_key="tests.dcp.Color"):
        red = dc.auto()
        green = dc.auto()

    assert [c.name for c in Color] == ["red", "green"]
    assert Color("green") is Color.green and Color(0) is Color.red and Color.get("red") is Color.red
    assert tether.testing.echo(Color.red) is Color.red
    with pytest.raises(ValueError, match="'blue' is not a valid Color"):
        Color("blue")
    label = Color.def_attr("label", default="?")
    label[Color.red] = "R"
    assert (label[Color.red], label[Color.green], Color.red in label, Color.green in label) == ("R", "?", True, False)

    class Level(dc.IntEnum, type_key="tests.dcp.Level"):
        low = 1
        high = 10

    assert Level(10) is Level.high and Level.high.value == 10 and Level.low == 1 and repr(Level.low) == "Level.low"

    class Mode(dc.StrEnum, type_key="tests.dcp.Mode"):
        fast = "f"
        slow = dc.entry(value="s")

    assert Mode("s") is Mode.slow and Mode.fast.value == "f" and str(Mode.fast) == "f"
