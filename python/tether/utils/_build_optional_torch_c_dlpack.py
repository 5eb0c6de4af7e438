"""Building the optional torch add-on that speeds up DLPack exchange.

PyTorch releases that predate the DLPack C exchange API offer no C-level
way to turn a ``torch.Tensor`` into a ``DLManagedTensorVersioned`` (or
back) without going through Python's ``__dlpack__`` protocol.  This script
compiles a small shared library against the installed torch that provides
that API: it exports ``TorchDLPackExchangeAPIPtr()``, which returns the
address of a static ``DLPackExchangeAPI`` table (allocate a tensor, tensor
to/from Python object without synchronisation, borrow a ``DLTensor`` view,
read the current CUDA/ROCm stream).  :mod:`tether._optional_torch_c_dlpack`
runs it in a child process when needed and loads the result.

The library is written into the output directory under a file lock, so
concurrent first uses build it once.  It needs PyTorch with its C++ headers
and a C++ compiler (``$CXX``, default ``c++``; MSVC through ninja on
Windows).  Extra flags come from ``TETHER_JIT_EXTRA_CFLAGS`` /
``TETHER_JIT_EXTRA_LDFLAGS`` (the ``TVM_FFI_JIT_EXTRA_*`` spellings are
honoured too).  Run ``python _build_optional_torch_c_dlpack.py --help``
for the options.

The DLPack structures are declared privately in the generated source, so
the build does not depend on which ``dlpack.h`` torch ships.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from pathlib import Path

try:
    import torch
    import torch.torch_version
    import torch.utils.cpp_extension
except ImportError as _err:
    raise ModuleNotFoundError(
        "building the torch C DLPack add-on requires PyTorch: the `torch` package "
        f"(with torch.utils.cpp_extension) could not be imported ({_err})",
        name="torch",
    ) from _err

# tether itself is imported lazily (inside functions): importing the package
# could try to load this very add-on.

IS_WINDOWS = sys.platform == "win32"
IS_DARWIN = sys.platform == "darwin"

cpp_source = r"""
// DLPack C exchange API for torch.Tensor, compiled against the installed
// PyTorch.  Exported entry point: TorchDLPackExchangeAPIPtr().
#include <torch/extension.h>
#include <torch/version.h>
#include <torch/csrc/autograd/python_variable.h>
#include <ATen/detail/XPUHooksInterface.h>

#if defined(BUILD_WITH_CUDA)
#include <c10/cuda/CUDAStream.h>
#endif
#if defined(BUILD_WITH_ROCM)
#include <c10/hip/HIPStream.h>
#include <ATen/hip/impl/HIPStreamMasqueradingAsCUDA.h>
#endif

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>

#define TETHER_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

#ifdef _WIN32
#define TETHER_ADDON_EXPORT __declspec(dllexport)
#else
#define TETHER_ADDON_EXPORT __attribute__((visibility("default")))
#endif

