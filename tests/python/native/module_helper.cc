// A second library for the Module API suites: what a module finds through
// its imports (get_function(..., query_imports=True)).
#include <tvm/ffi/function.h>

namespace {
int64_t Negate(int64_t x) { return -x; }
}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(negate, Negate);
