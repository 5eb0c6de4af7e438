// Native loops for the benchmark, written against TVM-FFI's C++ headers.
//
// The benchmark compiles this file twice with the same headers (the
// apache-tvm-ffi wheel's): once linked to libtvm_ffi (the peer) and once to
// libtether_core (tether as a drop-in), and loads each build through its own
// library's `load_module`. Each loop runs entirely in native code, so the
// figures compare what each library does per iteration: calling a Python
// callable, and allocating and freeing an object through its allocator.
#include <tvm/ffi/any.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/memory.h>
#include <tvm/ffi/object.h>

#include <cstdint>

namespace bench {

namespace ffi = tvm::ffi;

class SmallObj : public ffi::Object {
 public:
  int64_t v = 0;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("bench.native.Small", SmallObj, ffi::Object);
};

class WideObj : public ffi::Object {
 public:
  int64_t v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("bench.native.Wide", WideObj, ffi::Object);
};

// Call `f` n times with `nargs` (0, 1 or 3) copies of `arg`; returns the last result.
ffi::Any CallbackLoop(ffi::Function f, int64_t n, int64_t nargs, ffi::Any arg) {
  ffi::Any last;
  for (int64_t i = 0; i < n; ++i) {
    switch (nargs) {
      case 0: last = f(); break;
      case 1: last = f(arg); break;
      default: last = f(arg, arg, arg); break;
    }
  }
  return last;
}

// Allocate and free n objects (small: one field, wide: eight).
int64_t MakeObjectLoop(int64_t n, bool wide) {
  int64_t sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (wide) {
      auto p = ffi::make_object<WideObj>();
      p->v[7] = i;
      sum += p->v[7];
    } else {
      auto p = ffi::make_object<SmallObj>();
      p->v = i;
      sum += p->v;
    }
  }
  return sum;
}

}  // namespace bench

TVM_FFI_DLL_EXPORT_TYPED_FUNC(callback_loop, bench::CallbackLoop);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_object_loop, bench::MakeObjectLoop);