namespace tether_torch_dlpack {

// DLPack's C ABI, declared here under private names so that it never meets
// the copy of dlpack.h bundled with torch (whose version varies).
constexpr uint32_t kDLPackMajor = 1;
constexpr uint32_t kDLPackMinor = 3;

struct PackVersion {
  uint32_t major;
  uint32_t minor;
};
struct PackDevice {
  int32_t device_type;
  int32_t device_id;
};
struct PackDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct PackTensor {
  void* data;
  PackDevice device;
  int32_t ndim;
  PackDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct PackManagedTensor {
  PackVersion version;
  void* manager_ctx;
  void (*deleter)(PackManagedTensor* self);
  uint64_t flags;
  PackTensor dl_tensor;
};
struct PackExchangeHeader {
  PackVersion version;
  PackExchangeHeader* prev_api;
};
using SetErrorFn = void (*)(void* error_ctx, const char* kind, const char* message);
struct PackExchangeAPI {
  PackExchangeHeader header;
  int (*managed_tensor_allocator)(PackTensor* prototype, PackManagedTensor** out, void* error_ctx,
                                  SetErrorFn set_error);
  int (*managed_tensor_from_py_object_no_sync)(void* py_object, PackManagedTensor** out);
  int (*managed_tensor_to_py_object_no_sync)(PackManagedTensor* tensor, void** out_py_object);
  int (*dltensor_from_py_object_no_sync)(void* py_object, PackTensor* out);
  int (*current_work_stream)(int32_t device_type, int32_t device_id, void** out_stream);
};

// Device type codes (DLDeviceType).
enum : int32_t {
  kCPU = 1,
  kCUDA = 2,
  kOpenCL = 4,
  kMetal = 8,
  kROCM = 10,
  kExtDev = 12,
  kOneAPI = 14,
  kMAIA = 17,
};
// Data type codes (DLDataTypeCode).
enum : uint8_t {
  kInt = 0,
  kUInt = 1,
  kFloat = 2,
  kBfloat = 4,
  kComplex = 5,
  kBool = 6,
  kFloat8E4M3FN = 10,
  kFloat8E4M3FNUZ = 11,
  kFloat8E5M2 = 12,
  kFloat8E5M2FNUZ = 13,
  kFloat8E8M0FNU = 14,
  kFloat4E2M1FN = 17,
};

PackDataType PackDataTypeOf(const at::Tensor& t) {
  PackDataType out{0, static_cast<uint8_t>(t.element_size() * 8), 1};
  using ST = at::ScalarType;
  switch (t.scalar_type()) {
    case ST::Bool:
      out.code = kBool;
      break;
    case ST::Byte:
#if TETHER_TORCH_AT_LEAST(2, 3)
    case ST::UInt16:
    case ST::UInt32:
    case ST::UInt64:
    case ST::UInt1:
    case ST::UInt2:
    case ST::UInt3:
    case ST::UInt4:
    case ST::UInt5:
    case ST::UInt6:
    case ST::UInt7:
#endif
      out.code = kUInt;
      break;
    case ST::Char:
    case ST::Short:
    case ST::Int:
    case ST::Long:
#if TETHER_TORCH_AT_LEAST(2, 6)
    case ST::Int1:
    case ST::Int2:
    case ST::Int3:
    case ST::Int4:
    case ST::Int5:
    case ST::Int6:
    case ST::Int7:
#endif
      out.code = kInt;
      break;
    case ST::Half:
    case ST::Float:
    case ST::Double:
      out.code = kFloat;
      break;
    case ST::BFloat16:
      out.code = kBfloat;
      break;
    case ST::ComplexHalf:
    case ST::ComplexFloat:
    case ST::ComplexDouble:
      out.code = kComplex;
      break;
#if TETHER_TORCH_AT_LEAST(2, 1)
    case ST::Float8_e5m2:
      out.code = kFloat8E5M2;
      break;
    case ST::Float8_e4m3fn:
      out.code = kFloat8E4M3FN;
      break;
#endif
#if TETHER_TORCH_AT_LEAST(2, 2)
    case ST::Float8_e5m2fnuz:
      out.code = kFloat8E5M2FNUZ;
      break;
    case ST::Float8_e4m3fnuz:
      out.code = kFloat8E4M3FNUZ;
      break;
#endif
#if TETHER_TORCH_AT_LEAST(2, 7)
    case ST::Float8_e8m0fnu:
      out.code = kFloat8E8M0FNU;
      break;
#endif
#if TETHER_TORCH_AT_LEAST(2, 8)
    case ST::Float4_e2m1fn_x2:
      out.code = kFloat4E2M1FN;
      out.bits = 4;
      out.lanes = 2;
      break;
#endif
    default:
      TORCH_CHECK(false, "DLPack has no data type for torch scalar type ", t.scalar_type());
  }
  return out;
}

at::ScalarType ScalarTypeOf(const PackDataType& dt) {
  using ST = at::ScalarType;
#if TETHER_TORCH_AT_LEAST(2, 8)
  if (dt.code == kFloat4E2M1FN) {
    TORCH_CHECK(dt.bits == 4 && dt.lanes == 2, "unsupported DLPack float4_e2m1fn with bits=",
                static_cast<int>(dt.bits), " lanes=", static_cast<int>(dt.lanes));
    return ST::Float4_e2m1fn_x2;
  }
#endif
  TORCH_CHECK(dt.lanes == 1, "torch does not support DLPack lanes != 1 (code ",
              static_cast<int>(dt.code), ", lanes ", static_cast<int>(dt.lanes), ")");
  const int bits = dt.bits;
  switch (dt.code) {
    case kInt:
      if (bits == 8) return ST::Char;
      if (bits == 16) return ST::Short;
      if (bits == 32) return ST::Int;
      if (bits == 64) return ST::Long;
      break;
    case kUInt:
      if (bits == 8) return ST::Byte;
#if TETHER_TORCH_AT_LEAST(2, 3)
      if (bits == 16) return ST::UInt16;
      if (bits == 32) return ST::UInt32;
      if (bits == 64) return ST::UInt64;
#endif
      break;
    case kFloat:
      if (bits == 16) return ST::Half;
      if (bits == 32) return ST::Float;
      if (bits == 64) return ST::Double;
      break;
    case kBfloat:
      if (bits == 16) return ST::BFloat16;
      break;
    case kComplex:
      if (bits == 32) return ST::ComplexHalf;
      if (bits == 64) return ST::ComplexFloat;
      if (bits == 128) return ST::ComplexDouble;
      break;
    case kBool:
      if (bits == 8) return ST::Bool;
      break;
#if TETHER_TORCH_AT_LEAST(2, 1)
    case kFloat8E5M2:
      if (bits == 8) return ST::Float8_e5m2;
      break;
    case kFloat8E4M3FN:
      if (bits == 8) return ST::Float8_e4m3fn;
      break;
#endif
#if TETHER_TORCH_AT_LEAST(2, 2)
    case kFloat8E5M2FNUZ:
      if (bits == 8) return ST::Float8_e5m2fnuz;
      break;
    case kFloat8E4M3FNUZ:
      if (bits == 8) return ST::Float8_e4m3fnuz;
      break;
#endif
#if TETHER_TORCH_AT_LEAST(2, 7)
    case kFloat8E8M0FNU:
      if (bits == 8) return ST::Float8_e8m0fnu;
      break;
#endif
    default:
      TORCH_CHECK(false, "unsupported DLPack data type code ", static_cast<int>(dt.code));
  }
  TORCH_CHECK(false, "unsupported DLPack data type: code ", static_cast<int>(dt.code), " with ", bits,
              " bits");
  return ST::Undefined;  // not reached
}

PackDevice PackDeviceOf(const at::Tensor& t) {
  const c10::Device d = t.device();
  PackDevice out{kCPU, 0};
  switch (d.type()) {
    case c10::DeviceType::CPU:
      break;
    case c10::DeviceType::CUDA:
#ifdef USE_ROCM
      out.device_type = kROCM;  // ROCm builds present HIP devices as CUDA
#else
      out.device_type = kCUDA;
#endif
      out.device_id = d.has_index() ? d.index() : 0;
      break;
    case c10::DeviceType::HIP:
      out.device_type = kROCM;
      break;
    case c10::DeviceType::OPENCL:
      out.device_type = kOpenCL;
      break;
    case c10::DeviceType::XPU:
      out.device_type = kOneAPI;
      out.device_id = at::detail::getXPUHooks().getGlobalIdxFromDevice(d);
      break;
    case c10::DeviceType::MAIA:
      out.device_type = kMAIA;
      break;
    case c10::DeviceType::PrivateUse1:
      out.device_type = kExtDev;
      out.device_id = d.has_index() ? d.index() : 0;
      break;
    case c10::DeviceType::MPS:
      out.device_type = kMetal;
      break;
    default:
      TORCH_CHECK(false, "DLPack cannot describe tensors on ", d.str());
  }
  return out;
}

c10::Device AtenDeviceOf(const PackDevice& dev, void* data) {
  const auto index = static_cast<c10::DeviceIndex>(dev.device_id);
  switch (dev.device_type) {
    case kCPU:
      return c10::Device(c10::DeviceType::CPU);
#ifndef USE_ROCM
    case kCUDA:
      return c10::Device(c10::DeviceType::CUDA, index);
#endif
    case kOpenCL:
      return c10::Device(c10::DeviceType::OPENCL, index);
    case kROCM:
#ifdef USE_ROCM
      return c10::Device(c10::DeviceType::CUDA, index);
#else
      return c10::Device(c10::DeviceType::HIP, index);
#endif
    case kOneAPI:
      TORCH_CHECK(data != nullptr, "an XPU device is found from its data pointer, which is missing");
      return at::detail::getXPUHooks().getDeviceFromPtr(data);
    case kMAIA:
      return c10::Device(c10::DeviceType::MAIA, index);
    case kExtDev:
      return c10::Device(c10::DeviceType::PrivateUse1, index);
    case kMetal:
      return c10::Device(c10::DeviceType::MPS, index);
    default:
      TORCH_CHECK(false, "unsupported DLPack device type ", dev.device_type);
  }
  return c10::Device(c10::DeviceType::CPU);  // not reached
}

// Describe `t` in `out` without taking ownership: shape and strides point
// into the tensor's own metadata, valid while the tensor lives.
void DescribeTensor(const at::Tensor& t, PackTensor* out) {
  const PackDataType dtype = PackDataTypeOf(t);
  const PackDevice device = PackDeviceOf(t);
  out->data = t.data_ptr();
  out->device = device;
  out->ndim = static_cast<int32_t>(t.dim());
  out->dtype = dtype;
  out->shape = const_cast<int64_t*>(t.sizes().data());
  out->strides = const_cast<int64_t*>(t.strides().data());
  out->byte_offset = 0;
}

// A managed tensor owns a reference to the torch tensor it describes.
struct OwnedTensor {
  at::Tensor tensor;
  PackManagedTensor managed{};
};

void DeleteOwnedTensor(PackManagedTensor* self) { delete static_cast<OwnedTensor*>(self->manager_ctx); }

PackManagedTensor* ToManagedTensor(const at::Tensor& src) {
  auto owned = std::make_unique<OwnedTensor>();
  owned->tensor = src;
  PackManagedTensor& m = owned->managed;
  DescribeTensor(owned->tensor, &m.dl_tensor);
  m.version.major = kDLPackMajor;
  m.version.minor = kDLPackMinor;
  m.flags = 0;
  m.deleter = &DeleteOwnedTensor;
  m.manager_ctx = owned.get();
  return &owned.release()->managed;
}

// A torch tensor viewing `src`'s memory; `src` is released with the tensor.
at::Tensor FromManagedTensor(PackManagedTensor* src) {
  PackTensor& dl = src->dl_tensor;
  const c10::Device device = AtenDeviceOf(dl.device, dl.data);
  const at::ScalarType stype = ScalarTypeOf(dl.dtype);
  std::function<void(void*)> release = [src](void*) {
    if (src->deleter != nullptr) src->deleter(src);
  };
  void* data = static_cast<char*>(dl.data) + dl.byte_offset;
  const at::IntArrayRef sizes(dl.shape, dl.ndim);
  const auto options = at::TensorOptions().device(device).dtype(stype);
  if (dl.strides == nullptr) {
    return at::from_blob(data, sizes, release, options, device);
  }
  return at::from_blob(data, sizes, at::IntArrayRef(dl.strides, dl.ndim), release, options, device);
}

const at::Tensor& TensorOfPyObject(void* py_object) {
  PyObject* obj = static_cast<PyObject*>(py_object);
  TORCH_CHECK(obj != nullptr && THPVariable_Check(obj), "expected a torch.Tensor, got ",
              obj == nullptr ? "NULL" : Py_TYPE(obj)->tp_name);
  return THPVariable_Unpack(obj);
}

int Fail(const std::exception& err) {
  PyErr_SetString(PyExc_RuntimeError, err.what());
  return -1;
}

int BorrowFromPyObject(void* py_object, PackTensor* out) {
  try {
    DescribeTensor(TensorOfPyObject(py_object), out);
    return 0;
  } catch (const std::exception& err) {
    return Fail(err);
  }
}

int ManagedFromPyObject(void* py_object, PackManagedTensor** out) {
  try {
    *out = ToManagedTensor(TensorOfPyObject(py_object));
    return 0;
  } catch (const std::exception& err) {
    return Fail(err);
  }
}

int ManagedToPyObject(PackManagedTensor* tensor, void** out_py_object) {
  try {
    *out_py_object = THPVariable_Wrap(FromManagedTensor(tensor));
    return *out_py_object == nullptr ? -1 : 0;
  } catch (const std::exception& err) {
    return Fail(err);
  }
}

int CurrentStream(int32_t device_type, int32_t device_id, void** out_stream) {
  try {
    *out_stream = nullptr;  // devices without streams
#if defined(BUILD_WITH_ROCM)
    if (device_type == kROCM || device_type == kCUDA) {
      *out_stream = c10::hip::getCurrentHIPStreamMasqueradingAsCUDA(device_id).stream();
    }
#elif defined(BUILD_WITH_CUDA)
    if (device_type == kCUDA) {
      *out_stream = c10::cuda::getCurrentCUDAStream(device_id).stream();
    }
#else
    (void)device_type;
    (void)device_id;
#endif
    return 0;
  } catch (const std::exception& err) {
    return Fail(err);
  }
}

int Allocate(PackTensor* prototype, PackManagedTensor** out, void* error_ctx, SetErrorFn set_error) {
  try {
    const at::IntArrayRef shape(prototype->shape, prototype->ndim);
    const auto options = at::TensorOptions()
                             .dtype(ScalarTypeOf(prototype->dtype))
                             .device(AtenDeviceOf(prototype->device, nullptr));
    *out = ToManagedTensor(at::empty(shape, options));
    return 0;
  } catch (const std::exception& err) {
    set_error(error_ctx, "MemoryError", err.what());
    return -1;
  }
}

const PackExchangeAPI* ExchangeTable() {
  static const PackExchangeAPI table = [] {
    PackExchangeAPI api{};
    api.header.version.major = kDLPackMajor;
    api.header.version.minor = kDLPackMinor;
    api.header.prev_api = nullptr;
    api.managed_tensor_allocator = &Allocate;
    api.managed_tensor_from_py_object_no_sync = &ManagedFromPyObject;
    api.managed_tensor_to_py_object_no_sync = &ManagedToPyObject;
    api.dltensor_from_py_object_no_sync = &BorrowFromPyObject;
    api.current_work_stream = &CurrentStream;
    return api;
  }();
  return &table;
}

}  // namespace tether_torch_dlpack

extern "C" TETHER_ADDON_EXPORT int64_t TorchDLPackExchangeAPIPtr() {
  return reinterpret_cast<int64_t>(tether_torch_dlpack::ExchangeTable());
}
"""


def parse_env_flags(env_var_name: str) -> list[str]:
    """Split the environment variable ``env_var_name`` into flags, shell-style.

