"""Optional fast DLPack exchange with PyTorch.

Converting ``torch.Tensor`` values through Python's ``__dlpack__`` protocol
costs several Python calls per tensor.  PyTorch releases that implement the
DLPack C exchange API publish a table of C functions as
``torch.Tensor.__dlpack_c_exchange_api__`` (a ``PyCapsule`` named
``"dlpack_exchange_api"``), which FFI calls use directly.  For releases that
do not, this module supplies the table:

1. nothing to do when torch is absent or already publishes the attribute
   (an integer under the older name ``__c_dlpack_exchange_api__`` is
   wrapped into a capsule);
2. else the ``torch_c_dlpack_ext`` package, when installed, provides it;
3. else an add-on library is compiled once for the installed torch build
   (:mod:`tether.utils._build_optional_torch_c_dlpack`, in a child
   process), cached in ``$TETHER_CACHE_DIR`` (default ``~/.cache/tether``)
   under a name that encodes the torch version, its C++ ABI and the device
   backend, then loaded with ``ctypes``.

A failed build only warns; tensors then take the slower protocol path.
Importing this module does all of the above unless the environment sets
``TETHER_DISABLE_TORCH_C_DLPACK`` (or ``TVM_FFI_DISABLE_TORCH_C_DLPACK``) to
something other than ``0``.  It also gives ``torch.cuda.Stream`` the
``__cuda_stream__`` protocol where torch lacks it.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

_CAPSULE_NAME = b"dlpack_exchange_api"
_API_ATTR = "__dlpack_c_exchange_api__"
_LEGACY_API_ATTR = "__c_dlpack_exchange_api__"


def _torch_extension_device(torch_module: Any) -> str:
    """The backend part of the add-on's name: ``"cuda"``, ``"rocm"`` or ``"cpu"``."""
    if not torch_module.cuda.is_available():
        return "cpu"
    version = torch_module.version
    if getattr(version, "cuda", None) is None and getattr(version, "hip", None) is not None:
        return "rocm"
    return "cuda"


def _create_dlpack_exchange_api_capsule(ptr_as_int: int) -> Any:
    """A ``PyCapsule`` named ``"dlpack_exchange_api"`` holding the address ``ptr_as_int``."""
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype = ctypes.py_object
    new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return new_capsule(ctypes.c_void_p(ptr_as_int), _CAPSULE_NAME, None)


def _check_and_update_dlpack_c_exchange_api(tensor_cls: object) -> bool:
    """Whether ``tensor_cls`` publishes the exchange API.

    A class carrying only the older ``__c_dlpack_exchange_api__`` attribute
    gets ``__dlpack_c_exchange_api__`` set from it (an integer address is
    wrapped into a capsule) and counts as publishing it.
    """
    if hasattr(tensor_cls, _API_ATTR):
        return True
    if not hasattr(tensor_cls, _LEGACY_API_ATTR):
        return False
    legacy = getattr(tensor_cls, _LEGACY_API_ATTR)
    if isinstance(legacy, int):
        legacy = _create_dlpack_exchange_api_capsule(legacy)
    setattr(tensor_cls, _API_ATTR, legacy)
    return True


def _cache_dir() -> Path:
    return Path(os.environ.get("TETHER_CACHE_DIR", "~/.cache/tether")).expanduser()


def _addon_libname(torch: Any, device: str) -> str:
    """The cached add-on's file name.

    The add-on links libtorch's C++ ABI, so the name carries everything that
    distinguishes torch builds: version with build tag (``2.5.1+cu124``),
    the C++11 ABI flag and the backend.
    """
    major, minor = torch.__version__.split(".")[:2]
    build_id = f"{torch.__version__}|cxx11abi={int(torch.compiled_with_cxx11_abi())}"
    tag = hashlib.sha256(build_id.encode()).hexdigest()[:8]
    suffix = ".dll" if sys.platform.startswith("win") else ".so"
    return f"libtorch_c_dlpack_addon_torch{major}{minor}-{device}-{tag}{suffix}"


