// A nanobind extension taking and returning tether objects through
// <tether/nanobind.h> (tests/python/test_nanobind.py): identity through
// nanobind, errors in both directions, containers, tensors, callbacks, and
// an object made with tether::make_object returned through nanobind.
#include <tether/nanobind.h>

#include <nanobind/stl/string.h>

namespace nb = nanobind;
using namespace tether;

namespace nb_plugin {

class CounterObj : public Object {
 public:
  int64_t value = 0;
  ObjectRef payload;
  explicit CounterObj(int64_t v) : value(v) {}
  TETHER_DECLARE_OBJECT_INFO_FINAL("nb_plugin.Counter", CounterObj, Object);
};

class Counter : public ObjectRef {
 public:
  TETHER_DEFINE_OBJECT_REF_METHODS(Counter, ObjectRef, CounterObj);
};

TETHER_STATIC_INIT_BLOCK() {
  reflection::ObjectDef<CounterObj>()
      .def_ro("value", &CounterObj::value, "the count")
      .def_rw("payload", &CounterObj::payload, "any object");
}

}  // namespace nb_plugin

NB_MODULE(nb_plugin, m) {
  using nb_plugin::Counter;
  using nb_plugin::CounterObj;
  tether::nanobind_interop::install(m);
  m.def("identity", [](ObjectRef x) { return x; }, nb::arg("x").none());  // None: a null ObjectRef
  m.def("identity_strict", [](ObjectRef x) { return x; });
  m.def("identity_any", [](Any x) { return x; }, nb::arg("x").none());
  m.def("type_key", [](ObjectRef x) { return x.GetTypeKey(); });
  m.def("use_count", [](ObjectRef x) { return x.use_count(); });
  m.def("array_sum", [](Array<int64_t> a) {
    int64_t s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i];
    return s;
  });
  m.def("make_array", [](int64_t n) {
    std::vector<Any> items;
    for (int64_t i = 0; i < n; ++i) items.emplace_back(i);
    return Array<Any>(items);
  });
  m.def("first", [](Array<ObjectRef> a) { return a[0]; });
  m.def("make_counter", [](int64_t v, ObjectRef payload) {
    ObjectPtr<CounterObj> c = make_object<CounterObj>(v);
    c->payload = std::move(payload);
    return Counter(std::move(c));
  });
  m.def("counter_value", [](Counter c) { return c->value; });
  m.def("is_registry_allocated", [](ObjectRef x) { return IsRegistryAllocated(x.get()); });
  m.def("call", [](Function f, Any x) { return f(x); });
  m.def("fail", [](std::string kind, std::string message) -> int64_t { throw Error(kind, message); });
  m.def("fail_std", []() -> int64_t { throw std::runtime_error("plain C++ failure"); });
  m.def("tensor_numel", [](Tensor t) {
    int64_t n = 1;
    for (int64_t d : t.shape()) n *= d;
    return n;
  });
  m.def("same_tensor", [](Tensor t) { return t; });
  m.def("str_of", [](String s) { return s; });
}
