"""Python ints beyond int64 cross as ``ffi.BigInt`` on every path and come
back as plain ints; the classes of DataType, Device, Tensor and Object
values can be replaced by subclasses, and instances of those subclasses
are accepted as arguments."""

import numpy
import pytest

import tether
from tether import _ffi

from conftest import Holder, Inner, Leaf
from thread_failures import running_threads

echo = tether.get_global_func("testing.echo")
apply_n = tether.get_global_func("testing.apply_n")

BIG = [2**63, -(2**63) - 1, 2**64 - 1, 2**64, -(2**64), 2**127 - 1, -(2**127), 2**200, -(2**200), 3**150]
EDGES = [2**63 - 1, -(2**63), 0, -1, 1]


def same(a, b):
    return a == b and type(a) is type(b)


# ---- BigInt ----------------------------------------------------------------------


@pytest.mark.parametrize("v", BIG + EDGES)
def test_echo_is_exact(v):
    assert same(echo(v), v)


def test_int_subclasses_cross_as_their_value():
    class MyInt(int):
        pass

    assert same(echo(MyInt(2**70)), 2**70)
    assert same(echo(MyInt(-5)), -5)


def test_every_call_path():
    args = BIG[:5]
    # Up to eight arguments (the inline path), more (the general one), and
    # with a move among them (the general one too).
    assert same(apply_n(lambda *xs: xs, 1, *args)[4], args[4])
    got = apply_n(lambda *xs: list(xs), 1, *(BIG + EDGES))
    assert all(same(a, b) for a, b in zip(got, BIG + EDGES))
    leaf = Leaf(1)
    assert same(echo(2**99, leaf._move()), 2**99)
    assert same(tether.convert(2**70), 2**70)


def test_callback_arguments_and_results():
    seen = []

    def f(*xs):
        seen.append(xs)
        return xs[0] * 3

    fn = tether.convert_func(f)
    for v in BIG:
        assert same(apply_n(fn, 2, v, 1), v * 3)
        assert same(seen[-1][0], v)
    assert same(echo(fn)(2**70, 0), 3 * 2**70)
    # Results beyond int64 from a callback made from a plain lambda too.
    assert same(apply_n(lambda: -(2**100), 1), -(2**100))


def test_containers():
    arr = tether.convert(BIG + EDGES)
    assert isinstance(arr, tether.Array)
    assert all(same(a, b) for a, b in zip(arr, BIG + EDGES))
    assert same(arr[3], BIG[3]) and same(arr[-1], EDGES[-1])
    nested = tether.convert([[2**70], (-(2**70),)])
    assert same(nested[0][0], 2**70) and same(nested[1][0], -(2**70))
    m = tether.convert({2**70: -(2**90), "k": 2**64, 5: 2**63})
    items = dict(m.items())
    assert same(items[2**70], -(2**90)) and same(items["k"], 2**64) and same(items[5], 2**63)
    assert any(same(k, 2**70) for k in m.keys())
    # Returned from native code (echo hands back the same container).
    back = echo([2**65, {"x": -(2**65)}])
    assert same(back[0], 2**65) and same(back[1]["x"], -(2**65))


def test_dataclass_fields():
    h = Holder(Inner(1), 2**70)
    assert same(h.anything, 2**70)
    h.anything = -(2**200)
    assert same(h.anything, -(2**200))
    h.anything = [2**64]
    assert same(h.anything[0], 2**64)
    # An int64 field refuses an int beyond its range, saying so; the value stays.
    inner = Inner(3)
    with pytest.raises(TypeError, match=r"integer 18446744073709551616 out of int64 range"):
        inner.v = 2**64
    assert inner.v == 3


def test_bools_and_numpy_scalars_are_unchanged():
    assert echo(True) is True and echo(False) is False
    assert same(echo(numpy.int64(-5)), -5)
    assert same(echo(numpy.uint64(2**64 - 1)), 2**64 - 1)
    assert same(echo(numpy.uint64(2**63)), 2**63)
    b = numpy.bool_(True)
    assert echo(b) is b  # not an int: crosses as an opaque Python object


def test_a_failing_conversion_after_a_big_int_releases_it():
    class Bad:
        def __tvm_ffi_value__(self):
            raise KeyError("bad")

    for _ in range(3):
        with pytest.raises(KeyError):
            echo(2**100, [2**100], Bad())


# ---- value classes ---------------------------------------------------------------


@pytest.fixture
def value_classes():
    """The DataType/Device classes, restored after the test."""
    if _ffi.device_class() is None:
        _ffi.set_device_class(tether.Device)
    if _ffi.dtype_class() is None:
        _ffi.set_dtype_class(tether.dtype)
    before = (_ffi.dtype_class(), _ffi.device_class())
    yield before
    _ffi.set_dtype_class(before[0])
    _ffi.set_device_class(before[1])
    assert (_ffi.dtype_class(), _ffi.device_class()) == before


