"""tether.utils' submodules and their neighbours, against what they promise
and, where apache-tvm-ffi (the peer) is installed, against the peer's
modules of the same name: FileLock between processes, keyword wrappers,
dataclass unpacking, CUBIN embedding with binutils, NVRTC and the torch
DLPack add-on without their optional dependencies, the C++ ABI header
generator on py_class types, and the GPU test lock."""

import ctypes
import dataclasses
import importlib
import inspect
import os
import shutil
import subprocess
import sys
import textwrap
import typing
from pathlib import Path
from typing import Any, Optional

import pytest

import tether
import tether.dataclasses as dc
from tether.dataclasses import py_class
from tether.utils import FileLock, kwargs_wrapper
from tether.utils.lockfile import FileLock as FileLockFromModule
from tether.utils.unpack_dataclass import unpack_dataclass_to_tuple

HERE = Path(__file__).resolve().parent
PYTHON_ROOT = Path(tether.__file__).resolve().parent.parent


def _child_env(**extra: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PYTHON_ROOT), env.get("PYTHONPATH")) if p)
    env.update(extra)
    return env


class _LockHolder:
    """Another process that takes a FileLock, reports it, and keeps it
    until told to go."""

    SCRIPT = textwrap.dedent("""
        import sys
        from tether.utils.lockfile import FileLock
        lock = FileLock(sys.argv[1])
        print("took" if lock.blocking_acquire(timeout=30, poll_interval=0.01) else "missed", flush=True)
        sys.stdin.readline()
        if sys.argv[2] == "release":
            lock.release()
            print("released", flush=True)
            sys.stdin.readline()
    """)

    def __init__(self, path: Path, mode: str = "release") -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", self.SCRIPT, str(path), mode],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=_child_env(),
        )
        assert self.proc.stdout.readline().strip() == "took"

    def step(self) -> str:
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline().strip()

    def close(self) -> None:
        try:
            self.proc.stdin.close()
        finally:
            self.proc.wait(timeout=30)


def _try_in_other_process(path: Path) -> bool:
    code = "import sys; from tether.utils.lockfile import FileLock; print(FileLock(sys.argv[1]).acquire())"
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                         env=_child_env(), check=True)
    return out.stdout.strip() == "True"


# ---------------------------------------------------------------------------
# utils package


def test_utils_package_exports_upstream_names():
    assert tether.utils.FileLock is FileLockFromModule
    assert tether.utils.kwargs_wrapper is importlib.import_module("tether.utils.kwargs_wrapper")
    assert tether.utils.ObjectConvertible is tether.core.ObjectConvertible


def test_utils_package_names_match_peer():
    upstream = pytest.importorskip("tvm_ffi.utils", reason="needs apache-tvm-ffi (the peer) to compare")
    public = {n for n in vars(upstream) if not n.startswith("_")} - {"annotations"}
    mine = {n for n in vars(tether.utils) if not n.startswith("_")}
    assert public <= mine


# ---------------------------------------------------------------------------
# FileLock


def test_filelock_excludes_another_process_and_releases(tmp_path):
    path = tmp_path / "a.lock"
    lock = FileLock(str(path))
    assert lock.acquire() is True
    assert path.exists()
    assert _try_in_other_process(path) is False
    lock.release()
    assert _try_in_other_process(path) is True
    lock.release()  # releasing an unheld lock does nothing


def test_filelock_waits_for_another_process(tmp_path):
    path = tmp_path / "b.lock"
    holder = _LockHolder(path)
    try:
        lock = FileLock(str(path))
        assert lock.acquire() is False
        with pytest.raises(TimeoutError, match="Failed to acquire lock on .* after 0.2 seconds"):
            lock.blocking_acquire(timeout=0.2, poll_interval=0.02)
        assert holder.step() == "released"
        assert lock.blocking_acquire(timeout=10, poll_interval=0.02) is True
        lock.release()
    finally:
        holder.close()


def test_filelock_is_released_when_its_holder_exits(tmp_path):
    path = tmp_path / "c.lock"
    holder = _LockHolder(path, mode="exit")
    assert FileLock(str(path)).acquire() is False
    holder.step()
    holder.close()
    lock = FileLock(str(path))
    assert lock.blocking_acquire(timeout=10, poll_interval=0.02) is True
    lock.release()


