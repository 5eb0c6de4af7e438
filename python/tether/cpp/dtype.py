"""The C++ type that holds one element of a dtype (tvm_ffi's ``to_cpp_dtype``),
for generating kernel source. Only CPU element types: tether builds no GPU
code."""

from __future__ import annotations

from typing import Any

__all__ = ["to_cpp_dtype", "CPU_DTYPE_MAP", "CUDA_DTYPE_MAP", "ROCM_DTYPE_MAP"]

CPU_DTYPE_MAP = {
    "bool": "bool",
    "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
    "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
    "float32": "float", "float64": "double",
}
# Element types of CUDA and ROCm kernels: for code generated for those
# backends (tether itself builds CPU code only).
CUDA_DTYPE_MAP = {
    "float16": "__half", "bfloat16": "__nv_bfloat16", "float8_e4m3fn": "__nv_fp8_e4m3",
    "float8_e5m2": "__nv_fp8_e5m2",
}
ROCM_DTYPE_MAP = {
    "float16": "__half", "bfloat16": "__hip_bfloat16", "float8_e4m3fn": "__hip_fp8_e4m3",
    "float8_e4m3fnuz": "__hip_fp8_e4m3_fnuz", "float8_e5m2": "__hip_fp8_e5m2",
    "float8_e5m2fnuz": "__hip_fp8_e5m2_fnuz",
}
_CPU_TYPES = CPU_DTYPE_MAP


def to_cpp_dtype(dtype_str: Any) -> str:
    """``"float32"`` -> ``"float"``; accepts dtype objects and ``torch.*`` names."""
    text = dtype_str if isinstance(dtype_str, str) else str(dtype_str)
    if text.startswith("torch."):
        text = text[len("torch."):]
    try:
        return _CPU_TYPES[text]
    except KeyError:
        raise ValueError(f"Unsupported dtype string: {text} for backend = 'cpu'") from None
