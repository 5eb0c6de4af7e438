"""The native fast paths behave as the general ones they shortcut.

Field reads (the descriptors' C read slot, in-place reads of Any, int and
object fields), ``a[i]`` on Arrays and Lists (the native subscript slot),
calls and callbacks with their arguments in inline buffers (up to 8, more
spilling to the heap), callbacks' raw conversions and their GIL hand-back,
and constructors skipping identity conversions: each is checked on the
values, identities and errors the slow path gives.
"""

import os
from typing import Any, Optional

import numpy
import pytest

import tether
from tether.dataclasses import Object, py_class
from tether.dataclasses.field_property import FieldProperty

echo = tether.get_global_func("testing.echo")
apply_n = tether.get_global_func("testing.apply_n")


@py_class("tests.fast.Leaf")
class Leaf(Object):
    v: int = 0


@py_class("tests.fast.Node")
class Node(Object):
    i: int = 0
    f: float = 0.0
    s: str = ""
    b: bool = False
    a: Any = None
    leaf: Optional[Leaf] = None


@py_class("tests.fast.Derived")
class Derived(Node):
    extra: int = 7


def returned_type(value):
    """The type a value comes back from the FFI as: strings and bytes
    beyond 7 bytes (heap objects) as tether.core.String/Bytes."""
    if isinstance(value, str) and len(value.encode()) > 7:
        return tether.core.String
    if isinstance(value, bytes) and len(value) > 7:
        return tether.core.Bytes
    return type(value)


def test_field_reads_return_each_kind_of_value():
    leaf = Leaf(3)
    n = Node(-5, 2.5, "text that is longer than a small string", True, leaf, leaf)
    assert (n.i, n.f, n.s, n.b) == (-5, 2.5, "text that is longer than a small string", True)
    assert n.a is leaf and n.leaf is leaf and n.a is n.leaf
    opaque = object()
    for value in (None, 1 << 40, 1.5, "s", b"bytes", "a string longer than seven bytes", b"bytes longer than seven",
                  [1, 2], leaf, opaque):
        n.a = value
        got = n.a
        if isinstance(value, list):
            assert list(got) == value
        else:
            assert type(got) is returned_type(value) and (got == value or got is value)
    assert n.a is opaque
    n.leaf = None
    assert n.leaf is None


def test_field_read_revives_a_dead_wrapper_with_the_same_value():
    n = Node(leaf=Leaf(11))
    first = n.leaf
    handle = first.__chandle__()
    del first  # the canonical wrapper dies; the next read revives or rebuilds it
    again = n.leaf
    assert again.v == 11 and again.__chandle__() == handle and n.leaf is again


def test_inherited_field_reads_on_a_subclass_instance():
    d = Derived(1, leaf=Leaf(2))
    assert d.i == 1 and d.leaf.v == 2 and d.extra == 7


def test_field_descriptor_errors_come_from_the_slow_path():
    prop = Node.__dict__["i"]
    assert isinstance(prop, FieldProperty) and prop.__get__(None, Node) is prop
    with pytest.raises(TypeError, match="read on a"):
        prop.__get__(object(), Node)
    with pytest.raises(TypeError, match="belongs to"):
        prop.__get__(Leaf(1), Leaf)
    moved = Node(4)
    echo(moved._move())
    with pytest.raises(ValueError, match="no handle"):
        moved.i


def test_frozen_fields_still_refuse_writes_and_convert_values():
    @py_class("tests.fast.Frozen", frozen=True)
    class Frozen(Object):
        x: int = 0

    f = Frozen(2)
    assert f.x == 2
    with pytest.raises(AttributeError, match="has no setter"):
        f.x = 3
    with pytest.raises(TypeError):
        Node(i="not an int")
    with pytest.raises(TypeError):
        Node().i = "not an int"


def test_constructor_identity_skip_keeps_values_and_subclass_conversions():
    class MyInt(int):
        pass

    n = Node(True, 3, "s", 1)
    assert n.i == 1 and n.f == 3.0 and isinstance(n.f, float) and n.b is True
    m = Node(MyInt(9))
    assert m.i == 9
    with pytest.raises(TypeError, match="field 'f'"):
        Node(1, "x")


