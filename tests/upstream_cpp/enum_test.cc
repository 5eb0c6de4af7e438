// Enums declared in C++ with apache-tvm-ffi's own headers (enum.h,
// reflection/enum_def.h), linked against tether's core only: the headers'
// inline EnumDef fills the state the core registered the column for, and
// the core's lookups, JSON graphs, deep copies and repr treat the
// singletons as upstream's library does.

#include <tvm/ffi/any.h>
#include <tvm/ffi/enum.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/dataclass.h>
#include <tvm/ffi/extra/json.h>
#include <tvm/ffi/extra/serialization.h>
#include <tvm/ffi/reflection/enum_def.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <limits>
#include <string>

#include "check.h"

namespace ffi = tvm::ffi;
namespace refl = tvm::ffi::reflection;

class ConfColorObj : public ffi::EnumObj {
 public:
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("conformance.Color", ConfColorObj, ffi::EnumObj);
};

class ConfLevelObj : public ffi::IntEnumObj {
 public:
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("conformance.Level", ConfLevelObj, ffi::IntEnumObj);
};

class ConfOpObj : public ffi::StrEnumObj {
 public:
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("conformance.Op", ConfOpObj, ffi::StrEnumObj);
};

TVM_FFI_STATIC_INIT_BLOCK() {
  refl::ObjectDef<ConfColorObj>(refl::init(false));  // NOLINT(bugprone-unused-raii)
  refl::EnumDef<ConfColorObj>("Red").set_attr("hex", ffi::String("#f00"));
  refl::EnumDef<ConfColorObj>("Green").set_attr("hex", ffi::String("#0f0"));
  refl::ObjectDef<ConfLevelObj>(refl::init(false));  // NOLINT(bugprone-unused-raii)
  refl::EnumDef<ConfLevelObj>("Low", -5);             // NOLINT(bugprone-unused-raii)
  refl::EnumDef<ConfLevelObj>("Max", std::numeric_limits<int64_t>::max());  // NOLINT(bugprone-unused-raii)
  refl::ObjectDef<ConfOpObj>(refl::init(false));      // NOLINT(bugprone-unused-raii)
  refl::EnumDef<ConfOpObj>("+");                      // NOLINT(bugprone-unused-raii)
}

static std::string error_of(void (*body)()) {
  try {
    body();
  } catch (const ffi::Error& e) {
    return e.kind() + ": " + e.message();
  }
  return "no error";
}

static void test_lookups() {
  ffi::Enum red = ffi::EnumObj::_GetByStrIndex<ConfColorObj>("Red");
  ffi::Enum green = ffi::EnumObj::_GetByIntIndex<ConfColorObj>(1);
  CHECK(red->_int_index == 0 && std::string(red->_str_index) == "Red");
  CHECK(std::string(green->_str_index) == "Green");
  CHECK(ffi::EnumObj::_GetByIntIndex<ConfColorObj>(0).same_as(red));
  CHECK(red->type_index() == ConfColorObj::RuntimeTypeIndex());
  ffi::Enum max = ffi::EnumObj::_GetByIntIndex<ConfLevelObj>(std::numeric_limits<int64_t>::max());
  CHECK(ffi::EnumObj::_GetByStrIndex<ConfLevelObj>("Max").same_as(max));
  CHECK(error_of([] { ffi::EnumObj::_GetByStrIndex<ConfColorObj>("Blue"); }) ==
        "ValueError: Enum `conformance.Color` has no instance with index Blue");
  CHECK(error_of([] { ffi::EnumObj::_GetByIntIndex<ConfLevelObj>(7); }) ==
        "ValueError: Enum `conformance.Level` has no instance with index 7");
  CHECK(refl::EnumDef<ConfColorObj>::IsDefined("Green"));
  CHECK(!refl::EnumDef<ConfColorObj>::IsDefined("Blue"));
  CHECK(contains(error_of([] { refl::EnumDef<ConfColorObj>("Red"); }), "Duplicate enum index"));
}

static void test_state() {
  refl::TypeAttrColumn states(ffi::type_attr::kEnumState);
  ffi::EnumState state = states[ConfColorObj::RuntimeTypeIndex()].cast<ffi::EnumState>();
  CHECK(state->entries.size() == 2);
  ffi::Enum red = ffi::EnumObj::_GetByStrIndex<ConfColorObj>("Red");
  CHECK(state->entries[0].same_as(red));
  CHECK(std::string(state->attrs.at("hex").at(red).cast<ffi::String>()) == "#f00");
  // The core's reflection of the state reads the same containers.
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(ffi::EnumStateObj::RuntimeTypeIndex());
  CHECK(info != nullptr && info->num_fields == 3);
}

static void test_serialization_copy_and_repr() {
  ffi::Enum red = ffi::EnumObj::_GetByStrIndex<ConfColorObj>("Red");
  ffi::Enum low = ffi::EnumObj::_GetByIntIndex<ConfLevelObj>(-5);
  ffi::Enum plus = ffi::EnumObj::_GetByStrIndex<ConfOpObj>("+");
  for (const ffi::Enum& e : {red, low, plus}) {
    ffi::json::Value graph = ffi::ToJSONGraph(e);
    CHECK(ffi::FromJSONGraph(graph).cast<ffi::Enum>().same_as(e));
    CHECK(ffi::DeepCopy(e).cast<ffi::Enum>().same_as(e));
  }
  std::string red_text = ffi::json::Stringify(ffi::ToJSONGraph(red));
  CHECK(contains(red_text, "\"data\": \"Red\"") || contains(red_text, "\"data\":\"Red\""));
  std::string low_text = ffi::json::Stringify(ffi::ToJSONGraph(low));
  CHECK(contains(low_text, "-5"));
  CHECK(std::string(ffi::ReprPrint(red)) == "conformance.Color.Red");
  CHECK(std::string(ffi::ReprPrint(plus)) == "conformance.Op.+");
}

int main() {
  test_lookups();
  test_state();
  test_serialization_copy_and_repr();
  return report("enum_test: ");
}