def test_filelock_one_instance_holds_once(tmp_path):
    lock = FileLock(str(tmp_path / "d.lock"))
    assert lock.acquire() is True
    assert lock.acquire() is False
    with pytest.raises(RuntimeError, match="already held by this instance"):
        lock.blocking_acquire()
    lock.release()
    assert lock.acquire() is True
    lock.release()


def test_filelock_context_manager(tmp_path):
    path = tmp_path / "e.lock"
    lock = FileLock(str(path))
    with lock as entered:
        assert entered is lock
        assert _try_in_other_process(path) is False
    assert _try_in_other_process(path) is True
    with pytest.raises(KeyError):
        with FileLock(str(path)):
            assert _try_in_other_process(path) is False
            raise KeyError("propagates")
    assert _try_in_other_process(path) is True
    assert lock.__exit__(None, None, None) is False


def test_filelock_unopenable_path_is_not_acquired(tmp_path):
    lock = FileLock(str(tmp_path / "missing-dir" / "f.lock"))
    assert lock.acquire() is False
    with pytest.raises(TimeoutError):
        lock.blocking_acquire(timeout=0.05, poll_interval=0.01)


def test_filelock_signature_matches_peer():
    upstream = pytest.importorskip("tvm_ffi.utils.lockfile", reason="needs apache-tvm-ffi (the peer) to compare")
    for name in ("__init__", "__enter__", "__exit__", "acquire", "blocking_acquire", "release"):
        mine = inspect.signature(getattr(FileLock, name))
        theirs = inspect.signature(getattr(upstream.FileLock, name))
        assert list(mine.parameters) == list(theirs.parameters), name
        assert [p.default for p in mine.parameters.values()] == [p.default for p in theirs.parameters.values()]


# ---------------------------------------------------------------------------
# kwargs_wrapper


def _target(*args):
    return args


def _prototype(a, b=1, c=None, *, d, e=(1, 2), g=True):
    """Prototype docstring."""


@dataclasses.dataclass
class _Pair:
    x: int
    y: float


def _shape(sig: inspect.Signature, missing: Any) -> list:
    return [(p.name, p.kind, "MISSING" if p.default is missing else p.default) for p in sig.parameters.values()]


def test_kwargs_wrapper_signature_and_calls():
    missing = tether.core.MISSING
    w = kwargs_wrapper.make_kwargs_wrapper(_target, ["a", "b", "c"], (1, None), ["d", "e"], {"e": [1]})
    assert _shape(inspect.signature(w), missing) == [
        ("a", inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.empty),
        ("b", inspect.Parameter.POSITIONAL_OR_KEYWORD, "MISSING"),
        ("c", inspect.Parameter.POSITIONAL_OR_KEYWORD, None),
        ("d", inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.empty),
        ("e", inspect.Parameter.KEYWORD_ONLY, "MISSING"),
    ]
    assert w(0, d=3) == (0, 1, None, 3, [1])
    assert w(0, 5, 6, d=7, e=8) == (0, 5, 6, 7, 8)
    assert w(a=0, c=2, d=3) == (0, 1, 2, 3, [1])
    assert w.__name__ == "wrapper" and w.__module__ is None
    with pytest.raises(TypeError):
        w(0)  # d is required
    with pytest.raises(TypeError):
        w(0, 1, 2, 3)  # d is keyword-only


