"""Read-only memory stays read-only across the FFI, and producers' DLPack
tensors are checked before they become Tensors.

A native function receives a bare ``DLTensor``, which has no read-only bit,
so read-only memory (a read-only NumPy array, a DLPack 1.x capsule flagged
``DLPACK_FLAG_BITMASK_READ_ONLY``) never becomes a Tensor: a call argument
and ``from_dlpack`` alike refuse it with ``BufferError`` (NumPy's own message
for arrays, as apache-tvm-ffi reports it), before any kernel could see it;
``bytes`` and ``memoryview`` are not tensors at all. Writable arrays still
cross without a copy. Malformed producer capsules, built here with ctypes, are
refused with ``ValueError`` naming the field, and the process goes on.
"""

import ctypes
import os

import pytest

import tether
from plugins import build_upstream_kernel

np = pytest.importorskip("numpy", reason="NumPy is a test dependency (installed by make test)")

HERE = os.path.dirname(os.path.abspath(__file__))
echo = tether.get_global_func("testing.echo")

# NumPy's own refusal of a read-only array in DLPack's legacy form, which is
# what apache-tvm-ffi reports for a read-only array argument.
NUMPY_READ_ONLY = (
    "Cannot export readonly array since signalling readonly is unsupported by DLPack "
    "(supported by newer DLPack version)."
)
FLAGGED_READ_ONLY = "cannot pass a read-only DLPack tensor (its producer set DLPACK_FLAG_BITMASK_READ_ONLY)"
READ_ONLY_FLAG = 1  # DLPACK_FLAG_BITMASK_READ_ONLY


@pytest.fixture(scope="module")
def add_one(tmp_path_factory):
    """`add_one_cpu(x, y)`: a kernel built against apache-tvm-ffi's headers
    that writes ``y = x + 1`` through the DLTensor it receives."""
    src = os.path.join(HERE, "..", "upstream_cpp", "kernels", "add_one.cc")
    lib = build_upstream_kernel(src, tmp_path_factory.mktemp("ro_kernel") / "libadd_one.so")
    return tether.load_module(lib).add_one_cpu


def read_only_inputs():
    """Read-only float32 arrays of 4 elements, made the ways users make them."""
    from_bytes = np.frombuffer(bytes(np.arange(4, dtype="float32").data), dtype="float32")
    flagged = np.arange(4, dtype="float32")
    flagged.setflags(write=False)
    view = np.arange(8, dtype="float32")[::2]
    view.flags.writeable = False
    return {"frombuffer(bytes)": from_bytes, "setflags(write=False)": flagged, "strided view": view}


class TestReadOnlyArguments:
    @pytest.mark.parametrize("name", sorted(read_only_inputs()))
    def test_read_only_array_is_refused_before_the_kernel_writes(self, add_one, name):
        y = read_only_inputs()[name]
        before = y.copy()
        x = np.full(4, 41, dtype="float32")
        with pytest.raises(BufferError) as info:
            add_one(x, y)
        assert str(info.value) == NUMPY_READ_ONLY
        assert np.array_equal(y, before) and not y.flags.writeable
        add_one(x, y.copy())  # the kernel itself is fine with a writable copy

    def test_refusal_matches_the_peer(self):
        tvm_ffi = pytest.importorskip("tvm_ffi", reason="apache-tvm-ffi (the peer) is not installed")
        peer_echo = tvm_ffi.get_global_func("testing.echo")
        for name, arr in read_only_inputs().items():
            with pytest.raises(BufferError) as ours:
                echo(arr)
            with pytest.raises(BufferError) as peers:
                peer_echo(arr)
            assert str(ours.value) == str(peers.value), name

    def test_flagged_versioned_capsule_is_refused_and_left_unconsumed(self, add_one):
        y = np.arange(4, dtype="float32")
        y.flags.writeable = False
        cap = y.__dlpack__(max_version=(1, 0))
        with pytest.raises(BufferError) as info:
            add_one(np.zeros(4, dtype="float32"), cap)
        assert str(info.value).startswith(FLAGGED_READ_ONLY)
        assert np.array_equal(y, np.arange(4, dtype="float32"))
        # Still the producer's: from_dlpack refuses it the same way.
        with pytest.raises(BufferError) as info:
            tether.from_dlpack(cap)
        assert str(info.value).startswith(FLAGGED_READ_ONLY)

    def test_read_only_subclass_is_refused_through_its_versioned_export(self):
        class Sub(np.ndarray):
            pass

        sub = np.arange(3.0).view(Sub)
        sub.flags.writeable = False
        with pytest.raises(BufferError, match="DLPACK_FLAG_BITMASK_READ_ONLY"):
            echo(sub)

    @pytest.mark.parametrize("make", [lambda b: b, memoryview, lambda b: memoryview(bytearray(b))],
                             ids=["bytes", "memoryview(bytes)", "memoryview(bytearray)"])
    def test_bytes_and_memoryviews_are_not_tensors(self, add_one, make):
        raw = bytes(np.arange(4, dtype="float32").data)
        value = make(raw)
        with pytest.raises(TypeError, match="Tensor"):
            add_one(np.zeros(4, dtype="float32"), value)
        assert bytes(value) == raw
        with pytest.raises(TypeError, match="expected a tensor"):
            tether.from_dlpack(value)

    def test_writable_arrays_still_cross_without_a_copy(self, add_one):
        x = np.arange(4, dtype="float32")
        y = np.zeros(4, dtype="float32")
        add_one(x, y)
        assert np.array_equal(y, x + 1)
        t = tether.from_dlpack(y)
        assert t.data_ptr() == y.ctypes.data
        add_one(x, t)
        assert np.array_equal(y, x + 1)
        back = np.from_dlpack(echo(y))
        assert back.flags.writeable and back.ctypes.data == y.ctypes.data


