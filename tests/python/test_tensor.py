"""Tensors and DLPack: zero-copy arrays between NumPy, tether and native
kernels, with TVM-FFI's names and semantics."""

import gc
import os
import sys

import pytest

import tether
from plugins import build_upstream_kernel

np = pytest.importorskip("numpy", reason="NumPy is a test dependency (installed by make test)")

HERE = os.path.dirname(os.path.abspath(__file__))
echo = tether.get_global_func("testing.echo")


class TestDtype:
    """`tether.dtype` spells data types as TVM-FFI does and crosses the FFI as a DataType value."""

    @pytest.mark.parametrize("name", [
        "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64", "bfloat16", "bool", "handle", "int8x4", "float32x4",
        "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu",
        "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn",
    ])
    def test_round_trip(self, name):
        d = tether.dtype(name)
        assert d == name and repr(d) == f"dtype('{name}')"
        assert echo(d) == d and isinstance(echo(d), tether.dtype)

    def test_fields(self):
        d = tether.dtype("float32")
        assert (d.type_code, d.bits, d.lanes, d.itemsize) == (2, 32, 1, 4)
        assert tether.dtype("int8x4").lanes == 4 and tether.dtype("float32").with_lanes(4) == "float32x4"
        assert tether.dtype(np.dtype("float16")) == "float16" and tether.dtype(np.float64) == "float64"

    def test_unknown_dtype_raises(self):
        with pytest.raises(ValueError, match="floaty"):
            tether.dtype("floaty")
        # As in TVM-FFI, complex numbers have a DLPack code but no dtype spelling.
        with pytest.raises(ValueError, match="complex64"):
            tether.dtype("complex64")


class TestDevice:
    def test_names_and_reprs(self):
        d = tether.device("cuda:1")
        assert repr(d) == "device(type='cuda', index=1)" and str(d) == "cuda:1"
        assert (d.type, d.index, d.dlpack_device_type()) == ("cuda", 1, 2)
        assert tether.device("cpu") == tether.device("cpu", 0) == tether.Device(tether.DLDeviceType.kDLCPU, 0)

    def test_crosses_the_ffi(self):
        for d in (tether.device("cpu"), tether.device("cuda", 3), tether.device("metal", 1)):
            assert echo(d) == d

    def test_bad_device_raises(self):
        with pytest.raises(ValueError, match="Unknown device: gpuz"):
            tether.device("gpuz")
        with pytest.raises(ValueError, match="Unknown device type: 99"):
            tether.device(99)


DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint64", "float16", "float32", "float64",
          "complex64", "complex128"]