def test_kwargs_wrapper_from_signature_with_prototype_and_dataclass():
    w = kwargs_wrapper.make_kwargs_wrapper_from_signature(
        _target, inspect.signature(_prototype), prototype=_prototype, exclude_arg_names=["g", "unknown"],
        map_dataclass_to_tuple=["a"],
    )
    own = inspect.signature(w, follow_wrapped=False)
    assert list(own.parameters) == ["a", "b", "c", "d", "e"]  # "g" excluded
    assert inspect.signature(w) == inspect.signature(_prototype)  # reported through __wrapped__
    assert w(_Pair(1, 2.0), d=4) == ((1, 2.0), 1, None, 4, (1, 2))
    assert w.__name__ == "_prototype" and w.__doc__ == "Prototype docstring." and w.__wrapped__ is _prototype


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(arg_names=["a", "a"]), ValueError, "Duplicate argument names"),
    (dict(arg_names=["class"]), ValueError, "is a Python keyword"),
    (dict(arg_names=["1x"]), ValueError, "not a valid Python identifier"),
    (dict(arg_names=[1]), TypeError, "Argument name must be a string"),
    (dict(arg_names=["a"], arg_defaults=[1]), TypeError, "arg_defaults must be a tuple"),
    (dict(arg_names=["a"], arg_defaults=(1, 2)), ValueError, "has 2 values but only 1 positional"),
    (dict(arg_names=["a"], kwonly_names=["a"]), ValueError, "both positional and keyword-only"),
    (dict(arg_names=["__i_MISSING"]), ValueError, "conflict with internal names"),
    (dict(arg_names=[], kwonly_names=["x"], kwonly_defaults={"y": 1}), ValueError, "not in kwonly_names"),
])
def test_kwargs_wrapper_rejects(kwargs, error, message):
    with pytest.raises(error, match=message):
        kwargs_wrapper.make_kwargs_wrapper(_target, **kwargs)


def test_kwargs_wrapper_from_signature_rejects():
    P = inspect.Parameter
    with pytest.raises(ValueError, match=r"\*args not supported"):
        kwargs_wrapper.make_kwargs_wrapper_from_signature(_target, inspect.Signature([P("a", P.VAR_POSITIONAL)]))
    with pytest.raises(ValueError, match=r"\*\*kwargs not supported"):
        kwargs_wrapper.make_kwargs_wrapper_from_signature(_target, inspect.Signature([P("k", P.VAR_KEYWORD)]))
    bad = inspect.Signature.__new__(inspect.Signature)
    bad._parameters = {"a": P("a", P.POSITIONAL_OR_KEYWORD, default=1), "b": P("b", P.POSITIONAL_OR_KEYWORD)}
    with pytest.raises(ValueError, match="Required positional parameter 'b' cannot follow"):
        kwargs_wrapper.make_kwargs_wrapper_from_signature(_target, bad)


def test_kwargs_wrapper_matches_peer():
    upstream = pytest.importorskip("tvm_ffi.utils.kwargs_wrapper", reason="needs apache-tvm-ffi (the peer) to compare")
    import tvm_ffi.core

    cases = [
        (["a", "b", "c"], (1, None), ["d", "e"], {"e": [1]}),
        (["x"], (), [], {}),
        ([], (), ["k"], {"k": False}),
        (["p", "q"], (True, 2.5), [], {}),
    ]
    for names, defaults, kwonly, kwdefaults in cases:
        mine = kwargs_wrapper.make_kwargs_wrapper(_target, names, defaults, kwonly, kwdefaults)
        theirs = upstream.make_kwargs_wrapper(_target, names, defaults, kwonly, kwdefaults)
        assert _shape(inspect.signature(mine), tether.core.MISSING) == _shape(
            inspect.signature(theirs), tvm_ffi.core.MISSING)
        args = [object() for _ in names[: len(names) - len(defaults)]]
        kw = {k: 0 for k in kwonly if k not in kwdefaults}
        assert mine(*args, **kw) == theirs(*args, **kw)
        assert (mine.__name__, mine.__qualname__, mine.__module__) == (
            theirs.__name__, theirs.__qualname__, theirs.__module__)
    for bad in ([1], ["a", "a"], ["def"]):
        with pytest.raises(Exception) as mine_err:
            kwargs_wrapper.make_kwargs_wrapper(_target, bad)
        with pytest.raises(Exception) as their_err:
            upstream.make_kwargs_wrapper(_target, bad)
        assert (type(mine_err.value), str(mine_err.value)) == (type(their_err.value), str(their_err.value))


# ---------------------------------------------------------------------------
# unpack_dataclass


@dataclasses.dataclass
class _Inner:
    x: int
    y: float


@dataclasses.dataclass
class _Outer:
    inner: _Inner
    items: list
    table: dict
    nxt: "Optional[_Outer]" = None
    pair: tuple = ()
    leaf: "tuple[int, str]" = (0, "")


