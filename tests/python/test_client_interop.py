"""What programs written for apache-tvm-ffi rely on beyond its Python API,
checked on tether:

* serving as ``tvm_ffi`` makes the C ABI resolvable process-wide (JIT
  linkers and ``ctypes.CDLL(None)`` find ``TVMFFIFunctionCall`` as with the
  peer's ``libtvm_ffi.so``, loaded ``RTLD_GLOBAL``), while tether on its own
  keeps its symbols to itself;
* a ``DLTensor*`` argument of a Python callback arrives as a Tensor viewing
  the caller's memory;
* tensors that came in through a framework's DLPack exchange table go back
  out as that framework's tensors: call results, and items later read from
  containers such a call returned (or from a call such a container was
  passed to). The framework here is a small one made with ctypes, with
  its own exchange table; PyTorch's own runs where it is installed.
"""

import ctypes
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tether
from plugins import run_python


_run = run_python


# ---- the C ABI, process-wide ------------------------------------------------

def test_serving_makes_the_c_abi_global_and_bound_to_tethers_core():
    code = """
        import ctypes, os
        import tvm_ffi, tether
        assert tvm_ffi is tether
        g = ctypes.CDLL(None)
        core = ctypes.CDLL(os.path.join(os.path.dirname(tether.__file__), "libtether_core.so"))
        for name in ("TVMFFIFunctionCall", "TVMFFIFunctionGetGlobal", "TVMFFIObjectDecRef"):
            a = ctypes.cast(getattr(g, name), ctypes.c_void_p).value
            b = ctypes.cast(getattr(core, name), ctypes.c_void_p).value
            assert a == b, (name, a, b)
        # callable through the global scope: look a global up by name
        class ByteArray(ctypes.Structure):
            _fields_ = [("data", ctypes.c_char_p), ("size", ctypes.c_size_t)]
        name = b"testing.echo"
        handle = ctypes.c_void_p()
        rc = g.TVMFFIFunctionGetGlobal(ctypes.byref(ByteArray(name, len(name))), ctypes.byref(handle))
        assert rc == 0 and handle.value
        g.TVMFFIObjectDecRef(handle)
        print("ok")
    """
    assert _run(code, TETHER_PROVIDE_TVM_FFI="1") == "ok"


def test_tether_on_its_own_keeps_the_c_abi_local():
    code = """
        import ctypes
        import tether
        try:
            ctypes.CDLL(None).TVMFFIFunctionCall
        except AttributeError:
            print("local")
        else:
            print("global")
    """
    env = {k: v for k, v in os.environ.items() if k != "TETHER_PROVIDE_TVM_FFI"}
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "local"


# ---- DLTensor* arguments of callbacks --------------------------------------

class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                                     ("deleter", DELETER), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


class Any(ctypes.Structure):
    _fields_ = [("type_index", ctypes.c_int32), ("zero_padding", ctypes.c_uint32), ("v", ctypes.c_uint64)]


K_DLTENSOR_PTR = 7
K_INT = 1


def _call_with_dltensor(f, dl):
    """Call the Function ``f`` through the C ABI with one ``DLTensor*``
    argument; its integer result."""
    arg = Any(K_DLTENSOR_PTR, 0, ctypes.addressof(dl))
    out = Any(0, 0, 0)
    rc = tether.LIB.TVMFFIFunctionCall(ctypes.c_void_p(tether.core._ffi.chandle(f)), ctypes.byref(arg), 1,
                                       ctypes.byref(out))
    assert rc == 0
    assert out.type_index == K_INT
    return ctypes.c_int64(out.v).value


@pytest.mark.parametrize("strided", [False, True])
def test_a_dltensor_pointer_argument_reaches_a_callback_as_a_tensor(strided):
    base = np.arange(12, dtype="float32").reshape(3, 4)
    arr = base[:, ::2] if strided else base[:2]
    shape = (ctypes.c_int64 * 2)(*arr.shape)
    strides = (ctypes.c_int64 * 2)(*(s // 4 for s in arr.strides))
    dl = DLTensor(arr.ctypes.data, DLDevice(1, 0), 2, DLDataType(2, 32, 1), shape,
                  strides if strided else None, 0)
    seen = []

    def callback(t):
        assert isinstance(t, tether.Tensor)
        seen.append((tuple(t.shape), np.from_dlpack(t).copy()))
        np.from_dlpack(t)[0, 0] = 100.0  # the caller's memory
        return 7

    f = tether.convert(callback)
    assert _call_with_dltensor(f, dl) == 7
    shape_seen, values = seen[0]
    assert shape_seen == arr.shape
    np.testing.assert_array_equal(values, np.arange(12, dtype="float32").reshape(3, 4)[:, ::2] if strided
                                  else np.arange(8, dtype="float32").reshape(2, 4))
    assert base[0, 0] == 100.0


# ---- a framework's tensors back to it --------------------------------------

FROM_PY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.POINTER(DLManagedTensorVersioned)))
TO_PY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(DLManagedTensorVersioned), ctypes.POINTER(ctypes.c_void_p))


