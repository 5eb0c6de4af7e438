"""tether: one Python wrapper per native object, over the TVM-FFI object ABI.

Objects returned by the FFI (function results, callback arguments, field
reads, container items) come back as their one canonical wrapper, so
``a.x is a.x`` and ``f(x) is x``; while a native owner keeps an object alive,
dropping and re-fetching its wrapper gives back the same ``id``.
"""

# Names as tvm_ffi's package offers them; the order is the import order of
# the layers (core first, then the modules that register into it).
import sys
from typing import TYPE_CHECKING


def _is_config_mode() -> bool:
    """Whether the process is the ``tether-config`` command (which needs
    no more than the paths, so skips loading the core)."""
    if sys.argv and sys.argv[0].endswith(("tether-config", "tvm-ffi-config")):
        return True
    argv = getattr(sys, "orig_argv", ())
    return any(a == "-m" and i + 1 < len(argv) and argv[i + 1] in ("tether.config", "tvm_ffi.config")
               for i, a in enumerate(argv))


from . import libinfo  # noqa: E402

LIB = libinfo.load_lib_ctypes("tether", "tether", "RTLD_LOCAL")

from . import core  # noqa: E402
from .core import (  # noqa: E402
    Bytes, CAny, CContainerBase, Device, DLDeviceType, Error, Function, Object, ObjectConvertible, String,
    Tensor, convert, convert_func, from_dlpack,
)
from . import _dtype  # noqa: E402  (makes dtype the class of returned data types)
from ._dtype import dtype  # noqa: E402
from ._dtype import (  # noqa: E402
    bfloat16, bool, float4_e2m1fn, float4_e2m1fnx2, float6_e2m3fn, float6_e3m2fn, float8_e3m4, float8_e4m3,
    float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu,
    float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
)
from .registry import (  # noqa: E402
    get_global_func, get_global_func_metadata, init_ffi_api, register_global_func, register_object,
    remove_global_func,
)
from . import _ffi_api  # noqa: E402
from .error import register_error  # noqa: E402
from .container import Array, Dict, List, Map, Shape  # noqa: E402
from .method import method  # noqa: E402
from .core.device import device  # noqa: E402
from .tensor import StreamContext, get_raw_stream, use_raw_stream, use_torch_stream  # noqa: E402
from .module import Module, load_module, system_lib  # noqa: E402
from .structural import (  # noqa: E402
    DefRegionKind, InplaceMode, StructuralKey, StructuralMutator, StructuralVisitor, VisitInterrupt, WalkOrder,
    WalkResult, get_first_structural_mismatch, structural_equal, structural_hash, structural_map,
    structural_mutate, structural_visit, structural_walk,
)
from . import (  # noqa: E402
    _convert, _dunder, _optional_torch_c_dlpack, _tensor, _version, access_path, config, container, cpp,
    dataclasses, error, module, registry, serialization, stream, structural, testing, type_info, type_schema,
    utils,
)
from . import stub  # noqa: E402
from ._version import __version__, __version_tuple__  # noqa: E402
from .provide import provide_tvm_ffi  # noqa: E402

__all__ = [
    "Array", "Bytes", "CAny", "CContainerBase", "DLDeviceType", "DefRegionKind", "Device", "Dict", "Error",
    "Function", "InplaceMode", "LIB", "List", "Map", "Module", "Object", "ObjectConvertible", "Shape",
    "StreamContext", "String", "StructuralKey", "StructuralMutator", "StructuralVisitor", "Tensor",
    "VisitInterrupt", "WalkOrder", "WalkResult", "__version__", "provide_tvm_ffi", "access_path", "convert", "convert_func", "cpp",
    "dataclasses", "device", "dtype", "from_dlpack", "get_first_structural_mismatch", "get_global_func",
    "get_global_func_metadata", "get_raw_stream", "init_ffi_api", "load_module", "method", "register_error",
    "register_global_func", "register_object", "remove_global_func", "serialization", "structural",
    "structural_equal", "structural_hash", "structural_map", "structural_mutate", "structural_visit",
    "structural_walk", "system_lib", "testing", "use_raw_stream", "use_torch_stream",
]