@pytest.mark.parametrize("make", [tether.Array, tether.List])
def test_sequence_indexing(make):
    items = [Leaf(i) for i in range(5)]
    seq = make(items + [7, "x"])
    assert seq[0] is items[0] and seq[-3] is items[4] and seq[5] == 7 and seq[6] == "x"
    assert seq[numpy.int64(1)] is items[1]
    assert [x.v for x in seq[1:3]] == [1, 2] and seq.__getitem__(-1) == "x"
    for bad in (7, -8, 1 << 70):
        with pytest.raises(IndexError):
            seq[bad]
    with pytest.raises(IndexError, match=r"Index out of range. size: 7, got index 7"):
        seq[7]
    with pytest.raises(TypeError, match="indices must be integers"):
        seq["0"]


def test_sequence_subclass_keeps_native_indexing_and_an_override_wins():
    class MyArray(tether.Array):
        __slots__ = ()

    class Reversed(tether.Array):
        __slots__ = ()

        def __getitem__(self, i):
            return "overridden"

    a = tether.Array([1, 2, 3])
    a.__class__ = MyArray
    assert a[0] == 1 and a[-1] == 3
    a.__class__ = Reversed
    assert a[0] == "overridden"


def test_moved_sequence_indexing_raises():
    a = tether.Array([1, 2])
    echo(a._move())
    with pytest.raises(ValueError, match="no handle"):
        a[0]


@pytest.mark.parametrize("n", [0, 1, 3, 8, 9, 20])
def test_calls_and_callbacks_with_many_arguments(n):
    leaf = Leaf(5)
    args = tuple(range(n - 1)) + (leaf,) if n else ()
    got = []
    result = apply_n(lambda *a: got.append(a) or len(a), 2, *args)
    assert result == n and got == [args, args]
    if n:
        assert got[0][-1] is leaf
    assert echo(*args) == (args[0] if args else None)


def test_callback_arguments_and_results_of_every_kind():
    leaf, arr, opaque = Leaf(3), tether.Array([Leaf(1)]), object()
    values = [None, True, False, 7, -(1 << 63), 2.5, "text", "a longer string than seven bytes", b"xy",
              leaf, arr, opaque, tether.device("cpu")]
    for v in values:
        got = []
        result = apply_n(lambda x: got.append(x) or x, 1, v)
        assert got[0] == v and result == v and type(got[0]) is returned_type(v) and type(result) is returned_type(v)
    for v in (leaf, arr, opaque):  # wrappers and opaque objects keep their identity
        got = []
        assert apply_n(lambda x: got.append(x) or x, 1, v) is v and got[0] is v
    assert list(apply_n(lambda x: x, 1, [1, 2])) == [1, 2]
    # A wrapper that is not alive in Python reaches the callback revived or new.
    holder = Node(leaf=Leaf(9))
    assert apply_n(lambda x: x.v, 1, holder.leaf) == 9
    # Results the general path handles: a move, containers, errors.
    moved = Leaf(4)
    out = apply_n(lambda: moved._move(), 1)
    assert out.v == 4 and tether._ffi.chandle(moved) == 0
    assert list(apply_n(lambda: [leaf, 1], 1)) == [leaf, 1]

    class Boom(Exception):
        pass

    err = Boom("no")

    def raises(*a):
        raise err

    with pytest.raises(Boom) as info:
        apply_n(raises, 1, leaf)
    assert info.value is err


