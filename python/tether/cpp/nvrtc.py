"""Compiling CUDA C++ source to a CUBIN image at run time with NVRTC.

:func:`nvrtc_compile` drives NVIDIA's runtime compiler through the
``cuda.bindings`` modules of the ``cuda-python`` package; the CUBIN it
returns can be handed to ``tether.cpp.load_inline(..., embed_cubin=...)``
or to :mod:`tether.utils.embed_cubin`.  Importing this module needs
neither CUDA nor ``cuda-python``; calling :func:`nvrtc_compile` without
them raises ``RuntimeError`` saying what to install.  Without an explicit
``arch`` the target architecture is read from the current GPU, which then
has to be present.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

__all__ = ["nvrtc_compile"]


def _cuda_bindings() -> tuple:
    """The ``(driver, nvrtc)`` binding modules, or RuntimeError naming the package."""
    try:
        from cuda.bindings import driver, nvrtc  # noqa: PLC0415
    except ImportError as err:
        raise RuntimeError(
            "CUDA bindings not available: nvrtc_compile needs the `cuda-python` package "
            "(module cuda.bindings, with the NVRTC library). Install with: pip install cuda-python"
        ) from err
    return driver, nvrtc


def _detect_arch(driver: Any) -> str:
    """``sm_<major><minor>`` of the current device (device 0 without a context)."""
    ok = driver.CUresult.CUDA_SUCCESS
    try:
        (status,) = driver.cuInit(0)
        if status != ok:
            raise RuntimeError(f"Failed to initialize CUDA driver: {status}")
        status, device = driver.cuCtxGetDevice()
        if status != ok:
            device = 0
        attr = driver.CUdevice_attribute
        status, major = driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device)
        if status != ok:
            raise RuntimeError(f"Failed to get compute capability major: {status}")
        status, minor = driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device)
        if status != ok:
            raise RuntimeError(f"Failed to get compute capability minor: {status}")
    except Exception as err:
        raise RuntimeError(
            f"Failed to auto-detect GPU architecture: {err}. Please specify 'arch' parameter explicitly."
        ) from err
    return f"sm_{major}{minor}"


def _program_log(nvrtc: Any, prog: Any, status: Any) -> str:
    ok = nvrtc.nvrtcResult.NVRTC_SUCCESS
    log_status, size = nvrtc.nvrtcGetProgramLogSize(prog)
    if log_status != ok or size <= 0:
        return f"NVRTC compilation failed: {status}"
    buf = b" " * size
    (log_status,) = nvrtc.nvrtcGetProgramLog(prog, buf)
    if log_status != ok:
        return f"NVRTC compilation failed (couldn't get log): {status}"
    return f"NVRTC compilation failed:\n{buf.decode('utf-8')}"


def nvrtc_compile(
    source: str,
    *,
    name: str = "kernel.cu",
    arch: Optional[str] = None,
    extra_opts: Optional[Sequence[str]] = None,
) -> bytes:
    """Compile CUDA C++ ``source`` to a CUBIN image with NVRTC.

    Parameters
    ----------
    source
        The CUDA C++ translation unit.
    name
        The file name NVRTC reports in diagnostics.
    arch
        Target architecture such as ``"sm_80"``; read from the current GPU
        when omitted.
    extra_opts
        More NVRTC options (``"-I..."``, ``"-DNAME=1"``; str or bytes).

    Returns
    -------
    bytes
        The CUBIN image.

    Raises
    ------
    RuntimeError
        When ``cuda-python`` (or NVRTC) is unavailable, the architecture
        cannot be detected, or compilation fails (with NVRTC's log).
    """
    driver, nvrtc = _cuda_bindings()
    if arch is None:
        arch = _detect_arch(driver)
    ok = nvrtc.nvrtcResult.NVRTC_SUCCESS

    status, prog = nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, None, None)
    if status != ok:
        raise RuntimeError(f"Failed to create NVRTC program: {status}")
    try:
        opts = [b"--gpu-architecture=" + arch.encode(), b"-default-device"]
        opts += [o.encode() if isinstance(o, str) else o for o in (extra_opts or ())]
        (status,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if status != ok:
            raise RuntimeError(_program_log(nvrtc, prog, status))
        status, size = nvrtc.nvrtcGetCUBINSize(prog)
        if status != ok:
            raise RuntimeError(f"Failed to get CUBIN size from NVRTC: {status}")
        cubin = b" " * size
        (status,) = nvrtc.nvrtcGetCUBIN(prog, cubin)
        if status != ok:
            raise RuntimeError(f"Failed to get CUBIN from NVRTC: {status}")
        return cubin
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
