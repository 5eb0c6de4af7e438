// Conformance test: object types declared with apache-tvm-ffi's own macros
// (TVM_FFI_DECLARE_OBJECT_INFO with _type_child_slots, with and without
// overflow), registered at start-up through tether's
// TVMFFITypeGetOrAllocIndex, then told apart by the headers' inline
// IsInstance<T>() and ObjectRef::as<T>(). Those test an index range first
// and read the ancestor table only for types that allow overflow, so a type
// registered into another's reserved range would pass for it: each check
// below compares the headers' answer with the declared class hierarchy.
//
// Prints "N passed, N failed".

#include <tvm/ffi/c_api.h>
#include <tvm/ffi/memory.h>
#include <tvm/ffi/object.h>

#include <cstdio>
#include <cstring>
#include <type_traits>

#include "check.h"

namespace ffi = tvm::ffi;

// Declared (and so registered) in this order: the classes are initialised
// in the order they are defined. Indices relative to Base's, as TVM-FFI's
// runtime hands them out, in the trailing comments.
class BaseObj : public ffi::Object {
 public:
  static constexpr uint32_t _type_child_slots = 4;
  TVM_FFI_DECLARE_OBJECT_INFO("upstream_ranges.Base", BaseObj, ffi::Object);  // +0, owns +0..+4
};

class ChildAObj : public BaseObj {
 public:
  static constexpr uint32_t _type_child_slots = 0;  // the parent's is inherited otherwise
  TVM_FFI_DECLARE_OBJECT_INFO("upstream_ranges.ChildA", ChildAObj, BaseObj);  // +1
};

// Registered between Base's children: must land past Base's whole range.
class UnrelatedObj : public ffi::Object {
 public:
  TVM_FFI_DECLARE_OBJECT_INFO("upstream_ranges.Unrelated", UnrelatedObj, ffi::Object);  // +5
};

class MidObj : public BaseObj {
 public:
  static constexpr uint32_t _type_child_slots = 2;
  TVM_FFI_DECLARE_OBJECT_INFO("upstream_ranges.Mid", MidObj, BaseObj);  // +2, owns +2..+4
};

class MidLeafObj : public MidObj {
 public:
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("upstream_ranges.MidLeaf", MidLeafObj, MidObj);  // +3
};

// Base's range is full by now: overflows past everything handed out.
class ChildBObj : public BaseObj {
 public:
  static constexpr uint32_t _type_child_slots = 0;  // the parent's is inherited otherwise
  TVM_FFI_DECLARE_OBJECT_INFO("upstream_ranges.ChildB", ChildBObj, BaseObj);  // +6
};

// A base that keeps all its subtypes in range (no ancestor-table fallback).
class ClosedObj : public ffi::Object {
 public:
  static constexpr uint32_t _type_child_slots = 1;
  static constexpr bool _type_child_slots_can_overflow = false;
  TVM_FFI_DECLARE_OBJECT_INFO("upstream_ranges.Closed", ClosedObj, ffi::Object);  // +7, owns +7..+8
};

class ClosedChildObj : public ClosedObj {
 public:
  static constexpr uint32_t _type_child_slots = 0;  // the parent's is inherited otherwise
  TVM_FFI_DECLARE_OBJECT_INFO("upstream_ranges.ClosedChild", ClosedChildObj, ClosedObj);  // +8
};

// One object of each type, as an ObjectRef.
struct Instances {
  ffi::ObjectRef base = ffi::ObjectRef(ffi::make_object<BaseObj>());
  ffi::ObjectRef child_a = ffi::ObjectRef(ffi::make_object<ChildAObj>());
  ffi::ObjectRef unrelated = ffi::ObjectRef(ffi::make_object<UnrelatedObj>());
  ffi::ObjectRef mid = ffi::ObjectRef(ffi::make_object<MidObj>());
  ffi::ObjectRef mid_leaf = ffi::ObjectRef(ffi::make_object<MidLeafObj>());
  ffi::ObjectRef child_b = ffi::ObjectRef(ffi::make_object<ChildBObj>());
  ffi::ObjectRef closed = ffi::ObjectRef(ffi::make_object<ClosedObj>());
  ffi::ObjectRef closed_child = ffi::ObjectRef(ffi::make_object<ClosedChildObj>());
};