class ExchangeApi(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("prev_api", ctypes.c_void_p),
                ("managed_tensor_allocator", ctypes.c_void_p),
                ("managed_tensor_from_py_object_no_sync", FROM_PY),
                ("managed_tensor_to_py_object_no_sync", TO_PY),
                ("dltensor_from_py_object_no_sync", ctypes.c_void_p),
                ("current_work_stream", ctypes.c_void_p)]


_pyapi = ctypes.pythonapi
_pyapi.PyCapsule_New.restype = ctypes.py_object
_pyapi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
_pyapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
_pyapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_pyapi.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_void_p]
# A capsule keeps the pointer to its name: names live as long as the module.
_API_NAME = ctypes.create_string_buffer(b"dlpack_exchange_api")
_USED_NAME = ctypes.create_string_buffer(b"used_dltensor_versioned")
_pyapi.Py_IncRef.argtypes = [ctypes.py_object]


class FrameTensor:
    """A framework's tensor: a NumPy array it keeps, exported and imported
    only through the exchange table (its ``__dlpack__`` is never called)."""

    def __init__(self, array, managed=None):
        self.array = array
        self._managed = managed  # an imported managed tensor, deleted with us

    def __dlpack__(self, **kwargs):
        raise AssertionError("the exchange table is used, not __dlpack__")

    def __del__(self):
        if self._managed is not None:
            self._managed.contents.deleter(self._managed)


def _from_py(obj, out):
    try:
        t = ctypes.cast(obj, ctypes.py_object).value
        cap = t.array.__dlpack__(max_version=(1, 0))
        managed = _pyapi.PyCapsule_GetPointer(cap, b"dltensor_versioned")
        _pyapi.PyCapsule_SetName(cap, ctypes.addressof(_USED_NAME))
        out[0] = ctypes.cast(managed, ctypes.POINTER(DLManagedTensorVersioned))
        return 0
    except BaseException:  # a C entry point: report, never raise through
        return -1


def _to_py(managed, out):
    try:
        dl = managed.contents.dl_tensor
        n = 1
        for i in range(dl.ndim):
            n *= dl.shape[i]
        buf = (ctypes.c_float * n).from_address(dl.data + dl.byte_offset)
        arr = np.frombuffer(buf, dtype="float32").reshape(tuple(dl.shape[i] for i in range(dl.ndim)))
        t = FrameTensor(arr, managed)
        _pyapi.Py_IncRef(t)
        out[0] = id(t)
        return 0
    except BaseException:
        return -1


_FROM_PY = FROM_PY(_from_py)
_TO_PY = TO_PY(_to_py)
_API = ExchangeApi(DLPackVersion(1, 3), None, None, _FROM_PY, _TO_PY, None, None)
FrameTensor.__dlpack_c_exchange_api__ = _pyapi.PyCapsule_New(ctypes.addressof(_API), ctypes.addressof(_API_NAME),
                                                                  None)


def _frame(n=4):
    return FrameTensor(np.arange(n, dtype="float32"))


def test_a_result_tensor_goes_back_to_the_framework_of_the_arguments():
    x = _frame()
    y = tether.get_global_func("testing.echo")(x)
    assert isinstance(y, FrameTensor)
    assert y.array.ctypes.data == x.array.ctypes.data


def test_arguments_of_no_framework_give_tether_tensors():
    x = tether.from_dlpack(np.arange(4, dtype="float32"))
    assert isinstance(tether.get_global_func("testing.echo")(x), tether.Tensor)


def test_items_of_returned_containers_go_back_lazily():
    x = _frame()
    arr = tether.get_global_func("testing.make_array_with_mixed")(x, 42)
    assert isinstance(arr, tether.Array)
    assert isinstance(arr[0], FrameTensor) and arr[0].array.ctypes.data == x.array.ctypes.data
    assert arr[1] == 42 and arr[2] == "hello"
    assert isinstance(list(arr)[0], FrameTensor)
    m = tether.get_global_func("testing.make_map_with_tensor")(x)
    assert isinstance(m, tether.Map)
    tensors = [m[k] for k in m.keys() if not isinstance(m[k], (int, str))]
    assert tensors and all(isinstance(t, FrameTensor) for t in tensors)


def test_a_tagged_container_passed_back_tags_the_call():
    x = _frame()
    arr = tether.get_global_func("testing.make_array_with_tensor")(x)
    echoed = tether.get_global_func("testing.echo")(arr)
    assert echoed is arr
    assert isinstance(echoed[0], FrameTensor)


def test_calls_made_inside_a_call_do_not_take_its_framework():
    inner = []

    def callback(t):
        # a call made from the callback, with no framework argument
        inner.append(tether.get_global_func("testing.echo")(tether.from_dlpack(np.zeros(2, dtype="float32"))))
        return t

    f = tether.convert(callback)
    out = f(_frame())
    assert isinstance(out, FrameTensor)
    assert isinstance(inner[0], tether.Tensor)


try:
    import torch
except ImportError:
    torch = None


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
def test_torch_tensors_come_back_as_torch_tensors():
    x = torch.arange(8, dtype=torch.float32)
    y = tether.get_global_func("testing.echo")(x)
    assert isinstance(y, torch.Tensor) and y.data_ptr() == x.data_ptr()
    arr = tether.get_global_func("testing.make_array_with_tensor")(x)
    assert isinstance(arr[0], torch.Tensor) and arr[0].data_ptr() == x.data_ptr()
