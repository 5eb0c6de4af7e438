#include "shape_registry.h"

#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <limits>

namespace consumer {
namespace {

namespace ffi = tvm::ffi;
namespace refl = tvm::ffi::reflection;

Shape2D Make(int64_t width, int64_t height) {
  if (width < 0 || height < 0) {
    TVM_FFI_THROW(ValueError) << "a shape's sides must not be negative, got " << width << " x " << height;
  }
  return Shape2D(ffi::make_object<Shape2DObj>(width, height));
}

// Checked (sides are never negative, see Make): hostile sizes raise instead
// of wrapping around. Portable arithmetic, for MSVC as well.
int64_t Total(const ffi::Array<Shape2D>& shapes) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t total = 0;
  for (const Shape2D& s : shapes) {
    if (s->height != 0 && s->width > kMax / s->height) {
      TVM_FFI_THROW(OverflowError) << "a shape's area does not fit in 64 bits";
    }
    const int64_t area = s->width * s->height;
    if (area > kMax - total) {
      TVM_FFI_THROW(OverflowError) << "the total area does not fit in 64 bits";
    }
    total += area;
  }
  return total;
}

}  // namespace

TVM_FFI_STATIC_INIT_BLOCK() {
  refl::ObjectDef<Shape2DObj>().def_ro("width", &Shape2DObj::width).def_ro("height", &Shape2DObj::height);
  refl::GlobalDef()
      .def("consumer.make_shape", Make)
      .def("consumer.total_area", Total)
      .def("consumer.area", [](Shape2D s) { return Total(ffi::Array<Shape2D>{s}); });
}

// Callers go through the registry, as code in another library would.
Shape2D MakeShape(int64_t width, int64_t height) {
  return ffi::Function::GetGlobalRequired("consumer.make_shape")(width, height).cast<Shape2D>();
}

int64_t TotalArea(const ffi::Array<Shape2D>& shapes) {
  return ffi::Function::GetGlobalRequired("consumer.total_area")(shapes).cast<int64_t>();
}

}  // namespace consumer
