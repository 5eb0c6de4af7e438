// A kernel library in the style TVM-FFI users write: compiled against the
// upstream apache-tvm-ffi headers, linked only against libtether_core.
// Exports `__tvm_ffi_add_one_cpu` (y = x + 1 over float32 1-d CPU tensors);
// the C++ driver in this directory and tether's Python side load it.

#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>

namespace {

void AddOne(tvm::ffi::TensorView x, tvm::ffi::TensorView y) {
  DLDataType f32{kDLFloat, 32, 1};
  TVM_FFI_CHECK(x.ndim() == 1 && y.ndim() == 1, ValueError) << "add_one: x and y must be 1-d";
  TVM_FFI_CHECK(x.dtype() == f32 && y.dtype() == f32, TypeError)
      << "add_one: expected float32, got " << x.dtype() << " and " << y.dtype();
  TVM_FFI_CHECK(x.device().device_type == kDLCPU && y.device().device_type == kDLCPU, ValueError)
      << "add_one: CPU tensors only";
  TVM_FFI_CHECK(x.size(0) == y.size(0), ValueError) << "add_one: shape mismatch";
  const int64_t x_stride = x.ndim() ? (x.IsContiguous() ? 1 : x.stride(0)) : 1;
  const int64_t y_stride = y.ndim() ? (y.IsContiguous() ? 1 : y.stride(0)) : 1;
  const float* xs = reinterpret_cast<const float*>(static_cast<const char*>(x.data_ptr()) + x.byte_offset());
  float* ys = reinterpret_cast<float*>(static_cast<char*>(y.data_ptr()) + y.byte_offset());
  for (int64_t i = 0; i < x.size(0); ++i) {
    ys[i * y_stride] = xs[i * x_stride] + 1.0f;
  }
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_one_cpu, AddOne);
