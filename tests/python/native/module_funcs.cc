// A library for the Module API suites, written against TVM-FFI's headers:
// typed exports with metadata and docstrings (built with
// TVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1), a `main` entry, and a function
// registered in the system library (also exported as a plain symbol, so a
// process that loads the library globally finds it either way).
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>

#include <string>

namespace {
int64_t Add(int64_t a, int64_t b) { return a + b; }
std::string Greet(std::string who) { return "hello " + who; }
int64_t Twice(int64_t x) { return x * 2; }
tvm::ffi::Array<tvm::ffi::Any> Pair(tvm::ffi::Any a, tvm::ffi::Any b) { return {a, b}; }
}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(add, Add);
TVM_FFI_DLL_EXPORT_TYPED_FUNC_DOC(add, "Add two integers.");
TVM_FFI_DLL_EXPORT_TYPED_FUNC(greet, Greet);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(main, Twice);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(pair, Pair);

extern "C" TVM_FFI_DLL_EXPORT int __tvm_ffi_syslib_add_one(void*, const TVMFFIAny* args, int32_t num_args,
                                                           TVMFFIAny* result) {
  TVM_FFI_SAFE_CALL_BEGIN();
  TVM_FFI_ICHECK_EQ(num_args, 1);
  int64_t x = reinterpret_cast<const tvm::ffi::AnyView*>(args)[0].cast<int64_t>();
  *reinterpret_cast<tvm::ffi::Any*>(result) = x + 1;
  TVM_FFI_SAFE_CALL_END();
}

namespace {
const int kRegistered =
    TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_syslib_add_one", reinterpret_cast<void*>(__tvm_ffi_syslib_add_one));
}  // namespace