def test_callbacks_when_native_code_holds_the_gil_or_another_thread_calls(tmp_path):
    from plugins import build_gil_holder

    mod = tether.load_module(build_gil_holder(tmp_path))
    # Native code that took the GIL back itself (PyGILState_Ensure) inside a
    # call made with the GIL released: the callback must not take it again.
    assert mod.call_with_gil_held(lambda x: x + 1, 41) == 42
    # Nested: the callback calls native code that calls back again, both ways.
    assert mod.call_with_gil_held(lambda: apply_n(lambda y: y * 2, 3, 5), ) == 10
    assert apply_n(lambda: mod.call_with_gil_held(lambda: apply_n(lambda: 8, 2)), 2) == 8
    # Callbacks on several threads at once, each on its own native call.

    from thread_failures import run_threads

    def work(i):
        return {apply_n(lambda x: x + i, 3, i) for _ in range(200)}

    assert run_threads([lambda i=i: work(i) for i in range(4)]) == [{0}, {2}, {4}, {6}]


def test_call_argument_conversions_and_errors():
    assert echo(None) is None and echo(True) is True and echo(2.5) == 2.5 and echo(-(1 << 63)) == -(1 << 63)
    assert echo(1 << 64) == 1 << 64 and echo(-(1 << 63) - 1) == -(1 << 63) - 1

    def f(x):
        return x * 2

    g = echo(f)
    assert isinstance(g, tether.Function) and g(21) == 42
    assert echo(print) is not None and echo([].append) is not None


def test_a_type_that_gains_or_loses_dlpack_converts_accordingly():
    arr = numpy.arange(4, dtype="float32")

    class Wrapped:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kw):
            return self.a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    dlpack = Wrapped.__dlpack__
    for _ in range(3):  # the type is remembered as a tensor type after the first
        assert isinstance(echo(Wrapped(arr)), tether.Tensor)
    del Wrapped.__dlpack__
    w = Wrapped(arr)
    # No longer a tensor; with __dlpack_device__ alone it is a device, as
    # for tvm_ffi.
    assert echo(w) == tether.device("cpu", 0)
    Wrapped.__dlpack__ = dlpack
    assert isinstance(echo(Wrapped(arr)), tether.Tensor)

    class Sub(Wrapped):  # remembered, then its base loses __dlpack__
        pass

    assert isinstance(echo(Sub(arr)), tether.Tensor) and isinstance(echo(Sub(arr)), tether.Tensor)
    del Wrapped.__dlpack__
    s = Sub(arr)
    assert echo(s) == tether.device("cpu", 0)
    assert isinstance(echo(arr), tether.Tensor) and echo(3) == 3


def test_a_remembered_dlpack_method_is_looked_up_again_when_it_changes():
    arr = numpy.arange(3, dtype="float32")
    calls = []

    class Slotted:  # no instance dict: its __dlpack__ can be called unbound
        __slots__ = ("a",)

        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kw):
            calls.append("first")
            return self.a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    for _ in range(3):
        assert isinstance(echo(Slotted(arr)), tether.Tensor)
    assert calls == ["first"] * 3

    def second(self, **kw):
        calls.append("second")
        return self.a.__dlpack__(**kw)

    Slotted.__dlpack__ = second
    for _ in range(2):
        assert isinstance(echo(Slotted(arr)), tether.Tensor)
    assert calls[3:] == ["second", "second"]


def test_converted_arguments_are_released_when_a_later_one_fails():
    leaf = Leaf(1)
    before = tether._ffi.use_count(leaf)

    class Bad:
        def __tvm_ffi_value__(self):
            raise KeyError("bad")

    cyclic = []
    cyclic.append(cyclic)
    for _ in range(3):
        with pytest.raises(KeyError):
            echo([leaf], numpy.zeros(2), Bad())
        with pytest.raises(ValueError, match="contains itself"):
            echo([leaf], cyclic)
    assert tether._ffi.use_count(leaf) == before
    # A capsule is consumed by its conversion: a call that also moves an
    # argument converts it once, in the general path.
    cap = numpy.zeros(3).__dlpack__()
    other = Leaf(2)
    t = echo(cap, other._move())
    assert isinstance(t, tether.Tensor) and tether._ffi.chandle(other) != 0


