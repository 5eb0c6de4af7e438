// Tensors C++ builds against apache-tvm-ffi's published headers, read by
// tether's core. Upstream's TensorObj is the object header followed by the
// DLTensor and nothing else of the core's: what a subclass such as
// Tensor::FromNDAlloc's puts after it (its allocator, the shape cells) is
// its own. The core must read such a Tensor by that layout alone, so its
// DLPack export is writeable and not copied whatever the shape (the bytes
// after the DLTensor vary with it), as upstream's own ToDLPackVersioned is.
//
// Built with the peer's headers (-I the tvm_ffi package's include folder),
// linked to tether's core only. Exits non-zero on the first failure.

#include <tvm/ffi/c_api.h>
#include <tvm/ffi/container/tensor.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

int failures = 0;

#define EXPECT(cond)                                                         \
  do {                                                                       \
    if (!(cond)) {                                                           \
      std::fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                            \
    }                                                                        \
  } while (0)

// A CPU allocator in the shape FromNDAlloc takes; it fills the data with a
// byte pattern so the export can be checked to share it.
struct PatternAlloc {
  void AllocData(DLTensor* t) {
    size_t n = 1;
    for (int i = 0; i < t->ndim; ++i) n *= static_cast<size_t>(t->shape[i]);
    const size_t bytes = n * ((t->dtype.bits * t->dtype.lanes + 7) / 8);
    t->data = std::malloc(bytes == 0 ? 1 : bytes);
    std::memset(t->data, 0x5a, bytes);
  }
  void FreeData(DLTensor* t) { std::free(t->data); }
};

void CheckExportsWriteable(const std::vector<int64_t>& dims) {
  using tvm::ffi::Shape;
  using tvm::ffi::Tensor;
  Tensor t = Tensor::FromNDAlloc(PatternAlloc(), Shape(dims.begin(), dims.end()), DLDataType{kDLFloat, 32, 1},
                                 DLDevice{kDLCPU, 0});
  TVMFFIObjectHandle handle = tvm::ffi::details::ObjectUnsafe::TVMFFIObjectPtrFromObjectRef(t);
  const DLTensor* dl = t.GetDLTensorPtr();

  // The core's export (tether's TVMFFITensorToDLPackVersioned, not the
  // headers' inline one).
  DLManagedTensorVersioned* managed = nullptr;
  EXPECT(TVMFFITensorToDLPackVersioned(handle, &managed) == 0);
  if (managed == nullptr) return;
  EXPECT((managed->flags & DLPACK_FLAG_BITMASK_READ_ONLY) == 0);
  EXPECT((managed->flags & DLPACK_FLAG_BITMASK_IS_COPIED) == 0);
  EXPECT(managed->dl_tensor.data == dl->data);
  EXPECT(managed->dl_tensor.ndim == static_cast<int>(dims.size()));
  for (size_t i = 0; i < dims.size(); ++i) EXPECT(managed->dl_tensor.shape[i] == dims[i]);
  EXPECT(static_cast<unsigned char*>(managed->dl_tensor.data)[0] == 0x5a);
  managed->deleter(managed);

  // The legacy export refuses read-only Tensors in the Python layer; the
  // core hands it out for a writeable one.
  DLManagedTensor* legacy = nullptr;
  EXPECT(TVMFFITensorToDLPack(handle, &legacy) == 0);
  if (legacy != nullptr) {
    EXPECT(legacy->dl_tensor.data == dl->data);
    legacy->deleter(legacy);
  }

  // A view the core makes of it inherits its (absent) flags.
  DLTensor proto = *dl;
  TVMFFIObjectHandle view = nullptr;
  EXPECT(TVMFFITensorCreateUnsafeView(handle, &proto, &view) == 0);
  if (view != nullptr) {
    DLManagedTensorVersioned* from_view = nullptr;
    EXPECT(TVMFFITensorToDLPackVersioned(view, &from_view) == 0);
    if (from_view != nullptr) {
      EXPECT((from_view->flags & DLPACK_FLAG_BITMASK_READ_ONLY) == 0);
      from_view->deleter(from_view);
    }
    TVMFFIObjectDecRef(view);
  }
}

}  // namespace

int main() {
  const std::vector<std::vector<int64_t>> shapes = {{2, 3}, {2, 5}, {3, 4}, {7}, {1, 1, 1, 255}, {}};
  for (const auto& dims : shapes) CheckExportsWriteable(dims);
  if (failures != 0) {
    std::fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("upstream_tensor_layout_test: %zu shapes exported writeable\n", shapes.size());
  return 0;
}
