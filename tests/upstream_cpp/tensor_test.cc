// Conformance test for tensors: C++ compiled against the upstream
// apache-tvm-ffi headers and linked only against libtether_core. The
// headers' inline code reads a Tensor's DLTensor at obj + sizeof(TVMFFIObject),
// builds Tensors with Tensor::FromDLPack/FromEnvAlloc/as_strided, and prints
// dtypes through TVMFFIDataTypeToString; the add_one kernel library
// (kernels/add_one.cc) is loaded with dlopen and called through its exported
// `__tvm_ffi_add_one_cpu` symbol. Prints "N passed, N failed".

#include <dlfcn.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "check.h"

namespace ffi = tvm::ffi;

static int g_deleted = 0;

// A producer's managed tensor over a heap vector; its deleter counts.
struct Owned {
  std::vector<float> data;
  std::vector<int64_t> shape;
};

static DLManagedTensorVersioned* MakeVersioned(std::vector<float> values) {
  auto* owned = new Owned{std::move(values), {}};
  owned->shape = {static_cast<int64_t>(owned->data.size())};
  auto* m = new DLManagedTensorVersioned{};
  m->version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  m->manager_ctx = owned;
  m->deleter = [](DLManagedTensorVersioned* self) {
    delete static_cast<Owned*>(self->manager_ctx);
    delete self;
    ++g_deleted;
  };
  m->dl_tensor.data = owned->data.data();
  m->dl_tensor.device = DLDevice{kDLCPU, 0};
  m->dl_tensor.ndim = 1;
  m->dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
  m->dl_tensor.shape = owned->shape.data();
  return m;
}

static ffi::Tensor FromC(DLManagedTensorVersioned* m) {
  TVMFFIObjectHandle out = nullptr;
  if (TVMFFITensorFromDLPackVersioned(m, 0, 0, &out) != 0) {
    throw ffi::detail::MoveFromSafeCallRaised();
  }
  return ffi::Tensor(ffi::detail::ObjectUnsafe::ObjectPtrFromOwned<ffi::TensorObj>(
      static_cast<TVMFFIObject*>(out)));
}

static void test_tensor_headers_read_tether_tensors() {
  ffi::Tensor t = FromC(MakeVersioned({1, 2, 3, 4}));
  CHECK(t.ndim() == 1 && t.shape()[0] == 4 && t.strides()[0] == 1 && t.IsContiguous());
  CHECK(t.GetDLTensorPtr() ==
        TVMFFITensorGetDLTensorPtr(ffi::detail::ObjectUnsafe::TVMFFIObjectPtrFromObjectRef(t)));
  CHECK(ffi::DLDataTypeToString(t.dtype()) == "float32");
  CHECK(ffi::StringToDLDataType("float8_e4m3fn").code == kDLFloat8_e4m3fn);
  // as_strided goes through TVMFFITensorCreateUnsafeView.
  int64_t shape[1] = {2}, strides[1] = {2};
  ffi::Tensor every_other = t.as_strided(ffi::ShapeView(shape, 1), ffi::ShapeView(strides, 1), 1);
  CHECK(every_other.size(0) == 2 && every_other.stride(0) == 2);
  CHECK(static_cast<float*>(every_other.data_ptr())[0] == 2.0f);
  // Through Any: a Tensor stays a Tensor; a view converts to TensorView.
  ffi::Any a = t;
  CHECK(a.type_index() == kTVMFFITensor && a.cast<ffi::Tensor>().same_as(t));
  ffi::AnyView v = t;
  CHECK(v.cast<ffi::TensorView>().data_ptr() == t.data_ptr());
  // Round trip through the header's own DLPack code.
  DLManagedTensorVersioned* out = t.ToDLPackVersioned();
  ffi::Tensor back = ffi::Tensor::FromDLPackVersioned(out);
  CHECK(back.data_ptr() == t.data_ptr());
  t = ffi::Tensor();
  every_other = ffi::Tensor();
  a = ffi::Any();
  CHECK(g_deleted == 0);
  back = ffi::Tensor();
  CHECK(g_deleted == 1);
}

static void test_from_env_alloc() {
  DLPackManagedTensorAllocator alloc = [](DLTensor* proto, DLManagedTensorVersioned** out, void*,
                                          void (*)(void*, const char*, const char*)) -> int {
    std::vector<float> zeros(static_cast<size_t>(proto->shape[0]), 0.0f);
    *out = MakeVersioned(std::move(zeros));
    return 0;
  };
  CHECK(TVMFFIEnvSetDLPackManagedTensorAllocator(alloc, 0, nullptr) == 0);
  int64_t n = 3;
  ffi::Tensor t = ffi::Tensor::FromEnvAlloc(TVMFFIEnvTensorAlloc, ffi::ShapeView(&n, 1),
                                            DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0});
  CHECK(t.numel() == 3 && static_cast<float*>(t.data_ptr())[2] == 0.0f);
  int before = g_deleted;
  t = ffi::Tensor();
  CHECK(g_deleted == before + 1);
  TVMFFIEnvSetDLPackManagedTensorAllocator(nullptr, 0, nullptr);
}

static void test_add_one_kernel(const char* path) {
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  CHECK(lib != nullptr);
  if (lib == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return;
  }
  auto add_one = reinterpret_cast<TVMFFISafeCallType>(dlsym(lib, "__tvm_ffi_add_one_cpu"));
  CHECK(add_one != nullptr);
  if (add_one == nullptr) return;
  ffi::Function f = ffi::Function::FromPacked([add_one](ffi::PackedArgs args, ffi::Any*) {
    TVMFFIAny result;
    result.type_index = kTVMFFINone;
    result.v_int64 = 0;
    if (add_one(nullptr, reinterpret_cast<const TVMFFIAny*>(args.data()), args.size(), &result) != 0) {
      throw ffi::detail::MoveFromSafeCallRaised();
    }
  });
  ffi::Tensor x = ffi::Tensor::FromDLPackVersioned(MakeVersioned({1, 2, 3}));
  ffi::Tensor y = ffi::Tensor::FromDLPackVersioned(MakeVersioned({0, 0, 0}));
  f(x, y);
  const float* ys = static_cast<const float*>(y.data_ptr());
  CHECK(ys[0] == 2.0f && ys[1] == 3.0f && ys[2] == 4.0f);
  // Borrowed DLTensor* arguments work too.
  f(const_cast<DLTensor*>(y.GetDLTensorPtr()), const_cast<DLTensor*>(x.GetDLTensorPtr()));
  const float* xs = static_cast<const float*>(x.data_ptr());
  CHECK(xs[0] == 3.0f && xs[2] == 5.0f);
  // The kernel's own checks come back as ffi::Error.
  int64_t two = 2;
  ffi::Tensor short_y = y.as_strided(ffi::ShapeView(&two, 1), ffi::ShapeView(&two, 1) /*stride*/);
  std::string what;
  try {
    f(x, short_y);
  } catch (const ffi::Error& e) {
    what = e.kind() + ": " + e.message();
  }
  const std::string expected =
      "ValueError: Check failed: (x.size(0) == y.size(0)) is false: add_one: shape mismatch";
  CHECK(what == expected);
  if (what != expected) std::fprintf(stderr, "  got: %s\n", what.c_str());
}

int main(int argc, char** argv) {
  test_tensor_headers_read_tether_tensors();
  test_from_env_alloc();
  if (argc > 1) {
    test_add_one_kernel(argv[1]);
  } else {
    ++g_failed;
    std::fprintf(stderr, "usage: tensor_test path/to/libadd_one.so\n");
  }
  return report("");
}