@dataclasses.dataclass
class _Empty:
    pass


_Named = typing.NamedTuple("_Named", [("a", Any), ("b", int)])


def _outer_sample():
    return _Outer(_Inner(1, 2.0), [_Inner(3, 4.0), 5], {"k": _Inner(5, 6.0)},
                  _Outer(_Inner(0, 0.0), [], {}), (_Named(_Inner(7, 8.0), 9),), (1, "s"))


def test_unpack_dataclass_to_tuple():
    value = _outer_sample()
    assert unpack_dataclass_to_tuple(value) == (
        (1, 2.0), [(3, 4.0), 5], {"k": (5, 6.0)}, ((0, 0.0), [], {}, None, (), (0, "")),
        (_Named((7, 8.0), 9),), (1, "s"),
    )
    out = unpack_dataclass_to_tuple(value)
    assert type(out[4][0]) is _Named
    assert out[5] is value.leaf  # leaves are not copied
    assert unpack_dataclass_to_tuple(_Empty()) == ()
    assert unpack_dataclass_to_tuple([_Inner(1, 2.0)]) == [(1, 2.0)]
    leaf = object()
    assert unpack_dataclass_to_tuple(leaf) is leaf
    assert unpack_dataclass_to_tuple(3) == 3


def test_unpack_dataclass_plan():
    from tether.utils import unpack_dataclass as ud

    assert ud._extract_dataclass_to_tuple_schema(_Outer) == {
        "inner": {"x": None, "y": None}, "items": "unpack", "table": "unpack", "nxt": "unpack",
        "pair": "unpack", "leaf": None,
    }
    with pytest.raises(TypeError, match="Expected a dataclass class"):
        ud._extract_dataclass_to_tuple_schema(int)
    with pytest.raises(ValueError, match="not a valid Python identifier"):
        ud._validate_dataclass_to_tuple_schema({"a b": None})
    with pytest.raises(ValueError, match="is a Python keyword"):
        ud._validate_dataclass_to_tuple_schema({"class": None})


def test_unpack_dataclass_matches_peer():
    upstream = pytest.importorskip("tvm_ffi.utils.unpack_dataclass",
                                   reason="needs apache-tvm-ffi (the peer) to compare")
    value = _outer_sample()
    assert unpack_dataclass_to_tuple(value) == upstream.unpack_dataclass_to_tuple(value)
    from tether.utils import unpack_dataclass as ud

    for cls in (_Inner, _Outer, _Empty):
        assert ud._extract_dataclass_to_tuple_schema(cls) == upstream._extract_dataclass_to_tuple_schema(cls)


# ---------------------------------------------------------------------------
# embed_cubin

_BINUTILS = shutil.which("ld") and shutil.which("objcopy") and shutil.which("cc")
_EMBED_USER = r"""
extern const char __tvm_ffi__cubin_my_kernels[];
extern const char __tvm_ffi__cubin_my_kernels_end[];
long cubin_size(void) { return __tvm_ffi__cubin_my_kernels_end - __tvm_ffi__cubin_my_kernels; }
const char* cubin_data(void) { return __tvm_ffi__cubin_my_kernels; }
"""
_FAKE_CUBIN = b"\x7fELF fake cubin \x00\x01\x02" + bytes(range(256)) * 3


@pytest.fixture
def cubin_inputs(tmp_path):
    if not _BINUTILS:
        pytest.skip("needs ld, objcopy and a C compiler")
    src = tmp_path / "user.c"
    src.write_text(_EMBED_USER)
    obj = tmp_path / "user.o"
    subprocess.run(["cc", "-c", "-fPIC", str(src), "-o", str(obj)], check=True)
    cubin = tmp_path / "kernels.cubin"
    cubin.write_bytes(_FAKE_CUBIN)
    return tmp_path, obj, cubin


