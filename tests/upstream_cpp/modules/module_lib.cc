// A library the way TVM-FFI users write one (TVM_FFI_DLL_EXPORT_TYPED_FUNC,
// a docstring, the library context and a context symbol), built by the
// modules conformance test and loaded with Module::LoadFromFile.
#include <tvm/ffi/cast.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdint>

namespace ffi = tvm::ffi;

extern "C" {
// Filled in by the loader: the module's context, and the context symbol
// the test registers before loading.
TVM_FFI_DLL_EXPORT void* __tvm_ffi__library_ctx = nullptr;
TVM_FFI_DLL_EXPORT void* tether_test_context_symbol = nullptr;
}

static int64_t add_one(int64_t x) { return x + 1; }
TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_one, add_one);
TVM_FFI_DLL_EXPORT_TYPED_FUNC_DOC(add_one, "Add one to x.");

static ffi::String greet(ffi::String who) { return ffi::String(std::string("hello ") + std::string(who)); }
TVM_FFI_DLL_EXPORT_TYPED_FUNC(greet, greet);

static int64_t fail(int64_t x) {
  TVM_FFI_THROW(ValueError) << "fail got " << x;
  return x;
}
TVM_FFI_DLL_EXPORT_TYPED_FUNC(fail, fail);

// Calls `name`(x) as found from this library's module: its imports, then
// the global registry (TVMFFIEnvModLookupFromImports).
static int64_t call_from_imports(ffi::String name, int64_t x) {
  TVMFFIObjectHandle f = nullptr;
  if (TVMFFIEnvModLookupFromImports(__tvm_ffi__library_ctx, name.c_str(), &f) != 0) {
    throw ffi::detail::MoveFromSafeCallRaised();
  }
  // Borrowed: the module's lookup cache keeps it alive.
  ffi::Function func = ffi::GetRef<ffi::Function>(static_cast<ffi::FunctionObj*>(static_cast<ffi::Object*>(f)));
  return func(x).cast<int64_t>();
}
TVM_FFI_DLL_EXPORT_TYPED_FUNC(call_from_imports, call_from_imports);

static void* context_symbol() { return tether_test_context_symbol; }
TVM_FFI_DLL_EXPORT_TYPED_FUNC(context_symbol, context_symbol);

static void* library_ctx() { return __tvm_ffi__library_ctx; }
TVM_FFI_DLL_EXPORT_TYPED_FUNC(library_ctx, library_ctx);
