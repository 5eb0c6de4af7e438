/*
 * tvm_ffi_python_helpers.h: C helpers for a Python extension module written
 * in C or C++ that exchanges values with tether's FFI. It turns Python
 * values into owned TVMFFIAny values and back, calls FFI functions with a
 * tuple of Python values, moves errors across in both directions, and
 * attaches the calling thread to Python. `libinfo.find_python_helper_include_path()`
 * names its directory; build with `-I$(tether-config --includedir)` and
 * Python's headers, link the core (`tether-config --ldflags --libs`).
 *
 * Every conversion goes through tether's own Python layer (`tether.core`):
 * two tiny safe-call functions defined here are wrapped once as FFI
 * functions, one that keeps the argument it is called with (Python value ->
 * Any: tether's converter does the work) and one that returns a value left
 * for it (Any -> Python value: tether's return path does the work). So a
 * value crosses exactly as it would through a call from Python: lists become
 * Arrays, callables Functions, and an object comes back as its one tied
 * wrapper. Plain data (None, bool, int, float) takes a direct path.
 *
 * All functions need an attached thread (the GIL on GIL builds) and report
 * failure with a Python exception set. Header-only: each translation unit
 * keeps its own two bridge functions, created on first use.
 */
#ifndef TETHER_TVM_FFI_PYTHON_HELPERS_H_
#define TETHER_TVM_FFI_PYTHON_HELPERS_H_

#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <tether/c_api.h>

#ifdef __cplusplus
#define TVMFFI_PY_THREAD_LOCAL thread_local
extern "C" {
#else
#define TVMFFI_PY_THREAD_LOCAL _Thread_local
#endif

/* The value a bridge call hands over: filled by the keep function (Python
 * value -> Any) or read by the return function (Any -> Python value). One
 * per thread, so concurrent threads (free-threaded Python) never share it. */
static TVMFFI_PY_THREAD_LOCAL TVMFFIAny TVMFFIPyBridgeSlot_;

/* The keep function: own a copy of its one argument in the slot. */
static inline int TVMFFIPyKeepArgument_(void* self, const TVMFFIAny* args, int32_t num_args,
                                 TVMFFIAny* result) {
  (void)self;
  if (num_args != 1) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "the bridge's keep function takes one argument");
    return -1;
  }
  TVMFFIAny owned;
  if (TVMFFIAnyViewToOwnedAny(&args[0], &owned) != 0) return -1;
  TVMFFIPyBridgeSlot_ = owned;
  result->type_index = kTVMFFINone;
  result->zero_padding = 0;
  result->v_int64 = 0;
  return 0;
}

/* The return function: move the value left in the slot into the result. */
static inline int TVMFFIPyReturnSlot_(void* self, const TVMFFIAny* args, int32_t num_args,
                               TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)num_args;
  *result = TVMFFIPyBridgeSlot_;
  TVMFFIPyBridgeSlot_.type_index = kTVMFFINone;
  TVMFFIPyBridgeSlot_.zero_padding = 0;
  TVMFFIPyBridgeSlot_.v_int64 = 0;
  return 0;
}

/* The bridge function `which` (0 keep, 1 return) as a tether Function,
 * created once per translation unit. Borrowed; NULL with an exception. */
static inline PyObject* TVMFFIPyBridge_(int which) {
  static PyObject* bridges[2] = {NULL, NULL};
  if (bridges[which] == NULL) {
    TVMFFISafeCallType fn = which == 0 ? TVMFFIPyKeepArgument_ : TVMFFIPyReturnSlot_;
    PyObject* core = PyImport_ImportModule("tether.core");
    if (core == NULL) return NULL;
    PyObject* function_cls = PyObject_GetAttrString(core, "Function");
    Py_DECREF(core);
    if (function_cls == NULL) return NULL;
    PyObject* made = PyObject_CallMethod(function_cls, "__from_extern_c__", "K",
                                         (unsigned long long)(uintptr_t)fn);
    Py_DECREF(function_cls);
    if (made == NULL) return NULL;
    bridges[which] = made; /* kept for the life of the process */
  }
  return bridges[which];
}