    Returns ``[]`` when it is unset or empty; when shell splitting fails a
    warning is printed and the value is split on whitespace.
    """
    text = os.environ.get(env_var_name)
    if not text:
        return []
    try:
        return shlex.split(text)
    except ValueError as err:
        print(
            f"Warning: Could not parse {env_var_name} with shlex: {err}. Falling back to simple split.",
            file=sys.stderr,
        )
        return text.split()


def get_cpp_standard() -> str:
    """``"c++20"`` for torch 2.13 and later (its headers need it), else ``"c++17"``."""
    if torch.__version__ >= torch.torch_version.TorchVersion("2.13.0"):
        return "c++20"
    return "c++17"


def _include_flags(paths: Sequence[str], quote: bool = False) -> list[str]:
    flags = []
    for path in paths:
        text = str(Path(path).resolve())
        if quote:
            if " " in text:
                text = f'"{text}"'
            text = text.replace(":", "$:")
        flags.append(f"-I{text}")
    return flags


def _run_build_on_linux_like(
    build_dir: Path,
    libname: str,
    source_path: Path,
    extra_cflags: Sequence[str],
    extra_ldflags: Sequence[str],
    extra_include_paths: Sequence[str],
) -> None:
    """Compile and link ``source_path`` into ``build_dir/libname`` with one
    compiler call (POSIX systems); RuntimeError with the compiler's output
    when it fails, or when the compiler cannot be found."""
    cflags = [f"-std={get_cpp_standard()}", "-fPIC", "-O3", "-fvisibility=hidden"]
    cflags += [flag.strip() for flag in extra_cflags]
    cflags += _include_flags(extra_include_paths)
    rpath = "-Wl,-rpath,@loader_path" if IS_DARWIN else "-Wl,-rpath,$ORIGIN"
    ldflags = ["-shared", rpath] + [flag.strip() for flag in extra_ldflags]
    cxx = shlex.split(os.environ.get("CXX", "c++"))
    if shutil.which(cxx[0]) is None:
        raise RuntimeError(
            f"C++ compiler {cxx[0]!r} not found: building the torch C DLPack add-on needs one "
            "(set CXX or install a C++ compiler)"
        )
    cmd = [*cxx, *cflags, str(source_path.resolve()), *ldflags, "-o", str(build_dir / libname)]
    done = subprocess.run(cmd, cwd=str(build_dir), capture_output=True, check=False)
    if done.returncode != 0:
        parts = [f"Build failed with status {done.returncode}", f"command: {shlex.join(cmd)}"]
        if done.stdout:
            parts.append(f"stdout:\n{done.stdout.decode('utf-8', errors='replace')}")
        if done.stderr:
            parts.append(f"stderr:\n{done.stderr.decode('utf-8', errors='replace')}")
        raise RuntimeError("\n".join(parts))


def _generate_ninja_build_windows(
    build_dir: Path,
    libname: str,
    source_path: Path,
    extra_cflags: Sequence[str],
    extra_ldflags: Sequence[str],
    extra_include_paths: Sequence[str],
) -> None:
    """Write ``build_dir/build.ninja`` compiling and linking the add-on with MSVC."""
    cflags = [f"/std:{get_cpp_standard()}", "/MD", "/EHsc"]
    # Warnings torch's headers trigger by the hundred under MSVC.
    cflags += [f"/wd{n}" for n in (4819, 4251, 4244, 4267, 4275, 4018, 4190, 4624, 4067, 4068)]
    cflags += [flag.strip() for flag in extra_cflags]
    cflags += _include_flags(extra_include_paths, quote=True)
    ldflags = ["/DLL"] + [flag.strip() for flag in extra_ldflags]
    source = str(source_path.resolve()).replace(":", "$:")
    text = f"""ninja_required_version = 1.3
cxx = {os.environ.get("CXX", "cl")}
cflags = {" ".join(cflags)}
ldflags = {" ".join(ldflags)}

rule compile
  command = $cxx /showIncludes $cflags -c $in /Fo$out
  deps = msvc

rule link
  command = $cxx $in /link $ldflags /out:$out

build main.obj: compile {source}
build {libname}: link main.obj

default {libname}
"""
    (build_dir / "build.ninja").write_text(text)


def _run_ninja(build_dir: Path) -> None:
    ninja = shutil.which("ninja")
    if ninja is None:
        raise RuntimeError("ninja not found: building the torch C DLPack add-on on Windows needs it "
                           "(pip install ninja)")
    done = subprocess.run([ninja, "-C", str(build_dir)], capture_output=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(
            f"ninja build failed with status {done.returncode}\n"
            f"{done.stdout.decode('utf-8', errors='replace')}{done.stderr.decode('utf-8', errors='replace')}"
        )


def get_torch_include_paths(build_with_cuda: bool) -> Sequence[str]:
    """Torch's C++ include directories (with the CUDA ones when ``build_with_cuda``)."""
    if torch.__version__ >= torch.torch_version.TorchVersion("2.6.0"):
        return torch.utils.cpp_extension.include_paths(device_type="cuda" if build_with_cuda else "cpu")
    return torch.utils.cpp_extension.include_paths(cuda=build_with_cuda)


def _default_libname(device: str) -> str:
    major, minor = torch.__version__.split(".")[:2]
    return f"libtorch_c_dlpack_addon_torch{major}{minor}-{device}{'.dll' if IS_WINDOWS else '.so'}"


def _python_link_flags(cflags: list[str]) -> list[str]:
    """Linker flags for libpython where the platform needs them."""
    flags: list[str] = []
    if IS_WINDOWS:
        free_threaded = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
        if free_threaded:
            # pyconfig.h on Windows does not define it for free-threaded builds.
            cflags.append("/DPy_GIL_DISABLED=1")
        lib = f"python{sys.version_info.major}{sys.version_info.minor}{'t' if free_threaded else ''}.lib"
        candidates = [sysconfig.get_config_var("LIBDIR"), str(Path(sys.base_exec_prefix) / "libs")]
        include = sysconfig.get_path("include")
        if include is not None and (Path(include).parent / "libs").exists():
            candidates.append(str((Path(include).parent / "libs").resolve()))
        for libdir in candidates:
            if libdir and (Path(libdir) / lib).exists():
                flags.append(subprocess.list2cmdline([f"/LIBPATH:{libdir.replace(':', '$:')}"]))
                break
    elif IS_DARWIN:
        libdir = sysconfig.get_config_var("LIBDIR")
        if libdir:
            flags += [f"-L{libdir}", f"-lpython{sysconfig.get_python_version()}"]
    return flags


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Build the torch C DLPack add-on: a shared library exporting TorchDLPackExchangeAPIPtr, "
        "placed in the output directory."
    )
    parser.add_argument("--build-dir", type=str, required=False,
                        help="directory for intermediate files (default: a new temporary directory)")
    parser.add_argument("--output-dir", type=str, required=False,
                        default=str(Path(os.environ.get("TETHER_CACHE_DIR", "~/.cache/tether")).expanduser()),
                        help="directory receiving the library (default: $TETHER_CACHE_DIR or ~/.cache/tether)")
    parser.add_argument("--build-with-cuda", action="store_true", help="build with CUDA stream support")
    parser.add_argument("--build-with-rocm", action="store_true", help="build with ROCm stream support")
    parser.add_argument("--libname", type=str, default="auto",
                        help="file name of the library; 'auto' names it "
                        "libtorch_c_dlpack_addon_torch<major><minor>-<cpu|cuda|rocm>.<so|dll>")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    """Build the add-on as the command line (or ``argv``) asks.

    Nothing is built when the output directory already holds the library.
    ``ValueError`` when both CUDA and ROCm are requested; ``RuntimeError``
    when the compiler is missing or fails.
    """
    # A child process importing tether must not start building this add-on itself.
    os.environ["TETHER_DISABLE_TORCH_C_DLPACK"] = "1"
    os.environ["TVM_FFI_DISABLE_TORCH_C_DLPACK"] = "1"
    from tether.utils.lockfile import FileLock  # noqa: PLC0415

    args = _parse_args(argv)
    if args.build_with_cuda and args.build_with_rocm:
        raise ValueError("Cannot enable both CUDA and ROCm at the same time.")
    device = "cuda" if args.build_with_cuda else "rocm" if args.build_with_rocm else "cpu"
    libname = _default_libname(device) if args.libname == "auto" else args.libname
    partial_name = libname + ".tmp"

    build_dir = Path(args.build_dir) if args.build_dir else Path(tempfile.mkdtemp(prefix="tether-torch-c-dlpack-"))
    build_dir = build_dir.resolve()
    build_dir.mkdir(parents=True, exist_ok=True)
    output_dir = Path(args.output_dir).expanduser()
    output_dir.mkdir(parents=True, exist_ok=True)

    with FileLock(str(output_dir / (libname + ".lock"))):
        if (output_dir / libname).exists():
            return  # another process built it meanwhile
        source_path = build_dir / "addon.cc"
        source_path.write_text(cpp_source)

        include_paths = [sysconfig.get_paths()["include"]]
        include_paths += list(get_torch_include_paths(args.build_with_cuda or args.build_with_rocm))
        cflags: list[str] = []
        if args.build_with_cuda:
            cflags.append("-DBUILD_WITH_CUDA")
        elif args.build_with_rocm:
            cflags += list(torch.utils.cpp_extension.COMMON_HIP_FLAGS)
            cflags.append("-DBUILD_WITH_ROCM")
        cflags.append(f"-D_GLIBCXX_USE_CXX11_ABI={int(torch.compiled_with_cxx11_abi())}")

        ldflags: list[str] = []
        for lib_dir in torch.utils.cpp_extension.library_paths():
            if IS_WINDOWS:
                ldflags.append(subprocess.list2cmdline([f"/LIBPATH:{lib_dir}"]))
            else:
                ldflags += ["-L", str(lib_dir)]
        torch_libs = ["c10", "torch", "torch_cpu", "torch_python"]
        if args.build_with_cuda:
            torch_libs += ["torch_cuda", "c10_cuda"]
        ldflags += [f"{name}.lib" if IS_WINDOWS else f"-l{name}" for name in torch_libs]
        ldflags += _python_link_flags(cflags)

        for names, target in (
            (("TETHER_JIT_EXTRA_LDFLAGS", "TVM_FFI_JIT_EXTRA_LDFLAGS"), ldflags),
            (("TETHER_JIT_EXTRA_CFLAGS", "TVM_FFI_JIT_EXTRA_CFLAGS"), cflags),
        ):
            for name in names:
                target += parse_env_flags(name)

        if IS_WINDOWS:
            _generate_ninja_build_windows(build_dir, partial_name, source_path, cflags, ldflags, include_paths)
            _run_ninja(build_dir)
        else:
            _run_build_on_linux_like(build_dir, partial_name, source_path, cflags, ldflags, include_paths)
        # Publish under the final name only once complete.
        shutil.move(str(build_dir / partial_name), str(output_dir / libname))


if __name__ == "__main__":
    main()
