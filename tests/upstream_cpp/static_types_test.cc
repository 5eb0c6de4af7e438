// Conformance test: C++ compiled against the upstream apache-tvm-ffi headers,
// linked against tether's libtether_core (not libtvm_ffi). It drives the
// header-inline code paths that dereference what the C ABI hands back — the
// type info of POD indices in conversion errors, the start-up attribute
// columns, InitOnce/DeinitOnce, fields without getters — so a difference
// from upstream shows up here as a failed check or a crash.
//
// Only header-inline paths that need the TVMFFI* functions tether exports
// (tests/c/exported_symbols.txt) are used. Prints "N passed, N failed".

#include <tvm/ffi/any.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/accessor.h>
#include <tvm/ffi/string.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "check.h"

namespace ffi = tvm::ffi;

// Run `f`, which must throw an ffi::Error; return "kind: message" (or a
// marker when nothing or something else was thrown).
template <typename F>
static std::string error_of(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const ffi::Error& e) {
    return e.kind() + ": " + e.message();
  } catch (...) {
    return "<not an ffi::Error>";
  }
  return "<no error>";
}

// The headers' own spelling of every static type key, index by index.
static void test_type_keys() {
  using K = ffi::StaticTypeKey;
  const std::pair<int32_t, const char*> keys[] = {
      {kTVMFFINone, K::kTVMFFINone},
      {kTVMFFIInt, K::kTVMFFIInt},
      {kTVMFFIBool, K::kTVMFFIBool},
      {kTVMFFIFloat, K::kTVMFFIFloat},
      {kTVMFFIOpaquePtr, K::kTVMFFIOpaquePtr},
      {kTVMFFIDataType, K::kTVMFFIDataType},
      {kTVMFFIDevice, K::kTVMFFIDevice},
      {kTVMFFIDLTensorPtr, K::kTVMFFIDLTensorPtr},
      {kTVMFFIRawStr, K::kTVMFFIRawStr},
      {kTVMFFIByteArrayPtr, K::kTVMFFIByteArrayPtr},
      {kTVMFFIObjectRValueRef, K::kTVMFFIObjectRValueRef},
      {kTVMFFISmallStr, K::kTVMFFISmallStr},
      {kTVMFFISmallBytes, K::kTVMFFISmallBytes},
      {kTVMFFIUnchanged, K::kTVMFFIUnchanged},
      {kTVMFFIStr, K::kTVMFFIStr},
      {kTVMFFIBytes, K::kTVMFFIBytes},
      {kTVMFFIError, K::kTVMFFIError},
      {kTVMFFIFunction, K::kTVMFFIFunction},
      {kTVMFFIShape, K::kTVMFFIShape},
      {kTVMFFITensor, K::kTVMFFITensor},
      {kTVMFFIArray, K::kTVMFFIArray},
      {kTVMFFIMap, K::kTVMFFIMap},
      {kTVMFFIModule, K::kTVMFFIModule},
      {kTVMFFIOpaquePyObject, K::kTVMFFIOpaquePyObject},
      {kTVMFFIList, K::kTVMFFIList},
      {kTVMFFIDict, K::kTVMFFIDict},
      {kTVMFFIBigInt, K::kTVMFFIBigInt},
  };
  for (const auto& [index, key] : keys) {
    const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(index);
    CHECK(info != nullptr);
    if (info == nullptr) continue;
    CHECK(info->type_index == index);
    CHECK(ffi::TypeIndexToTypeKey(index) == key);
    int32_t found = -1;
    TVMFFIByteArray k{key, std::strlen(key)};
    CHECK(TVMFFITypeKeyToIndex(&k, &found) == 0 && found == index);
  }
  CHECK(ffi::TypeIndexToTypeKey(kTVMFFIObject) == "ffi.Object");
}

// A failed conversion words its message with the key of the value's type:
// for a POD that is the type info of a POD index.
static void test_failed_casts() {
  ffi::Any i = int64_t{7};
  std::string msg = error_of([&] { (void)i.cast<ffi::String>(); });
  CHECK(contains(msg, "TypeError") && contains(msg, "`int`") && contains(msg, "`str`"));
  if (!contains(msg, "`str`")) std::fprintf(stderr, "  got: %s\n", msg.c_str());

  ffi::Any b = true;
  msg = error_of([&] { (void)b.cast<void*>(); });
  CHECK(contains(msg, "TypeError") && contains(msg, "`bool`") && contains(msg, "`void*`"));

  ffi::Any none;
  msg = error_of([&] { (void)none.cast<double>(); });
  CHECK(contains(msg, "TypeError") && contains(msg, "`None`") && contains(msg, "`float`"));

  ffi::Any f = 1.5;
  msg = error_of([&] { (void)f.cast<DLDevice>(); });
  CHECK(contains(msg, "TypeError") && contains(msg, "`float`") && contains(msg, "Device"));

  // A value that went through tether: the small string echoed back keeps
  // its POD index, whose key names it in the error.
  ffi::Function echo = ffi::Function::GetGlobalRequired("testing.echo");
  ffi::Any s = echo(ffi::String("hi"));
  msg = error_of([&] { (void)s.cast<int64_t>(); });
  CHECK(contains(msg, "TypeError") && contains(msg, "`int`") && contains(msg, "ffi."));
  if (!contains(msg, "`int`")) std::fprintf(stderr, "  got: %s\n", msg.c_str());
  CHECK(s.cast<ffi::String>() == "hi");

  // try_cast reports the mismatch without the message, and never crashes.
  CHECK(!i.try_cast<ffi::String>().has_value());
  CHECK(i.try_cast<int64_t>().value() == 7);
}