def test_embed_cubin_links_image_as_local_symbols(cubin_inputs):
    from tether.utils.embed_cubin import embed_cubin

    tmp, obj, cubin = cubin_inputs
    out = tmp / "combined.o"
    embed_cubin(cubin, obj, out, "my_kernels")
    symbols = subprocess.run(["nm", str(out)], capture_output=True, text=True, check=True).stdout
    kinds = {line.split()[-1]: line.split()[-2] for line in symbols.splitlines() if line.strip()}
    assert kinds["__tvm_ffi__cubin_my_kernels"] == "r"  # local, read-only
    assert kinds["__tvm_ffi__cubin_my_kernels_end"] == "r"
    sections = subprocess.run(["readelf", "-S", str(out)], capture_output=True, text=True, check=True).stdout
    assert ".note.GNU-stack" in sections
    lib = tmp / "libcombined.so"
    subprocess.run(["cc", "-shared", str(out), "-o", str(lib)], check=True)
    dll = ctypes.CDLL(str(lib))
    dll.cubin_size.restype = ctypes.c_long
    dll.cubin_data.restype = ctypes.c_void_p
    assert dll.cubin_size() == len(_FAKE_CUBIN)
    assert ctypes.string_at(dll.cubin_data(), dll.cubin_size()) == _FAKE_CUBIN


def test_embed_cubin_same_object_as_peer(cubin_inputs):
    pytest.importorskip("tvm_ffi.utils.embed_cubin", reason="needs apache-tvm-ffi (the peer) to compare")
    tmp, obj, cubin = cubin_inputs
    outputs = {}
    for package in ("tether", "tvm_ffi"):
        out = tmp / f"{package}.o"
        done = subprocess.run(
            [sys.executable, "-m", f"{package}.utils.embed_cubin", "--output-obj", str(out), "--input-obj", str(obj),
             "--cubin", str(cubin), "--name", "my_kernels"],
            capture_output=True, text=True, env=_child_env(),
        )
        assert done.returncode == 0, done.stderr
        outputs[package] = out.read_bytes()
    assert outputs["tether"] == outputs["tvm_ffi"]


def test_embed_cubin_missing_inputs_and_tools(cubin_inputs, tmp_path, monkeypatch, capsys):
    from tether.utils import embed_cubin as module

    tmp, obj, cubin = cubin_inputs
    with pytest.raises(FileNotFoundError, match="CUBIN file not found"):
        module.embed_cubin(tmp / "nope.cubin", obj, tmp / "o.o", "k")
    with pytest.raises(FileNotFoundError, match="Input object file not found"):
        module.embed_cubin(cubin, tmp / "nope.o", tmp / "o.o", "k")
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(RuntimeError, match=r"'ld' and 'objcopy' are not on PATH.*binutils"):
        module.embed_cubin(cubin, obj, tmp / "o.o", "k")
    assert module.main(["--output-obj", str(tmp / "o.o"), "--input-obj", str(obj), "--cubin", str(cubin),
                        "--name", "k"]) == 2
    assert "binutils" in capsys.readouterr().err
    assert module.main(["--output-obj", str(tmp / "o.o"), "--input-obj", str(obj), "--cubin", str(tmp / "x"),
                        "--name", "k"]) == 1


# ---------------------------------------------------------------------------
# nvrtc


def test_nvrtc_without_cuda_python_names_the_package(monkeypatch):
    from tether.cpp import nvrtc

    monkeypatch.setitem(sys.modules, "cuda", None)  # as if cuda-python were not installed
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)
    with pytest.raises(RuntimeError, match="cuda-python") as err:
        nvrtc.nvrtc_compile('extern "C" __global__ void k() {}', arch="sm_80")
    assert isinstance(err.value.__cause__, ImportError)
    assert list(inspect.signature(nvrtc.nvrtc_compile).parameters) == ["source", "name", "arch", "extra_opts"]


def test_nvrtc_signature_matches_peer():
    upstream = pytest.importorskip("tvm_ffi.cpp.nvrtc", reason="needs apache-tvm-ffi (the peer) to compare")
    from tether.cpp import nvrtc

    mine, theirs = inspect.signature(nvrtc.nvrtc_compile), inspect.signature(upstream.nvrtc_compile)
    assert [(p.name, p.kind, p.default) for p in mine.parameters.values()] == [
        (p.name, p.kind, p.default) for p in theirs.parameters.values()]