static void test_indices() {
  const int32_t b = BaseObj::RuntimeTypeIndex();
  std::printf("upstream_ranges.Base at index %d\n", b);
  CHECK(b >= kTVMFFIDynObjectBegin);
  CHECK(ChildAObj::RuntimeTypeIndex() == b + 1);
  CHECK(MidObj::RuntimeTypeIndex() == b + 2);
  CHECK(MidLeafObj::RuntimeTypeIndex() == b + 3);
  CHECK(UnrelatedObj::RuntimeTypeIndex() == b + 5);
  CHECK(ChildBObj::RuntimeTypeIndex() == b + 6);
  CHECK(ClosedObj::RuntimeTypeIndex() == b + 7);
  CHECK(ClosedChildObj::RuntimeTypeIndex() == b + 8);
}

// obj->IsInstance<T>() and ref.as<T>() agree with what the C++ classes say.
template <typename T, typename Actual>
static void expect_instance(const ffi::ObjectRef& ref, const char* what) {
  constexpr bool truth = std::is_base_of_v<T, Actual>;
  bool is = ref.get()->IsInstance<T>();
  bool as = ref.as<T>() != nullptr;
  if (is != truth || as != truth) {
    std::fprintf(stderr, "  %s: IsInstance %d, as %d, expected %d\n", what, is, as, truth);
  }
  CHECK(is == truth && as == truth);
}

template <typename Actual>
static void expect_all_targets(const ffi::ObjectRef& ref, const char* name) {
  expect_instance<ffi::Object, Actual>(ref, name);
  expect_instance<BaseObj, Actual>(ref, name);
  expect_instance<ChildAObj, Actual>(ref, name);
  expect_instance<UnrelatedObj, Actual>(ref, name);
  expect_instance<MidObj, Actual>(ref, name);
  expect_instance<MidLeafObj, Actual>(ref, name);
  expect_instance<ChildBObj, Actual>(ref, name);
  expect_instance<ClosedObj, Actual>(ref, name);
  expect_instance<ClosedChildObj, Actual>(ref, name);
}

static void test_is_instance() {
  Instances o;
  expect_all_targets<BaseObj>(o.base, "Base");
  expect_all_targets<ChildAObj>(o.child_a, "ChildA");
  expect_all_targets<UnrelatedObj>(o.unrelated, "Unrelated");
  expect_all_targets<MidObj>(o.mid, "Mid");
  expect_all_targets<MidLeafObj>(o.mid_leaf, "MidLeaf");
  expect_all_targets<ChildBObj>(o.child_b, "ChildB");
  expect_all_targets<ClosedObj>(o.closed, "Closed");
  expect_all_targets<ClosedChildObj>(o.closed_child, "ClosedChild");
}

// A second subtype of the full, closed base is refused through the error
// channel (TVM-FFI's own library ends the process there instead).
static void test_closed_base_refuses() {
  const char* key = "upstream_ranges.ClosedChild2";
  TVMFFIByteArray k{key, std::strlen(key)};
  CHECK(TVMFFITypeGetOrAllocIndex(&k, -1, 2, 0, 1, ClosedObj::RuntimeTypeIndex()) == -1);
  TVMFFIObjectHandle err = nullptr;
  TVMFFIErrorMoveFromRaised(&err);
  CHECK(err != nullptr);
  if (err != nullptr) {
    const TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
    std::string message(cell->message.data, cell->message.size);
    CHECK(contains(message, "forbids overflow"));
    TVMFFIObjectDecRef(err);
  }
}

int main() {
  test_indices();
  test_is_instance();
  test_closed_base_refuses();
  return report();
}
