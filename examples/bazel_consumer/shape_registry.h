// A TVM-style component written against apache-tvm-ffi's C++ API
// (<tvm/ffi/...>), built through @tether//:tvm_ffi: its objects, globals and
// errors live in tether's core. It registers a `consumer.Shape2D` object
// type and three globals when the library loads.
#ifndef TETHER_CONSUMER_SHAPE_REGISTRY_H_
#define TETHER_CONSUMER_SHAPE_REGISTRY_H_

#include <tvm/ffi/container/array.h>
#include <tvm/ffi/object.h>

#include <cstdint>

namespace consumer {

// A width x height rectangle, an FFI object with reflected fields.
class Shape2DObj : public tvm::ffi::Object {
 public:
  int64_t width = 0;
  int64_t height = 0;
  Shape2DObj(int64_t w, int64_t h) : width(w), height(h) {}
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("consumer.Shape2D", Shape2DObj, tvm::ffi::Object);
};

class Shape2D : public tvm::ffi::ObjectRef {
 public:
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NULLABLE(Shape2D, tvm::ffi::ObjectRef, Shape2DObj);
};

// A shape through the `consumer.make_shape` global (ValueError for a
// negative side).
Shape2D MakeShape(int64_t width, int64_t height);

// The summed areas of `shapes`, through the `consumer.total_area` global
// (OverflowError when the sum does not fit in 64 bits).
int64_t TotalArea(const tvm::ffi::Array<Shape2D>& shapes);

}  // namespace consumer

#endif  // TETHER_CONSUMER_SHAPE_REGISTRY_H_