# ---------------------------------------------------------------------------
# the optional torch add-on


def test_optional_torch_c_dlpack_without_torch(monkeypatch):
    from tether import _optional_torch_c_dlpack as mod

    monkeypatch.setitem(sys.modules, "torch", None)
    assert mod.load_torch_c_dlpack_extension() is None
    assert mod.patch_torch_cuda_stream_protocol() is None


def test_optional_torch_c_dlpack_exchange_attribute():
    from tether import _optional_torch_c_dlpack as mod

    class Plain:
        pass

    class Current:
        __dlpack_c_exchange_api__ = "already"

    class Legacy:
        __c_dlpack_exchange_api__ = 0x1234

    class LegacyCapsule:
        __c_dlpack_exchange_api__ = "some capsule"

    assert mod._check_and_update_dlpack_c_exchange_api(Plain) is False
    assert not hasattr(Plain, "__dlpack_c_exchange_api__")
    assert mod._check_and_update_dlpack_c_exchange_api(Current) is True
    assert mod._check_and_update_dlpack_c_exchange_api(LegacyCapsule) is True
    assert LegacyCapsule.__dlpack_c_exchange_api__ == "some capsule"
    assert mod._check_and_update_dlpack_c_exchange_api(Legacy) is True
    capsule = Legacy.__dlpack_c_exchange_api__
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    assert get(capsule, b"dlpack_exchange_api") == 0x1234


def test_optional_torch_c_dlpack_names_follow_torch_build():
    from tether import _optional_torch_c_dlpack as mod

    class FakeTorch:
        __version__ = "2.5.1+cu124"

        class cuda:
            @staticmethod
            def is_available():
                return True

        class version:
            cuda = None
            hip = "6.2"

        @staticmethod
        def compiled_with_cxx11_abi():
            return True

    assert mod._torch_extension_device(FakeTorch) == "rocm"
    FakeTorch.version.cuda = "12.4"
    assert mod._torch_extension_device(FakeTorch) == "cuda"
    name = mod._addon_libname(FakeTorch, "cuda")
    assert name.startswith("libtorch_c_dlpack_addon_torch25-cuda-") and name.endswith(".so")
    FakeTorch.__version__ = "2.5.1+cpu"
    assert mod._addon_libname(FakeTorch, "cuda") != name  # another build, another cache entry


def test_build_script_without_torch_names_torch():
    code = "import sys; sys.modules['torch'] = None; import tether.utils._build_optional_torch_c_dlpack"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_child_env())
    assert done.returncode != 0
    assert "ModuleNotFoundError" in done.stderr and "`torch` package" in done.stderr


def test_build_script_source_exports_the_entry_point():
    pytest.importorskip("torch", reason="the add-on build script needs torch")
    from tether.utils import _build_optional_torch_c_dlpack as build

    assert 'extern "C" TETHER_ADDON_EXPORT int64_t TorchDLPackExchangeAPIPtr()' in build.cpp_source
    assert build.get_cpp_standard() in ("c++17", "c++20")


# ---------------------------------------------------------------------------
# gen_abi_cpp


@py_class("tests.abi.Point")
class _AbiPoint(dc.Object):
    x: int = 0
    name: str = ""
    weight: float = 0.0


@py_class("tests.abi.Shape")
class _AbiShape(_AbiPoint):
    corner: _AbiPoint = None
    maybe: Optional[_AbiPoint] = None
    points: list[_AbiPoint] = None
    by_name: dict[str, int] = None
    anything: Any = None
    callback: tether.Function = None


@py_class("tests.abi.odd-name")
class _AbiOdd(dc.Object):
    v: int = 0


@py_class("tests.abi_ref.Holder")
class _AbiHolder(dc.Object):
    target: _AbiOdd = None


@py_class("tests.abi.Flag")
class _AbiFlag(dc.Object):
    on: bool = False