def test_dtype_subclass_round_trips(value_classes):
    base, _ = value_classes

    class MyDType(base):
        pass

    class Other(base):
        pass

    _ffi.set_dtype_class(MyDType)
    assert _ffi.dtype_class() is MyDType
    out = echo(tether.dtype("float32"))
    assert type(out) is MyDType and out == "float32" and (out.type_code, out.bits, out.lanes) == (2, 32, 1)
    # Instances of the current class, and of any subclass of the original,
    # cross as data types (not as strings).
    for arg in (MyDType("int8x4"), Other("uint16")):
        back = echo(arg)
        assert type(back) is MyDType and back == arg and back.lanes == arg.lanes
    assert same(echo("float32"), "float32")
    assert type(tether.convert([tether.dtype("int32")])[0]) is MyDType
    _ffi.set_dtype_class(base)
    assert type(echo(MyDType("int8"))) is base


def test_dtype_subclass_whose_factory_makes_the_base_class(value_classes):
    base, _ = value_classes

    class Plain(base):
        from_dlpack_data_type = staticmethod(lambda triple: base.from_dlpack_data_type(triple))

    _ffi.set_dtype_class(Plain)
    out = echo(base("bfloat16x2"))
    assert type(out) is Plain and out == "bfloat16x2" and (out.bits, out.lanes) == (16, 2)
    assert same(echo(out), out)


def test_device_subclass_round_trips(value_classes):
    _, base = value_classes
    constructed = []

    class MyDevice(base):
        __slots__ = ()

        def __init__(self, *args):
            constructed.append(args)
            super().__init__(*args)

        def describe(self):
            return f"my {self}"

    _ffi.set_device_class(MyDevice)
    assert _ffi.device_class() is MyDevice
    out = echo(tether.device("cpu", 3))
    assert type(out) is MyDevice and out.index == 3 and out.dlpack_device_type() == 1
    assert out.describe() == "my cpu:3"
    assert constructed == []  # returned values are made without the subclass's constructor
    arg = MyDevice("cuda", 1)
    back = echo(arg)
    assert type(back) is MyDevice and back == arg
    assert type(apply_n(lambda d: d, 1, base("cpu", 0))) is MyDevice
    _ffi.set_device_class(base)
    assert type(echo(arg)) is base


def test_value_classes_must_derive_from_the_originals(value_classes):
    dtype_cls, device_cls = value_classes
    with pytest.raises(TypeError, match="subclass"):
        _ffi.set_dtype_class(str)
    with pytest.raises(TypeError, match="subclass"):
        _ffi.set_device_class(object)
    with pytest.raises(TypeError, match="subclass"):
        _ffi.set_value_classes(dtype_cls, int)
    assert (_ffi.dtype_class(), _ffi.device_class()) == (dtype_cls, device_cls)
    _ffi.set_value_classes(dtype_cls, device_cls)  # the originals again: accepted


# ---- Tensor and Object classes ------------------------------------------------------


@pytest.fixture
def restore_class():
    saved = {}

    def replace(index, cls):
        saved.setdefault(index, _ffi.registered_class(index))
        _ffi.register_class(index, cls)

    yield replace
    for index, cls in saved.items():
        _ffi.register_class(index, cls)


def test_tensor_subclass(restore_class):
    base = _ffi.registered_class(70)

    class MyTensor(base):
        __slots__ = ()

    restore_class(70, MyTensor)
    a = numpy.arange(6.0)
    t = tether.from_dlpack(a)
    assert type(t) is MyTensor
    assert echo(t) is t
    assert type(echo(numpy.arange(3))) is MyTensor  # converted through DLPack, returned
    seen = []
    apply_n(lambda x: seen.append(x), 1, numpy.arange(2.0))
    assert type(seen[0]) is MyTensor
    assert tether.convert([t])[0] is t
    h = Holder(Inner(1), t)
    assert h.anything is t
    assert numpy.array_equal(numpy.from_dlpack(t), a)
    # An instance of a subclass passes as an argument.
    assert _ffi.tensor_info(t)[4] == (6,)


def test_object_class_can_be_replaced(restore_class):
    base = _ffi.registered_class(64)

    class MyObject(base):
        __slots__ = ()

    restore_class(64, MyObject)
    assert _ffi.registered_class(64) is MyObject
    leaf = Leaf(4)
    assert echo(leaf) is leaf


def test_replacing_classes_while_other_threads_convert(value_classes):
    import threading

    dtype_cls, device_cls = value_classes

    class D1(device_cls):
        __slots__ = ()

    class T1(dtype_cls):
        pass

    stop = threading.Event()

    def work():
        while not stop.is_set():
            d, t, big = echo(device_cls("cpu", 2)), echo(dtype_cls("int16")), echo(2**90)
            assert isinstance(d, device_cls) and d.index == 2
            assert isinstance(t, dtype_cls) and t == "int16"
            assert same(big, 2**90)

    with running_threads([work] * 3, stop=stop):
        for i in range(300):
            _ffi.set_device_class(D1 if i % 2 == 0 else device_cls)
            _ffi.set_dtype_class(T1 if i % 2 == 0 else dtype_cls)