/* `value` as an owned Any in *out (the caller releases an object in it with
 * TVMFFIObjectDecRef). 0, or -1 with a Python exception (a value tether
 * cannot convert raises its TypeError). */
static inline int TVMFFIPyToAny(PyObject* value, TVMFFIAny* out) {
  out->zero_padding = 0;
  if (value == Py_None) {
    out->type_index = kTVMFFINone;
    out->v_int64 = 0;
    return 0;
  }
  if (PyBool_Check(value)) {
    out->type_index = kTVMFFIBool;
    out->v_int64 = value == Py_True;
    return 0;
  }
  if (PyLong_CheckExact(value)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (!overflow && !(v == -1 && PyErr_Occurred())) {
      out->type_index = kTVMFFIInt;
      out->v_int64 = v;
      return 0;
    }
    PyErr_Clear(); /* beyond int64: tether makes a BigInt */
  }
  if (PyFloat_CheckExact(value)) {
    out->type_index = kTVMFFIFloat;
    out->v_float64 = PyFloat_AS_DOUBLE(value);
    return 0;
  }
  PyObject* keep = TVMFFIPyBridge_(0);
  if (keep == NULL) return -1;
  PyObject* none = PyObject_CallFunctionObjArgs(keep, value, NULL);
  if (none == NULL) return -1;
  Py_DECREF(none);
  *out = TVMFFIPyBridgeSlot_;
  TVMFFIPyBridgeSlot_.type_index = kTVMFFINone;
  TVMFFIPyBridgeSlot_.v_int64 = 0;
  return 0;
}

/* The Python value of an owned Any, which this consumes (also on failure).
 * An object comes back as its tied wrapper. New reference, or NULL with a
 * Python exception. */
static inline PyObject* TVMFFIPyFromAny(TVMFFIAny* value) {
  switch (value->type_index) {
    case kTVMFFINone:
      Py_RETURN_NONE;
    case kTVMFFIBool:
      return PyBool_FromLong(value->v_int64 != 0);
    case kTVMFFIInt:
      return PyLong_FromLongLong(value->v_int64);
    case kTVMFFIFloat:
      return PyFloat_FromDouble(value->v_float64);
    default:
      break;
  }
  PyObject* give = TVMFFIPyBridge_(1);
  if (give == NULL) {
    if (value->type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(value->v_obj);
    return NULL;
  }
  TVMFFIPyBridgeSlot_ = *value;
  value->type_index = kTVMFFINone;
  value->v_int64 = 0;
  return PyObject_CallNoArgs(give);
}

/* After an FFI call failed: the error it raised as the matching Python
 * exception (tether's mapping of error kinds to classes). Returns NULL. */
static inline PyObject* TVMFFIPyRaiseFFIError(void) {
  TVMFFIObjectHandle error = NULL;
  TVMFFIErrorMoveFromRaised(&error);
  if (error == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "an FFI call failed without raising an error");
    return NULL;
  }
  TVMFFIAny any;
  any.type_index = kTVMFFIError;
  any.zero_padding = 0;
  any.v_obj = (TVMFFIObject*)error;
  PyObject* wrapper = TVMFFIPyFromAny(&any);
  if (wrapper == NULL) return NULL;
  PyObject* exc = PyObject_CallMethod(wrapper, "py_error", NULL);
  Py_DECREF(wrapper);
  if (exc == NULL) return NULL;
  PyErr_SetObject((PyObject*)Py_TYPE(exc), exc);
  Py_DECREF(exc);
  return NULL;
}

/* Inside a safe-call function written in C: the pending Python exception
 * as the FFI's raised error (kind: the exception's class name, message: its
 * str()), cleared from Python. Returns -1, the safe-call failure code. */