def test_gen_abi_cpp_on_py_classes():
    from tether.core import _lookup_or_register_type_info_from_type_key
    from tether.dataclasses.gen_abi_cpp import gen_abi_cpp

    header = gen_abi_cpp(["tests.abi.Point", "tests.abi.Shape"])
    lines = header.splitlines()
    assert lines[:3] == ["#pragma once", "", "#include <tvm/ffi/tvm_ffi.h>"]
    assert "struct alignas(8) PointObj : public ::tvm::ffi::Object {" in lines
    assert "struct alignas(8) ShapeObj : public ::tests::abi::PointObj {" in lines
    assert '  TVM_FFI_DECLARE_OBJECT_INFO_LOOKUP("tests.abi.Shape", 2);' in lines
    assert "inline constexpr bool tvm::ffi::is_object_subclass_v<::tests::abi::ShapeObj> = true;" in lines
    carriers = {
        "x": "int64_t", "name": "::tvm::ffi::String", "weight": "double",
        "corner": "::tvm::ffi::Arc<::tests::abi::PointObj>", "maybe": "::tvm::ffi::Any",
        "points": "::tvm::ffi::List<::tvm::ffi::Arc<::tests::abi::PointObj>>",
        "by_name": "::tvm::ffi::Dict<::tvm::ffi::String, int64_t>", "anything": "::tvm::ffi::Any",
        "callback": "::tvm::ffi::Function",
    }
    for key, cls in (("tests.abi.Point", "PointObj"), ("tests.abi.Shape", "ShapeObj")):
        info = _lookup_or_register_type_info_from_type_key(key)
        for f in info.fields:
            if f.name == "maybe" and (f.size, f.alignment) == (8, 8):
                # stored as one nullable pointer rather than an Any
                carriers["maybe"] = "::tvm::ffi::ObjectPtr<::tests::abi::PointObj>"
            member = f"  {carriers[f.name]} {f.name};  // offset={f.offset}, size={f.size}, align={f.alignment}"
            assert member in lines, member
            assert f"static_assert(offsetof({cls}, {f.name}) == {f.offset});" in lines
    assert header.index("struct alignas(8) PointObj") < header.index("struct alignas(8) ShapeObj")
    assert gen_abi_cpp("tests.abi.S*") == header  # parents come along


def test_gen_abi_cpp_escapes_and_opaque_references():
    from tether.dataclasses.gen_abi_cpp import gen_abi_cpp

    header = gen_abi_cpp("tests.abi_ref.Holder")
    escaped = "__ffi_escape_" + "odd-name".encode().hex() + "Obj"
    assert f"struct {escaped} : public ::tvm::ffi::Object {{" in header  # declared only, not laid out
    assert '  TVM_FFI_DECLARE_OBJECT_INFO_LOOKUP("tests.abi.odd-name", 1);' in header
    assert f"  ::tvm::ffi::Arc<::tests::abi::{escaped}> target;" in header


def test_gen_abi_cpp_errors():
    from tether.dataclasses.gen_abi_cpp import gen_abi_cpp

    with pytest.raises(ValueError, match="did not match any registered type"):
        gen_abi_cpp("tests.no_such.*")
    with pytest.raises(ValueError, match="did not match any registered object type"):
        gen_abi_cpp("int")
    # A builtin container in the selection is left to TVM-FFI's headers; the
    # py_class beside it is laid out natively (a one-byte bool after the header).
    header = gen_abi_cpp(["ffi.Array", "tests.abi.Flag"])
    assert "static_assert(offsetof(FlagObj, on) == 24);" in header
    assert "struct alignas(8) ArrayObj" not in header


def test_gen_abi_cpp_refuses_a_layout_it_cannot_carry():
    """A Python ``bool`` field is viewed as C++ ``bool`` (one byte); when the
    reflected slot has another size the generator refuses instead of
    guessing."""
    from tether.core import _lookup_or_register_type_info_from_type_key
    from tether.dataclasses.gen_abi_cpp import gen_abi_cpp

    (flag,) = _lookup_or_register_type_info_from_type_key("tests.abi.Flag").fields
    if (flag.size, flag.alignment) == (1, 1):
        assert "  bool on;  // offset=" in gen_abi_cpp("tests.abi.Flag")
    else:
        with pytest.raises(ValueError, match=r"Carrier bool for tests.abi.Flag.on has layout \(1, 1\)"):
            gen_abi_cpp("tests.abi.Flag")


