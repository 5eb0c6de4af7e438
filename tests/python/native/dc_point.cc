// A C++ type with reflected fields, written against apache-tvm-ffi's
// headers (ObjectDef, default values, keyword-only and init=False fields)
// and linked to tether's core: the native side of the c_class tests.
#include <tvm/ffi/object.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

namespace refl = tvm::ffi::reflection;

class DcPointObj : public tvm::ffi::Object {
 public:
  int64_t x = 0;
  double y = 0.0;
  tvm::ffi::String label;
  int64_t hidden = 7;
  static constexpr bool _type_mutable = true;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("testing.dc.Point", DcPointObj, tvm::ffi::Object);
};

TVM_FFI_STATIC_INIT_BLOCK() {
  refl::ObjectDef<DcPointObj>()
      .def_rw("x", &DcPointObj::x)
      .def_rw("y", &DcPointObj::y, refl::default_value(1.5))
      .def_ro("label", &DcPointObj::label, refl::default_value(tvm::ffi::String("p")), refl::kw_only(true))
      .def_rw("hidden", &DcPointObj::hidden, refl::init(false), refl::repr(false));
}
