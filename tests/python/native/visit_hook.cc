// A type defined in C++ against apache-tvm-ffi's headers whose structural
// visit is a native function-pointer hook (`__s_visit__`), as TVM's IR
// types register theirs: it visits `first` and skips `second` on purpose.
#include <tvm/ffi/extra/structural_visit.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

namespace ffi = tvm::ffi;
namespace refl = tvm::ffi::reflection;

class HookPairObj : public ffi::Object {
 public:
  ffi::ObjectRef first;
  ffi::ObjectRef second;

  HookPairObj(ffi::ObjectRef a, ffi::ObjectRef b) : first(std::move(a)), second(std::move(b)) {}

  static ffi::Expected<ffi::Optional<ffi::VisitInterrupt>> Visit(ffi::StructuralVisitorObj* visitor,
                                                                 ffi::AnyView value) noexcept {
    const auto* self = value.cast<const HookPairObj*>();
    // skips: second, so a walk from Python shows whether this hook ran.
    return visitor->VisitExpected(self->first);
  }

  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tests.visit_hook.Pair", HookPairObj, ffi::Object);
};

TVM_FFI_STATIC_INIT_BLOCK() {
  refl::ObjectDef<HookPairObj>()
      .def_ro("first", &HookPairObj::first)
      .def_ro("second", &HookPairObj::second);
  refl::EnsureTypeAttrColumn(ffi::type_attr::kStructuralVisit);
  refl::TypeAttrDef<HookPairObj>().native_fn_attr<&HookPairObj::Visit>(ffi::type_attr::kStructuralVisit);
  refl::GlobalDef().def("tests.visit_hook.make_pair", [](ffi::ObjectRef a, ffi::ObjectRef b) {
    return ffi::ObjectRef(ffi::make_object<HookPairObj>(std::move(a), std::move(b)));
  });
}
