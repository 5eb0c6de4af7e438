"""Stream contexts (tvm_ffi's ``stream`` names)."""

from . import core  # noqa: F401  (tvm_ffi.stream's names)
from .core.device import device  # noqa: F401
from .tensor import StreamContext, get_raw_stream, use_raw_stream, use_torch_stream

__all__ = ["StreamContext", "get_raw_stream", "use_raw_stream", "use_torch_stream"]