def test_numpy_argument_round_trips_as_a_tensor():
    arr = numpy.arange(6, dtype="float32").reshape(2, 3)
    t = echo(arr)
    assert isinstance(t, tether.Tensor) and t.shape == (2, 3)
    assert numpy.array_equal(numpy.from_dlpack(t), arr)

    class NoTensor:
        pass

    with pytest.raises(TypeError, match="expected a tensor"):
        tether._ffi.tensor_from_dlpack(NoTensor(), 0, False)


def test_numpy_arrays_export_in_the_form_their_flags_allow():
    # A writable ndarray is exported in DLPack's legacy form; a read-only one
    # is refused by from_dlpack and by a call argument alike (a Tensor hands
    # kernels a DLTensor they may write): each conversion follows the
    # array's flag at that moment, also when its type is the one remembered
    # from the call before.
    import sys

    arr = numpy.arange(6, dtype="float32")
    base = sys.getrefcount(arr)
    for writeable in (True, False, True, False):
        arr.flags.writeable = writeable
        for convert in (echo, tether.from_dlpack):
            if not writeable:
                with pytest.raises(BufferError, match="^Cannot export readonly array"):
                    convert(arr)
                continue
            t = convert(arr)
            back = numpy.from_dlpack(t)
            assert back.flags.writeable is writeable and numpy.shares_memory(back, arr)
            assert numpy.array_equal(back, arr)
            del t, back
    assert sys.getrefcount(arr) == base  # each export's reference released once

    class Sub(numpy.ndarray):  # a subclass takes the general (versioned) export
        pass

    sub = numpy.arange(3.0).view(Sub)
    sub.flags.writeable = False
    for _ in range(2):
        for convert in (tether.from_dlpack, echo):
            with pytest.raises(BufferError, match="DLPACK_FLAG_BITMASK_READ_ONLY"):
                convert(sub)


def test_numpy_export_errors_and_legacy_capsules_keep_their_messages():
    echo(numpy.zeros(1))  # ndarray is the remembered tensor type from here
    swapped = numpy.zeros(3, dtype=">f4")
    for _ in range(2):
        with pytest.raises(BufferError, match="native byte order"):
            echo(swapped)
    ro_swapped = numpy.zeros(3, dtype=">f4")
    ro_swapped.flags.writeable = False
    with pytest.raises(BufferError, match="^Cannot export readonly array"):  # read-only is refused first
        echo(ro_swapped)
    with pytest.raises(BufferError, match="^Cannot export readonly array"):
        tether.from_dlpack(ro_swapped)
    cap = numpy.arange(4.0).__dlpack__()
    assert "versioned" not in repr(cap)
    assert numpy.array_equal(numpy.from_dlpack(echo(cap)), numpy.arange(4.0))
    with pytest.raises(ValueError, match="already consumed"):
        echo(cap)


def test_zero_argument_callbacks_return_every_kind_and_raise():
    # No arguments to convert (the frame skips the conversion and leaves
    # its buffer unwritten); results through the raw and the general path.
    leaf = Leaf(2)
    for v in (None, 3, -1.5, True, leaf, "a string longer than seven bytes", b"b"):
        got = apply_n(lambda: v, 3)
        assert got == v and type(got) is returned_type(v)
    assert apply_n(lambda: leaf, 1) is leaf

    def fails():
        raise LookupError("from a callback without arguments")

    for _ in range(2):
        with pytest.raises(LookupError, match="without arguments"):
            apply_n(fails, 1)
    assert apply_n(lambda: 1 << 40, 1) == 1 << 40
    assert apply_n(lambda: 1 << 70, 1) == 1 << 70
    cyclic = []
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match="contains itself"):
        apply_n(lambda: cyclic, 1)