class TestReadOnlyFromDLPack:
    @pytest.mark.parametrize("name", sorted(read_only_inputs()))
    def test_read_only_memory_never_becomes_a_tensor(self, add_one, name):
        arr = read_only_inputs()[name]
        before = arr.copy()
        with pytest.raises(BufferError) as info:
            tether.from_dlpack(arr)
        assert str(info.value) == NUMPY_READ_ONLY
        # So no kernel can be handed it later and write the immutable memory.
        with pytest.raises(BufferError):
            add_one(np.zeros(4, dtype="float32"), arr)
        assert np.array_equal(arr, before)

    def test_from_dlpack_refusal_matches_the_peer(self):
        tvm_ffi = pytest.importorskip("tvm_ffi", reason="apache-tvm-ffi (the peer) is not installed")
        for name, arr in read_only_inputs().items():
            with pytest.raises(BufferError) as ours:
                tether.from_dlpack(arr)
            with pytest.raises(BufferError) as peers:
                tvm_ffi.from_dlpack(arr)
            assert str(ours.value) == str(peers.value), name

    def test_writable_tensor_exports_in_both_forms(self):
        t = tether.from_dlpack(np.arange(3.0))
        assert '"dltensor"' in repr(t.__dlpack__())
        assert np.from_dlpack(t).flags.writeable


# --- producer capsules built by hand -------------------------------------


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [
    ("major", ctypes.c_uint32),
    ("minor", ctypes.c_uint32),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", DELETER),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor),
]

_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class HandMadeTensor:
    """A versioned managed tensor over ``buf`` (kept alive here) whose
    deleter counts its calls; ``capsule()`` wraps it as a producer would."""

    def __init__(self, buf, shape, strides=None, code=2, bits=32, lanes=1, flags=0, data=None, byte_offset=0):
        self.buf = buf
        self.deleted = 0
        self.shape = (ctypes.c_int64 * len(shape))(*shape)
        self.strides = None if strides is None else (ctypes.c_int64 * len(strides))(*strides)
        self.deleter = DELETER(self._delete)
        m = DLManagedTensorVersioned()
        m.major, m.minor, m.flags, m.deleter = 1, 0, flags, self.deleter
        t = m.dl_tensor
        t.data = buf.ctypes.data if data is None else data
        t.device = DLDevice(1, 0)
        t.ndim = len(shape)
        t.dtype = DLDataType(code, bits, lanes)
        t.shape = self.shape
        if self.strides is not None:
            t.strides = self.strides
        t.byte_offset = byte_offset
        self.managed = m

    def _delete(self, _):
        self.deleted += 1

    def capsule(self):
        return _new_capsule(ctypes.addressof(self.managed), b"dltensor_versioned", None)


class TestProducerCapsules:
    def test_well_formed_capsule_is_adopted_and_deleted_once(self):
        buf = np.arange(6, dtype="float32")
        made = HandMadeTensor(buf, (2, 3), strides=(3, 1))
        t = tether.from_dlpack(made.capsule())
        assert t.shape == (2, 3) and t.data_ptr() == buf.ctypes.data
        assert np.array_equal(np.from_dlpack(t), buf.reshape(2, 3))
        del t
        import gc

        gc.collect()
        assert made.deleted == 1

    def test_read_only_flag_of_a_producer_is_refused(self):
        buf = np.arange(4, dtype="float32")
        made = HandMadeTensor(buf, (4,), flags=READ_ONLY_FLAG)
        with pytest.raises(BufferError, match="DLPACK_FLAG_BITMASK_READ_ONLY"):
            echo(made.capsule())
        assert made.deleted == 0  # refused before adoption; the producer keeps it
        with pytest.raises(BufferError, match="DLPACK_FLAG_BITMASK_READ_ONLY"):
            tether.from_dlpack(made.capsule())
        assert made.deleted == 0

    @pytest.mark.parametrize(
        "fields, message",
        [
            (dict(bits=0), "no bits or no lanes"),
            (dict(lanes=0), "no bits or no lanes"),
            (dict(code=42), "data type code 42 is unknown"),
            (dict(shape=(2, -3)), "extent -3 of axis 1 is negative"),
            (dict(shape=(1 << 40, 1 << 40)), "element count of shape"),
            (dict(shape=(2, 3), strides=(1 << 62, 1)), "memory addressed by shape [2, 3] and strides"),
            (dict(shape=(3,), strides=(-(1 << 62),)), "memory addressed by shape [3] and strides"),
            (dict(data=0), "data is NULL for a tensor of 4 elements"),
            (dict(byte_offset=(1 << 64) - 8), "byte_offset"),
        ],
        ids=["bits 0", "lanes 0", "unknown code", "negative extent", "overflowing shape", "overflowing strides",
             "overflowing negative stride", "NULL data", "overflowing byte_offset"],
    )
    def test_malformed_capsule_is_refused_naming_the_field(self, fields, message):
        buf = np.zeros(4, dtype="float32")
        fields.setdefault("shape", (4,))
        made = HandMadeTensor(buf, **fields)
        for convert in (tether.from_dlpack, echo):
            cap = made.capsule()
            with pytest.raises(ValueError) as info:
                convert(cap)
            assert message in str(info.value)
            assert made.deleted == 0  # a refused tensor stays the producer's
        # The process goes on, and the same conversion works on good input.
        assert tether.from_dlpack(HandMadeTensor(buf, (4,)).capsule()).shape == (4,)

    def test_empty_tensor_may_have_null_data_and_any_strides(self):
        buf = np.zeros(0, dtype="float32")
        made = HandMadeTensor(buf, (0, 5), strides=(1 << 62, 1 << 62), data=0)
        assert tether.from_dlpack(made.capsule()).shape == (0, 5)
