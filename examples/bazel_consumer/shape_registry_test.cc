// The consumer's TVM-FFI-style test: a library written against
// <tvm/ffi/...> and built through @tether//:tvm_ffi registers its type and
// globals in tether's core; values, objects and errors cross the registry.
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdio>
#include <limits>
#include <string>

#include "shape_registry.h"

namespace ffi = tvm::ffi;

static int failures = 0;
static int passed = 0;

#define EXPECT(cond)                                                          \
  do {                                                                        \
    if (cond) {                                                               \
      ++passed;                                                               \
    } else {                                                                  \
      ++failures;                                                             \
      std::fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                         \
  } while (0)

// The kind of the tvm::ffi::Error `f` throws, or "" when it returns.
template <typename F>
static std::string ErrorKind(F f) {
  try {
    f();
  } catch (const ffi::Error& e) {
    return e.kind();
  }
  return "";
}

int main() {
  consumer::Shape2D a = consumer::MakeShape(3, 4);
  consumer::Shape2D b = consumer::MakeShape(5, 6);
  EXPECT(a->width == 3 && a->height == 4);
  EXPECT(a->IsInstance<consumer::Shape2DObj>());
  EXPECT(consumer::TotalArea(ffi::Array<consumer::Shape2D>{a, b}) == 42);
  EXPECT(consumer::TotalArea(ffi::Array<consumer::Shape2D>{}) == 0);

  // An object made here comes back as the same object through the core.
  ffi::Function area = ffi::Function::GetGlobalRequired("consumer.area");
  EXPECT(area(a).cast<int64_t>() == 12);
  EXPECT(!ffi::Function::GetGlobal("consumer.no_such_function").has_value());

  EXPECT(ErrorKind([] { consumer::MakeShape(-1, 2); }) == "ValueError");
  const int64_t big = std::numeric_limits<int64_t>::max() / 2;
  EXPECT(ErrorKind([&] {
           consumer::TotalArea(ffi::Array<consumer::Shape2D>{consumer::MakeShape(big, 2), consumer::MakeShape(2, 1)});
         }) == "OverflowError");
  EXPECT(ErrorKind([] { ffi::Function::GetGlobalRequired("consumer.no_such_function"); }) != "");

  std::printf("%d passed, %d failed\n", passed, failures);
  return failures == 0 ? 0 : 1;
}