// The headers abort (throw) when a column they look up is missing.
static void test_attr_columns() {
  const char* names[] = {"__s_visit__",   "__s_equal__",      "__s_hash__",
                         "__any_hash__",  "__any_equal__",    "__ffi_repr__",
                         "__ffi_hash__",  "__ffi_eq__",       "__ffi_compare__",
                         "__data_to_json__", "__data_from_json__", "__ffi_init__",
                         "__ffi_new__",   "__ffi_shallow_copy__", "__ffi_convert__",
                         "__s_mutate__",  "__s_maybe_inplace_mutate__", "__ffi_type_final__",
                         "__ffi_enum__"};
  for (const char* name : names) {
    std::string msg = error_of([&] {
      ffi::reflection::TypeAttrColumn column(name);
      // An unset entry reads as None; any index, static or not.
      (void)column[kTVMFFIArray];
      (void)column[kTVMFFIInt];
      throw ffi::Error("Ok", "", "");
    });
    CHECK(msg == "Ok: ");
    if (msg != "Ok: ") std::fprintf(stderr, "  column %s: %s\n", name, msg.c_str());
  }
  CHECK(ffi::reflection::TypeAttrColumn(ffi::type_attr::kInit)[kTVMFFIArray] == nullptr);
  std::string missing = error_of([] { ffi::reflection::TypeAttrColumn column("cpp_test.no_such_column"); });
  CHECK(contains(missing, "RuntimeError") && contains(missing, "cpp_test.no_such_column"));

  // What refl::EnsureTypeAttrColumn does: register for kTVMFFINone.
  TVMFFIByteArray name{"cpp_test.ensured", 16};
  ffi::AnyView none;
  CHECK(TVMFFITypeRegisterAttr(kTVMFFINone, &name, reinterpret_cast<const TVMFFIAny*>(&none)) == 0);
  std::string ensured = error_of([] {
    ffi::reflection::TypeAttrColumn column("cpp_test.ensured");
    if (column[kTVMFFINone] != nullptr) throw ffi::Error("NotNone", "", "");
    throw ffi::Error("Ok", "", "");
  });
  CHECK(ensured == "Ok: ");
}

static int yields_null(void** result) {
  *result = nullptr;
  return 0;
}
static int deinit_fails(void*) {
  TVMFFIErrorSetRaisedFromCStr("RuntimeError", "cannot release");
  return -1;
}

static void test_init_once() {
  void* handle = nullptr;
  CHECK(TVMFFIHandleInitOnce(&handle, yields_null) != 0 && handle == nullptr);
  ffi::Error err = ffi::details::MoveFromSafeCallRaised();
  CHECK(err.kind() == "RuntimeError" && contains(err.message(), "non-NULL"));

  int value = 0;
  handle = &value;
  CHECK(TVMFFIHandleDeinitOnce(&handle, deinit_fails) == -1 && handle == nullptr);
  err = ffi::details::MoveFromSafeCallRaised();
  CHECK(err.kind() == "RuntimeError" && err.message() == "cannot release");
  CHECK(TVMFFIHandleDeinitOnce(&handle, deinit_fails) == 0);
}

// A field registered without a getter is accepted and visible to the
// headers' reflection lookups, with its getter NULL.
static void test_field_without_getter() {
  TVMFFIByteArray key{"cpp_test.Described", 18};
  int32_t index = TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 0, kTVMFFIObject);
  CHECK(index >= kTVMFFIDynObjectBegin);
  TVMFFIFieldInfo info{};
  info.name = TVMFFIByteArray{"opaque", 6};
  info.size = 8;
  info.alignment = 8;
  info.offset = sizeof(TVMFFIObject);
  info.getter = nullptr;
  info.setter = nullptr;
  info.field_static_type_index = kTVMFFIOpaquePtr;
  CHECK(TVMFFITypeRegisterField(index, &info) == 0);
  const TVMFFIFieldInfo* found = ffi::reflection::GetFieldInfo("cpp_test.Described", "opaque");
  CHECK(found != nullptr && found->getter == nullptr && found->offset == (int64_t)sizeof(TVMFFIObject));
  CHECK(ffi::TypeIndexToTypeKey(found->field_static_type_index) == "void*");
}

int main() {
  test_type_keys();
  test_failed_casts();
  test_attr_columns();
  test_init_once();
  test_field_without_getter();
  return report("");
}