static inline int TVMFFIPySetFFIErrorFromPython(void) {
#if PY_VERSION_HEX >= 0x030C0000
  PyObject* exc = PyErr_GetRaisedException();
#else
  PyObject *exc_type = NULL, *exc = NULL, *exc_tb = NULL;
  PyErr_Fetch(&exc_type, &exc, &exc_tb);
  PyErr_NormalizeException(&exc_type, &exc, &exc_tb);
  Py_XDECREF(exc_type);
  Py_XDECREF(exc_tb);
#endif
  const char* kind = exc != NULL ? Py_TYPE(exc)->tp_name : "RuntimeError";
  const char* dot = strrchr(kind, '.');
  if (dot != NULL) kind = dot + 1; /* module-qualified names: the class name */
  PyObject* text = exc != NULL ? PyObject_Str(exc) : NULL;
  const char* message = text != NULL ? PyUnicode_AsUTF8(text) : NULL;
  if (message == NULL) {
    PyErr_Clear();
    message = "(the exception's message could not be read)";
  }
  TVMFFIErrorSetRaisedFromCStr(kind, message);
  Py_XDECREF(text);
  Py_XDECREF(exc);
  return -1;
}

/* Call FFI function `func` (borrowed handle) with the items of tuple `args`
 * converted to Any values. The result as a Python value (new reference), or
 * NULL with a Python exception (a raised FFI error becomes its Python
 * exception). */
static inline PyObject* TVMFFIPyCallFunction(TVMFFIObjectHandle func, PyObject* args) {
  if (!PyTuple_Check(args)) {
    PyErr_SetString(PyExc_TypeError, "TVMFFIPyCallFunction takes a tuple of arguments");
    return NULL;
  }
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  if (n > INT32_MAX) {
    PyErr_SetString(PyExc_OverflowError, "too many arguments for an FFI call");
    return NULL;
  }
  TVMFFIAny* packed = (TVMFFIAny*)PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof(TVMFFIAny));
  if (packed == NULL) return PyErr_NoMemory();
  Py_ssize_t converted = 0;
  PyObject* ret = NULL;
  for (; converted < n; ++converted) {
    if (TVMFFIPyToAny(PyTuple_GET_ITEM(args, converted), &packed[converted]) != 0) goto done;
  }
  {
    TVMFFIAny result;
    result.type_index = kTVMFFINone;
    result.zero_padding = 0;
    result.v_int64 = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = TVMFFIFunctionCall(func, packed, (int32_t)n, &result);
    Py_END_ALLOW_THREADS
    ret = rc == 0 ? TVMFFIPyFromAny(&result) : TVMFFIPyRaiseFFIError();
  }
done:
  for (Py_ssize_t i = 0; i < converted; ++i) {
    if (packed[i].type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(packed[i].v_obj);
  }
  PyMem_Free(packed);
  return ret;
}

/* A Python callable as an FFI function: a new handle in *out (the caller
 * owns one reference). 0, or -1 with a Python exception. */
static inline int TVMFFIPyFunctionFromCallable(PyObject* callable, TVMFFIObjectHandle* out) {
  if (!PyCallable_Check(callable)) {
    PyErr_Format(PyExc_TypeError, "expected a callable, got %s", Py_TYPE(callable)->tp_name);
    return -1;
  }
  TVMFFIAny any;
  if (TVMFFIPyToAny(callable, &any) != 0) return -1;
  if (any.type_index != kTVMFFIFunction) {
    if (any.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(any.v_obj);
    PyErr_Format(PyExc_TypeError, "%s did not convert to an FFI function", Py_TYPE(callable)->tp_name);
    return -1;
  }
  *out = any.v_obj;
  return 0;
}

#ifdef __cplusplus
} /* extern "C" */

/* Attaches the calling thread to Python for a scope (the GIL on GIL
 * builds): for native callbacks that may run on threads Python never saw. */
class TVMFFIPyWithAttachedThreadState {
 public:
  TVMFFIPyWithAttachedThreadState() noexcept : state_(PyGILState_Ensure()) {}
  ~TVMFFIPyWithAttachedThreadState() { PyGILState_Release(state_); }
  TVMFFIPyWithAttachedThreadState(const TVMFFIPyWithAttachedThreadState&) = delete;
  TVMFFIPyWithAttachedThreadState& operator=(const TVMFFIPyWithAttachedThreadState&) = delete;

 private:
  PyGILState_STATE state_;
};
#endif

#endif /* TETHER_TVM_FFI_PYTHON_HELPERS_H_ */
