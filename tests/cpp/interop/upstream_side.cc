// The upstream half of the interoperability test: a library compiled
// against apache-tvm-ffi's published headers and linked to libtether_core.
// It declares interop.Shared with the same key and layout as the tether
// half (tests/cpp/interop_test.cc) and registers globals that make, read,
// store, call back and throw, so objects and errors cross both ways.
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <string>

namespace ffi = tvm::ffi;

namespace upstream_side {

class SharedObj : public ffi::Object {
 public:
  int64_t value = 0;
  ffi::String name;
  SharedObj(int64_t v, ffi::String n) : value(v), name(std::move(n)) {}
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("interop.Shared", SharedObj, ffi::Object);
};

class Shared : public ffi::ObjectRef {
 public:
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NULLABLE(Shared, ffi::ObjectRef, SharedObj);
};

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      .def("interop.up_make", [](int64_t v, ffi::String n) { return Shared(ffi::make_object<SharedObj>(v, n)); })
      .def("interop.up_value", [](Shared s) { return s->value; })
      .def("interop.up_name", [](Shared s) { return s->name; })
      .def("interop.up_pair", [](Shared s) { return ffi::Array<Shared>{s, s}; })
      .def("interop.up_map_get", [](ffi::Map<ffi::String, int64_t> m, ffi::String k) { return m.at(k); })
      .def("interop.up_type_index", []() { return static_cast<int64_t>(SharedObj::RuntimeTypeIndex()); })
      .def("interop.up_throw", []() -> int64_t { TVM_FFI_THROW(ValueError) << "thrown by upstream code"; })
      .def("interop.up_call_plus_one", [](ffi::Function f, int64_t x) { return f(x).cast<int64_t>() + 1; })
      .def("interop.up_catch", [](ffi::Function f) -> ffi::String {
        try {
          f();
        } catch (const ffi::Error& e) {
          return e.kind() + ": " + e.message();
        }
        return "no error";
      });
}

}  // namespace upstream_side