class TestFromNumPy:
    """NumPy arrays become Tensors over the same memory, and back."""

    @pytest.mark.parametrize("dt", DTYPES)
    def test_dtypes_both_ways(self, dt):
        a = (np.arange(12) % 3).astype(dt).reshape(3, 4)
        t = tether.from_dlpack(a)
        if not dt.startswith("complex"):  # no dtype spelling for complex, as in TVM-FFI
            assert t.dtype == dt
        assert t.shape == (3, 4) and t.strides == (4, 1)
        assert t.data_ptr() == a.ctypes.data
        b = np.from_dlpack(t)
        assert b.dtype == a.dtype and np.array_equal(a, b)
        assert b.ctypes.data == a.ctypes.data  # no copy either way

    @pytest.mark.parametrize("ndim", range(7))
    def test_shapes_0d_to_6d(self, ndim):
        shape = tuple(range(2, 2 + ndim))
        a = np.ones(shape, dtype="float32")
        t = tether.from_dlpack(a)
        assert t.shape == shape and t.ndim == ndim and t.numel() == a.size
        assert np.from_dlpack(t).shape == shape

    def test_zero_size(self):
        t = tether.from_dlpack(np.zeros((3, 0, 2), dtype="int32"))
        assert t.shape == (3, 0, 2) and t.numel() == 0

    def test_strided_and_offset_views(self):
        base = np.arange(60, dtype="int64").reshape(6, 10)
        view = base[1::2, 3:9:3]
        t = tether.from_dlpack(view)
        assert t.shape == view.shape
        assert t.strides == tuple(s // 8 for s in view.strides)
        assert not t.is_contiguous()
        back = np.from_dlpack(t)
        assert np.array_equal(back, view)
        back[0, 0] = -1
        assert base[1, 3] == -1  # the same memory

    def test_require_contiguous_refuses_a_strided_view(self):
        view = np.arange(20, dtype="float32")[::2]
        with pytest.raises(RuntimeError, match="not contiguous"):
            tether.from_dlpack(view, require_contiguous=True)
        assert tether.from_dlpack(np.arange(4.0), require_contiguous=True).is_contiguous()

    def test_from_dlpack_argument_checks(self):
        a = np.arange(4, dtype="float32")
        for bad in (True, -1, 1.0, "8"):
            with pytest.raises(ValueError, match="require_alignment must be a non-negative int"):
                tether.from_dlpack(a, require_alignment=bad)
        with pytest.raises(TypeError):
            tether.from_dlpack(a, 0)  # the options are keyword-only
        with pytest.raises(TypeError, match="expected a tensor"):
            tether.from_dlpack(3)
        t = tether.from_dlpack(a, require_alignment=4, require_contiguous=1)
        assert tether.from_dlpack(t) is t  # a Tensor comes back as it is
        assert t.__dlpack_device__() == (1, 0)

    def test_read_only_array_is_refused(self):
        # A Tensor hands kernels a DLTensor they may write (test_readonly_memory).
        a = np.arange(5, dtype="float64")
        a.flags.writeable = False
        with pytest.raises(BufferError, match="^Cannot export readonly array"):
            tether.from_dlpack(a)

    def test_a_remembered_producer_type_keeps_every_check(self):
        # After an ndarray converted, the next ones of that type skip the
        # type checks; what depends on the value is still checked.
        tether.from_dlpack(np.zeros(4, dtype="float32"))
        ro = np.arange(3, dtype="float32")
        ro.flags.writeable = False
        with pytest.raises(BufferError, match="^Cannot export readonly array"):
            tether.from_dlpack(ro)
        with pytest.raises(RuntimeError, match="not contiguous"):
            tether.from_dlpack(np.arange(20, dtype="float32")[::2], require_contiguous=True)
        misaligned = np.zeros(17, dtype="uint8")[1:]
        with pytest.raises(RuntimeError, match="align"):
            tether.from_dlpack(misaligned, require_alignment=64)
        with pytest.raises(TypeError, match="expected a tensor"):
            tether.from_dlpack(object())

    def test_device_and_dlpack_device(self):
        t = tether.from_dlpack(np.zeros(3))
        assert t.device == tether.device("cpu", 0) and t.__dlpack_device__() == (1, 0)
        assert repr(t) == "float64[3]@cpu:0"

    def test_tensor_keeps_memory_after_the_array_is_dropped(self):
        a = np.arange(1000, dtype="int32")
        keep = tether.List([a])  # held natively as a Tensor
        del a
        gc.collect()
        t = keep[0]
        assert isinstance(t, tether.Tensor)
        assert np.from_dlpack(t)[999] == 999

    def test_producer_reference_released_exactly_once(self):
        a = np.arange(10.0)
        base = sys.getrefcount(a)
        for _ in range(100):
            t = tether.from_dlpack(a)
            np.from_dlpack(t)
            del t
        gc.collect()
        assert sys.getrefcount(a) == base

    def test_ten_thousand_round_trips_do_not_grow(self):
        a = np.arange(16, dtype="float32")
        gc.collect()
        before = len(gc.get_objects())
        blocks = sys.getallocatedblocks()  # lean wrappers are not GC objects
        for _ in range(10_000):
            b = np.from_dlpack(tether.from_dlpack(a))
            echo(b)
        del b
        gc.collect()
        assert len(gc.get_objects()) - before < 50
        assert sys.getallocatedblocks() - blocks < 500

    def test_capsules(self):
        a = np.arange(3.0)
        cap = a.__dlpack__()
        t = tether.from_dlpack(cap)
        assert np.array_equal(np.from_dlpack(t), a)
        with pytest.raises(ValueError, match="already consumed"):
            tether.from_dlpack(cap)
        versioned = tether.from_dlpack(a).__dlpack__(max_version=(1, 0))
        assert "dltensor_versioned" in repr(versioned)
        legacy = tether.from_dlpack(a).__dlpack__()
        assert "dltensor" in repr(legacy) and "versioned" not in repr(legacy)
        del versioned, legacy  # unconsumed capsules delete their tensors
        gc.collect()

    def test_unconsumed_capsule_releases_the_tensor(self):
        a = np.arange(3.0)
        base = sys.getrefcount(a)
        for _ in range(50):
            tether.from_dlpack(a).__dlpack__(max_version=(1, 0))
        gc.collect()
        assert sys.getrefcount(a) == base


class TestPassingArrays:
    """Objects with __dlpack__ reach native functions as tensors over the same memory."""

    def test_numpy_argument_arrives_as_a_tensor(self):
        a = np.arange(6, dtype="float32")
        t = echo(a)
        assert isinstance(t, tether.Tensor) and t.data_ptr() == a.ctypes.data

    def test_tensors_are_tied(self):
        t = tether.from_dlpack(np.zeros(2))
        assert echo(t) is t
        lst = tether.List([t])
        assert lst[0] is t

    def test_callback_receives_a_tensor(self):
        seen = []
        tether.testing.apply_n(lambda x: seen.append(x.shape), 1, np.zeros((2, 5)))
        assert seen == [(2, 5)]

    def test_non_dlpack_object_where_a_tensor_is_expected(self):
        with pytest.raises(TypeError, match="expected a tensor"):
            tether.from_dlpack(3)
        with pytest.raises(TypeError, match="expected a tensor"):
            tether.from_dlpack([1, 2])

    def test_wrong_device_for_export(self):
        t = tether.from_dlpack(np.zeros(2))
        with pytest.raises(BufferError, match="without a copy"):
            t.__dlpack__(dl_device=(2, 0))
        with pytest.raises(BufferError, match="copy=True"):
            t.__dlpack__(copy=True)


    def test_export_arguments_are_checked_on_the_native_path(self):
        t = tether.from_dlpack(np.zeros(2))
        # The common request is answered natively, the rest by the checked
        # Python method; both name what was wrong.
        assert type(type(t).__dict__["__dlpack__"]).__name__ == "method_descriptor"
        with pytest.raises(TypeError, match="no positional arguments"):
            t.__dlpack__(None)
        with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
            t.__dlpack__(bogus=1)
        with pytest.raises(TypeError, match="max_version must be a"):
            t.__dlpack__(max_version=3)
        with pytest.raises(BufferError, match="stream must be None or -1"):
            t.__dlpack__(stream=5)
        assert "versioned" not in repr(t.__dlpack__(max_version=(0, 8), stream=None, dl_device=None, copy=None))
        assert "dltensor_versioned" in repr(t.__dlpack__(stream=-1, max_version=[1, 0]))
        assert t.__dlpack_device__() == (1, 0)
        with pytest.raises(TypeError):
            type(t).__dlpack__(object())  # the descriptor takes only Tensors

class TestStreams:
    def test_use_raw_stream_sets_and_restores(self):
        dev = tether.device("cuda", 0)
        assert tether.get_raw_stream(dev) == 0
        with tether.use_raw_stream(dev, 0x1234):
            assert tether.get_raw_stream(dev) == 0x1234
            with tether.use_raw_stream(dev, 0x99):
                assert tether.get_raw_stream(dev) == 0x99
            assert tether.get_raw_stream(dev) == 0x1234
        assert tether.get_raw_stream(dev) == 0

    def test_bad_stream_raises(self):
        with pytest.raises(ValueError, match="only accepts int or c_void_p"):
            tether.use_raw_stream(tether.device("cpu"), "s")


class TestUpstreamKernel:
    """A kernel written against apache-tvm-ffi's headers, linked to tether's core."""

    def test_add_one_runs_in_place_on_numpy(self, tmp_path):
        src = os.path.join(HERE, "..", "upstream_cpp", "kernels", "add_one.cc")
        if not os.path.exists(src):
            pytest.fail(f"missing kernel source {src}")
        mod = tether.load_module(build_upstream_kernel(src, tmp_path / "libadd_one.so"))
        x = np.arange(5, dtype="float32")
        y = np.zeros(5, dtype="float32")
        mod.add_one_cpu(x, y)
        assert np.array_equal(y, x + 1)


def test_torch_cpu_tensors_cross_without_copy():
    torch = pytest.importorskip(
        "torch", reason="PyTorch is optional: its Linux wheels on PyPI pull multi-GB CUDA packages, so make test "
        "does not install it; the test runs wherever torch is importable")
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    t = tether.from_dlpack(x)
    assert t.shape == (2, 3) and t.data_ptr() == x.data_ptr()
    y = torch.from_dlpack(t)
    assert y.data_ptr() == x.data_ptr()