def _build_addon(cache_dir: Path, libname: str, device: str) -> None:
    """Run the build script in a child process; RuntimeError with its output on failure."""
    script = Path(__file__).parent / "utils" / "_build_optional_torch_c_dlpack.py"
    cmd = [sys.executable, str(script), "--output-dir", str(cache_dir), "--libname", libname]
    if device == "cuda":
        cmd.append("--build-with-cuda")
    elif device == "rocm":
        cmd.append("--build-with-rocm")
    env = dict(os.environ)
    # The child builds; it must never start a build of its own (whatever
    # it imports), nor have the start-up switch import tether for it.
    env["TETHER_DISABLE_TORCH_C_DLPACK"] = "1"
    env.pop("TETHER_PROVIDE_TVM_FFI", None)
    # The script imports tether; make sure it finds this very copy.
    package_root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    done = subprocess.run(cmd, check=False, capture_output=True, env=env)
    if done.returncode != 0:
        parts = [f"Build failed with status {done.returncode}"]
        if done.stdout:
            parts.append(f"stdout:\n{done.stdout.decode('utf-8', errors='replace')}")
        if done.stderr:
            parts.append(f"stderr:\n{done.stderr.decode('utf-8', errors='replace')}")
        raise RuntimeError("\n".join(parts))


def load_torch_c_dlpack_extension() -> Any:
    """Make ``torch.Tensor.__dlpack_c_exchange_api__`` available if possible.

    Returns the ``ctypes.CDLL`` of the add-on when this call compiled or
    loaded it, and ``None`` otherwise: torch is not installed, torch (or
    the ``torch_c_dlpack_ext`` package) already provides the API, or the
    add-on could not be built or loaded (then with a warning).
    """
    try:
        import torch  # noqa: PLC0415
        import torch.version  # noqa: PLC0415, F401
    except ImportError:
        return None
    if _check_and_update_dlpack_c_exchange_api(torch.Tensor):
        return None

    try:
        import torch_c_dlpack_ext  # noqa: PLC0415, F401
    except (ImportError, AttributeError):
        # AttributeError: the package was built for another torch ABI and
        # its library lacks symbols; compiling our own may still work.
        pass
    else:
        if _check_and_update_dlpack_c_exchange_api(torch.Tensor):
            return None

    try:
        cache_dir = _cache_dir()
        device = _torch_extension_device(torch)
        lib_path = cache_dir / _addon_libname(torch, device)
        if not lib_path.exists():
            logger.debug("compiling the torch C DLPack add-on into %s", cache_dir)
            _build_addon(cache_dir, lib_path.name, device)
            if not lib_path.exists():
                raise RuntimeError("Failed to build torch c dlpack addon.")
        lib = ctypes.CDLL(str(lib_path))
        api_ptr = lib.TorchDLPackExchangeAPIPtr
        api_ptr.restype = ctypes.c_uint64
        api_ptr.argtypes = []
        setattr(torch.Tensor, _API_ATTR, _create_dlpack_exchange_api_capsule(api_ptr()))
        return lib
    except ImportError:
        return None
    except Exception:  # noqa: BLE001 - any failure falls back to the Python protocol
        warnings.warn(
            "Failed to JIT torch c dlpack extension, EnvTensorAllocator will not be enabled.\n"
            "We recommend installing via `pip install torch-c-dlpack-ext`"
        )
    return None


def patch_torch_cuda_stream_protocol() -> None:
    """Give ``torch.cuda.Stream`` a ``__cuda_stream__`` method returning
    ``(0, stream handle)`` when CUDA is available and torch lacks it."""
    try:
        import torch  # noqa: PLC0415

        if not torch.cuda.is_available() or hasattr(torch.cuda.Stream, "__cuda_stream__"):
            return
    except ImportError:
        return

    def __cuda_stream__(self: Any) -> tuple:
        return (0, self.cuda_stream)

    setattr(torch.cuda.Stream, "__cuda_stream__", __cuda_stream__)


def _disabled() -> bool:
    return any(
        os.environ.get(name, "0") != "0"
        for name in ("TETHER_DISABLE_TORCH_C_DLPACK", "TVM_FFI_DISABLE_TORCH_C_DLPACK")
    )


if not _disabled():
    _LIB = load_torch_c_dlpack_extension()  # keeps the add-on loaded for the process
    patch_torch_cuda_stream_protocol()
