/* Native code that takes the GIL itself (PyGILState_Ensure, as pybind11's
 * gil_scoped_acquire does) inside a call tether made with the GIL released,
 * then calls an FFI Function, which may be a Python callback. The callback
 * must see that this thread holds the GIL again and not take it a second
 * time (that would deadlock). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "tether/c_api.h"

/* call_with_gil_held(f, *args): f(*args) while holding the GIL. */
__attribute__((visibility("default"))) int __tvm_ffi_call_with_gil_held(void* self, const TVMFFIAny* args,
                                                                       int32_t n, TVMFFIAny* result) {
  (void)self;
  if (n < 1 || args[0].type_index != kTVMFFIFunction) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "call_with_gil_held expects a function first");
    return -1;
  }
  PyGILState_STATE s = PyGILState_Ensure();
  int rc = TVMFFIFunctionCall(args[0].v_obj, (TVMFFIAny*)args + 1, n - 1, result);
  PyGILState_Release(s);
  return rc;
}

/* gil_held(): whether the calling thread holds the GIL while the native
 * function runs (1 or 0) — what a Function's `release_gil` decides. */
__attribute__((visibility("default"))) int __tvm_ffi_gil_held(void* self, const TVMFFIAny* args, int32_t n,
                                                             TVMFFIAny* result) {
  (void)self;
  (void)args;
  if (n != 0) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "gil_held takes no arguments");
    return -1;
  }
  result->type_index = kTVMFFIBool;
  result->zero_padding = 0;
  result->v_int64 = PyGILState_Check();
  return 0;
}
