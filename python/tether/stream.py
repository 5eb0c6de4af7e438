"""Stream contexts (tvm_ffi's ``stream`` names)."""

from .tensor import StreamContext, get_raw_stream, use_raw_stream, use_torch_stream

__all__ = ["StreamContext", "get_raw_stream", "use_raw_stream", "use_torch_stream"]
