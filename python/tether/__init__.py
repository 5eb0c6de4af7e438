"""tether: one Python wrapper per native object, over the TVM-FFI object ABI.

Objects returned by the FFI (function results, callback arguments, field
reads, container items) come back as their one canonical wrapper, so
``a.x is a.x`` and ``f(x) is x``; while a native owner keeps an object alive,
dropping and re-fetching its wrapper gives back the same ``id``.
"""

from .core import (
    Bytes,
    CContainerBase,
    Error,
    Function,
    Module,
    Object,
    ObjectConvertible,
    String,
    convert,
    convert_func,
    get_global_func,
    load_module,
    register_global_func,
    register_object,
)
from .container import Array, Dict, List, Map, Shape
from .registry import get_global_func_metadata, init_ffi_api, remove_global_func
from .error import register_error
from .method import method
from .tensor import (
    DLDeviceType,
    Device,
    StreamContext,
    Tensor,
    device,
    dtype,
    from_dlpack,
    get_raw_stream,
    use_raw_stream,
    use_torch_stream,
)
from .module import system_lib
from .structural import (
    DefRegionKind,
    InplaceMode,
    StructuralKey,
    StructuralMutator,
    StructuralVisitor,
    VisitInterrupt,
    WalkOrder,
    WalkResult,
    get_first_structural_mismatch,
    structural_equal,
    structural_hash,
    structural_map,
    structural_mutate,
    structural_visit,
    structural_walk,
)
from . import (
    access_path,
    config,
    container,
    core,
    cpp,
    dataclasses,
    error,
    libinfo,
    module,
    registry,
    serialization,
    stream,
    structural,
    testing,
    type_info,
    type_schema,
    utils,
)

__version__ = "0.1.0"

# dtype constants, as tvm_ffi offers them.
bool = dtype("bool")  # noqa: A001 - tvm_ffi's name
int8, int16, int32, int64 = dtype("int8"), dtype("int16"), dtype("int32"), dtype("int64")
uint8, uint16, uint32, uint64 = dtype("uint8"), dtype("uint16"), dtype("uint32"), dtype("uint64")
float16, float32, float64, bfloat16 = dtype("float16"), dtype("float32"), dtype("float64"), dtype("bfloat16")

__all__ = [
    "Array", "Bytes", "DLDeviceType", "DefRegionKind", "Device", "Dict", "Error", "Function", "InplaceMode", "List", "Map", "Module",
    "Object", "ObjectConvertible", "Shape", "StreamContext", "String", "StructuralKey", "StructuralMutator",
    "StructuralVisitor", "Tensor",
    "VisitInterrupt", "WalkOrder", "WalkResult", "__version__", "access_path", "convert", "convert_func", "cpp",
    "dataclasses", "device", "dtype", "from_dlpack", "get_first_structural_mismatch", "get_global_func",
    "get_global_func_metadata", "get_raw_stream", "init_ffi_api", "load_module", "method", "register_error",
    "register_global_func", "register_object", "remove_global_func", "serialization", "structural",
    "structural_equal", "structural_hash", "structural_map", "structural_mutate", "structural_visit", "structural_walk", "system_lib", "testing", "use_raw_stream",
    "use_torch_stream",
]
