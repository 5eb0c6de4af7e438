"""tether: one Python wrapper per native object, over the TVM-FFI object ABI.

Objects returned by the FFI (function results, callback arguments, field
reads, container items) come back as their one canonical wrapper, so
``a.x is a.x`` and ``f(x) is x``; while a native owner keeps an object alive,
dropping and re-fetching its wrapper gives back the same ``id``.
"""

from .core import (
    Array,
    Dict,
    Error,
    Function,
    List,
    Map,
    Module,
    Object,
    Shape,
    convert,
    get_global_func,
    load_module,
    register_global_func,
    register_object,
)
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
from . import dataclasses, testing

__all__ = [
    "DLDeviceType",
    "Device",
    "StreamContext",
    "Tensor",
    "device",
    "dtype",
    "from_dlpack",
    "get_raw_stream",
    "use_raw_stream",
    "use_torch_stream",
    "Array",
    "Dict",
    "Error",
    "Function",
    "List",
    "Map",
    "Module",
    "Object",
    "Shape",
    "convert",
    "dataclasses",
    "get_global_func",
    "load_module",
    "register_global_func",
    "register_object",
    "testing",
]
