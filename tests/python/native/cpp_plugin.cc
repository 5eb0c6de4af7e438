// A plugin written against tether's own C++ headers (tests/python/test_cpp_layer.py):
// a reflected type with fields and methods, global functions registered at
// load time, and an entry point exported with TETHER_DLL_EXPORT_TYPED_FUNC.
#include <tether/tether.h>

namespace cpp_plugin {

using namespace tether;

class PointObj : public Object {
 public:
  int64_t x = 0;
  int64_t y = 0;
  String label;
  ObjectRef child;  // another object, to check that Python ties it

  PointObj() = default;
  PointObj(int64_t x_, int64_t y_, String label_) : x(x_), y(y_), label(std::move(label_)) {}
  int64_t Norm2() const { return x * x + y * y; }
  void Shift(int64_t dx) { x += dx; }

  TETHER_DECLARE_OBJECT_INFO_FINAL("cpp_plugin.Point", PointObj, Object);
};

class Point : public ObjectRef {
 public:
  TETHER_DEFINE_OBJECT_REF_METHODS(Point, ObjectRef, PointObj);
};

Point MakePoint(int64_t x, int64_t y, String label, ObjectRef child) {
  ObjectPtr<PointObj> p = make_object<PointObj>(x, y, std::move(label));
  p->child = std::move(child);
  return Point(std::move(p));
}

int64_t SumX(Array<Point> points) {
  int64_t s = 0;
  for (size_t i = 0; i < points.size(); ++i) s += points[i]->x;
  return s;
}

TETHER_STATIC_INIT_BLOCK() {
  reflection::ObjectDef<PointObj>()
      .def_ro("x", &PointObj::x, "the x coordinate")
      .def_ro("y", &PointObj::y, "the y coordinate")
      .def_rw("label", &PointObj::label, "a label, writable")
      .def_rw("child", &PointObj::child, "any object")
      .def("norm2", &PointObj::Norm2, "x*x + y*y")
      .def("shift", &PointObj::Shift, "moves x")
      .def(reflection::init<PointObj, int64_t, int64_t, String>());
  reflection::GlobalDef()
      .def("cpp_plugin.make_point", MakePoint)
      .def("cpp_plugin.sum_x", SumX)
      .def("cpp_plugin.allocations_are_registry", [](ObjectRef obj) { return IsRegistryAllocated(obj.get()); })
      .def("cpp_plugin.fail", [](String kind, String message) -> int { throw Error(kind, message); });
}

int64_t Scale(Point p, int64_t k) { return p->Norm2() * k; }

}  // namespace cpp_plugin

TETHER_DLL_EXPORT_TYPED_FUNC(scale, cpp_plugin::Scale);