def test_gen_abi_cpp_header_compiles_against_tvm_ffi_headers(tmp_path):
    tvm_ffi_libinfo = pytest.importorskip("tvm_ffi.libinfo", reason="needs apache-tvm-ffi's C++ headers")
    cxx = shutil.which(os.environ.get("CXX", "c++"))
    if cxx is None:
        pytest.skip("needs a C++ compiler")
    from tether.dataclasses.gen_abi_cpp import gen_abi_cpp

    (tmp_path / "abi.h").write_text(gen_abi_cpp(["tests.abi.Shape", "tests.abi_ref.*"]))
    (tmp_path / "main.cc").write_text('#include "abi.h"\nint main() { return 0; }\n')
    includes = [f"-I{tvm_ffi_libinfo.find_include_path()}", f"-I{tvm_ffi_libinfo.find_dlpack_include_path()}"]
    done = subprocess.run([cxx, "-std=c++17", "-fsyntax-only", *includes, str(tmp_path / "main.cc")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]


def test_gen_abi_cpp_matches_peer_text():
    """The same class bodies under py_class of both runtimes give the same header."""
    pytest.importorskip("tvm_ffi", reason="needs apache-tvm-ffi (the peer) to compare")
    code = textwrap.dedent("""
        import sys
        from typing import Any, Optional
        if sys.argv[1] == "tether":
            import tether as ffi
        else:
            import tvm_ffi as ffi
        from importlib import import_module
        py_class = import_module(ffi.__name__ + ".dataclasses").py_class
        gen_abi_cpp = import_module(ffi.__name__ + ".dataclasses.gen_abi_cpp").gen_abi_cpp

        @py_class("peer.A")
        class A(ffi.Object):
            x: int = 0
            s: str = ""
            o: Optional["A"] = None

        @py_class("peer.sub.B")
        class B(A):
            f: float = 0.0
            a: A = None
            l: list[int] = None
            d: dict[str, A] = None
            y: Any = None
            u: "int | str" = 0
            lo: list[Optional[A]] = None
            fn: ffi.Function = None

        @py_class("peer.C-1")
        class C(ffi.Object):
            c: "B" = None

        sys.stdout.write(gen_abi_cpp("peer.*"))
        sys.stdout.write(gen_abi_cpp(["peer.C-1"]))
    """)
    outputs = {}
    for runtime in ("tether", "tvm_ffi"):
        done = subprocess.run([sys.executable, "-c", code, runtime], capture_output=True, text=True,
                              env=_child_env())
        assert done.returncode == 0, done.stderr
        outputs[runtime] = done.stdout
    assert outputs["tether"] == outputs["tvm_ffi"]


# ---------------------------------------------------------------------------
# testing._locking


def test_run_with_gpu_lock(tmp_path, monkeypatch):
    from tether.testing import _locking

    monkeypatch.setenv("TETHER_TEST_LOCK_DIR", str(tmp_path / "locks"))
    monkeypatch.setattr(_locking, "_GPU_LOCK_PATH", None)
    lock_file = tmp_path / "locks" / "gpu.lock"

    def body(a, *, b):
        assert lock_file.exists()
        assert _try_in_other_process(lock_file) is False
        return a + b

    assert _locking.run_with_gpu_lock(body, 1, b=2) == 3
    assert _locking._GPU_LOCK_PATH == lock_file
    assert _try_in_other_process(lock_file) is True
    with pytest.raises(ZeroDivisionError):
        _locking.run_with_gpu_lock(lambda: 1 / 0)
    assert _try_in_other_process(lock_file) is True


def test_gpu_lock_default_directory_is_per_user(tmp_path, monkeypatch):
    from tether.testing import _locking

    for var in ("TETHER_TEST_LOCK_DIR", "TVM_FFI_TEST_LOCK_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(_locking.tempfile, "gettempdir", lambda: str(tmp_path))
    monkeypatch.setattr(_locking.getpass, "getuser", lambda: "someone")
    assert _locking._ensure_gpu_lock_path() == tmp_path / "tvm-ffi-test-locks-someone" / "gpu.lock"
    assert (tmp_path / "tvm-ffi-test-locks-someone").is_dir()