def test_numpy_arguments_among_others_and_after_a_failing_argument():
    import sys

    a, b = numpy.arange(4.0), numpy.arange(3, dtype="int32")
    base_a, base_b = sys.getrefcount(a), sys.getrefcount(b)
    leaf = Leaf(1)
    cyclic = []
    cyclic.append(cyclic)
    f = tether.get_global_func("testing.apply_n")
    for _ in range(3):  # the first call remembers ndarray, the rest take the fast path
        seen = []
        f(lambda *xs: seen.append(xs), 1, a, 2, leaf, b)
        x, two, got_leaf, y = seen[0]
        assert two == 2 and got_leaf is leaf
        assert numpy.array_equal(numpy.from_dlpack(x), a) and numpy.array_equal(numpy.from_dlpack(y), b)
        del seen, x, y
        with pytest.raises(ValueError, match="contains itself"):
            echo(a, b, cyclic)  # converted arrays are released when a later argument fails
    assert (sys.getrefcount(a), sys.getrefcount(b)) == (base_a, base_b)


def test_release_gil_decides_whether_native_code_runs_with_the_gil(tmp_path):
    from plugins import build_gil_holder

    mod = tether.load_module(build_gil_holder(tmp_path))
    gil_held = mod.gil_held
    assert gil_held.release_gil is True  # TVM-FFI's default
    assert gil_held() is False  # the GIL is given away during the call
    gil_held.release_gil = False
    try:
        assert gil_held.release_gil is False and gil_held() is True
        assert tether.get_global_func("testing.apply_n")(lambda: mod.gil_held(), 1) is True
        # Callbacks from a call that kept the GIL run on the held GIL.
        hold = mod.call_with_gil_held
        hold.release_gil = False
        assert hold(lambda x: x * 3, 5) == 15
        # Integers set it by truth, as tvm_ffi's property does; others raise.
        gil_held.release_gil = 1
        assert gil_held.release_gil is True
        gil_held.release_gil = numpy.int64(0)
        assert gil_held.release_gil is False
        with pytest.raises(TypeError, match="release_gil takes a bool or an int, not str"):
            gil_held.release_gil = "no"
        with pytest.raises(TypeError, match="not NoneType"):
            gil_held.release_gil = None
        with pytest.raises(TypeError, match="cannot be deleted"):
            del gil_held.release_gil
        assert gil_held.release_gil is False
        assert mod.gil_held is gil_held  # tied: the setting stays with the wrapper
    finally:
        gil_held.release_gil = True
    assert gil_held() is False


def test_release_gil_default_follows_tvm_ffis_environment_variable():
    import subprocess
    import sys

    code = (
        "import tether; f = tether.get_global_func('testing.echo');"
        "print(f.release_gil, tether.get_global_func('testing.apply_n').release_gil)"
    )
    env = dict(os.environ, TVM_FFI_RELEASE_GIL_BY_DEFAULT="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
    env["TVM_FFI_RELEASE_GIL_BY_DEFAULT"] = "1"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True"]


@py_class("tests.fast.Typed")
class Typed(Object):
    leaf: Optional[Leaf] = None
    obj: Optional[Object] = None
    req: Leaf = Leaf(0)


@py_class("tests.fast.SubLeaf")
class SubLeaf(Leaf):
    w: int = 0


def test_object_field_writes_skip_the_converter_only_for_what_it_returns_unchanged():
    leaf, sub = Leaf(1), SubLeaf(2, 3)
    t = Typed(leaf, sub, leaf)
    assert t.leaf is leaf and t.obj is sub and t.req is leaf
    t.leaf = sub  # a subclass instance passes as it is
    assert t.leaf is sub
    t.leaf = None
    assert t.leaf is None
    # What the converter refuses is still refused, with its message.
    for bad in (5, "x", 1.5, Typed()):
        with pytest.raises(TypeError):
            t.leaf = bad
        assert t.leaf is None
    with pytest.raises(TypeError):
        t.req = Typed()
    # None is not a Leaf: a non-Optional field refuses it, as its converter does.
    with pytest.raises(TypeError):
        t.req = None
    assert t.req is leaf
    # The JSON graph loader writes through the same setters.
    back = tether.serialization.from_json_graph_str(tether.serialization.to_json_graph_str(Typed(leaf, sub, leaf)))
    assert type(back.leaf) is Leaf and type(back.obj) is SubLeaf and back.obj.w == 3 and back.leaf.v == 1
