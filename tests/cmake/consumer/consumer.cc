// A program written against TVM-FFI's C++ headers, built through tether's
// `tvm_ffi` CMake package: functions, globals, containers and errors go
// through libtether_core. Exits 1 naming the first behaviour that differs.
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace ffi = tvm::ffi;

namespace {

int failures = 0;

void Expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "consumer: FAILED: %s\n", what);
    ++failures;
  }
}

}  // namespace

int main() {
  ffi::Function add = ffi::Function::FromTyped([](int64_t a, int64_t b) { return a + b; });
  Expect(add(40, 2).cast<int64_t>() == 42, "a typed function adds its arguments");

  ffi::Function::SetGlobal("tether_cmake_consumer.add", add);
  std::optional<ffi::Function> found = ffi::Function::GetGlobal("tether_cmake_consumer.add");
  Expect(found.has_value() && (*found)(1, 2).cast<int64_t>() == 3, "a global function is found by name");
  Expect(!ffi::Function::GetGlobal("tether_cmake_consumer.absent").has_value(),
         "an unregistered global is absent");

  ffi::Array<ffi::String> names{"alpha", "beta"};
  names.push_back("gamma");
  Expect(names.size() == 3 && std::string(names[2]) == "gamma", "Array grows and reads back");

  ffi::Map<ffi::String, int64_t> counts{{"x", 1}};
  counts.Set("y", 2);
  Expect(counts.size() == 2 && counts.at("y") == 2, "Map sets and reads back");

  ffi::Function fail = ffi::Function::FromTyped([](int64_t) -> int64_t {
    TVM_FFI_THROW(ValueError) << "refused";
    return 0;
  });
  bool raised = false;
  try {
    fail(1);
  } catch (const ffi::Error& err) {
    raised = err.kind() == "ValueError" && err.message() == "refused";
  }
  Expect(raised, "an error thrown in a function reaches the caller with its kind and message");

  if (failures == 0) std::printf("consumer: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
