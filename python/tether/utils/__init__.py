"""Small helpers shared by tvm_ffi users (``tvm_ffi.utils``' public names)."""

from ..core import ObjectConvertible

__all__ = ["ObjectConvertible"]
