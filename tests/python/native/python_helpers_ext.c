/* A Python extension module built on tvm_ffi_python_helpers.h, for
 * test_python_helpers.py: each function drives one helper the way a C
 * extension would. */
#define PY_SSIZE_T_CLEAN
#include "tvm_ffi_python_helpers.h"

/* roundtrip(value): value -> owned Any -> Python value. */
static PyObject* roundtrip(PyObject* self, PyObject* value) {
  (void)self;
  TVMFFIAny any;
  if (TVMFFIPyToAny(value, &any) != 0) return NULL;
  return TVMFFIPyFromAny(&any);
}

/* type_index(value): the type index value converts to. */
static PyObject* type_index(PyObject* self, PyObject* value) {
  (void)self;
  TVMFFIAny any;
  if (TVMFFIPyToAny(value, &any) != 0) return NULL;
  int32_t index = any.type_index;
  if (index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(any.v_obj);
  return PyLong_FromLong(index);
}

/* call(handle, *args): call the FFI function at address `handle`. */
static PyObject* call(PyObject* self, PyObject* args) {
  (void)self;
  if (PyTuple_GET_SIZE(args) < 1) {
    PyErr_SetString(PyExc_TypeError, "call(handle, *args)");
    return NULL;
  }
  void* handle = PyLong_AsVoidPtr(PyTuple_GET_ITEM(args, 0));
  if (handle == NULL && PyErr_Occurred()) return NULL;
  PyObject* rest = PyTuple_GetSlice(args, 1, PyTuple_GET_SIZE(args));
  if (rest == NULL) return NULL;
  PyObject* ret = TVMFFIPyCallFunction(handle, rest);
  Py_DECREF(rest);
  return ret;
}

/* as_function(callable): the callable as an FFI function, returned as its
 * Python wrapper (an FFI Function). */
static PyObject* as_function(PyObject* self, PyObject* callable) {
  (void)self;
  TVMFFIObjectHandle handle = NULL;
  if (TVMFFIPyFunctionFromCallable(callable, &handle) != 0) return NULL;
  TVMFFIAny any;
  any.type_index = kTVMFFIFunction;
  any.zero_padding = 0;
  any.v_obj = (TVMFFIObject*)handle;
  return TVMFFIPyFromAny(&any);
}

/* A safe-call function written in C that calls the Python callable it was
 * created with (its resource handle), the way a C extension's callback
 * would: arguments and result cross through the helpers, a Python
 * exception crosses as the FFI's raised error. */
static int call_python(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  PyGILState_STATE state = PyGILState_Ensure();
  PyObject* callable = (PyObject*)self;
  int rc = -1;
  PyObject* py_args = PyTuple_New(num_args);
  if (py_args != NULL) {
    int32_t i = 0;
    for (; i < num_args; ++i) {
      TVMFFIAny owned;
      if (TVMFFIAnyViewToOwnedAny(&args[i], &owned) != 0) break;
      PyObject* item = TVMFFIPyFromAny(&owned);
      if (item == NULL) break;
      PyTuple_SET_ITEM(py_args, i, item);
    }
    if (i == num_args) {
      PyObject* out = PyObject_Call(callable, py_args, NULL);
      if (out != NULL) {
        rc = TVMFFIPyToAny(out, result);
        Py_DECREF(out);
      }
    }
    Py_DECREF(py_args);
  }
  if (rc != 0) {
    if (PyErr_Occurred()) {
      rc = TVMFFIPySetFFIErrorFromPython();
    } else {
      TVMFFIErrorSetRaisedFromCStr("RuntimeError", "conversion failed");
    }
  }
  PyGILState_Release(state);
  return rc;
}

static void release_callable(void* self) {
  PyGILState_STATE state = PyGILState_Ensure();
  Py_DECREF((PyObject*)self);
  PyGILState_Release(state);
}

/* c_callback(callable): an FFI function made with TVMFFIFunctionCreate
 * whose C body calls `callable` (errors cross as FFI errors). */
static PyObject* c_callback(PyObject* self, PyObject* callable) {
  (void)self;
  Py_INCREF(callable);
  TVMFFIObjectHandle handle = NULL;
  if (TVMFFIFunctionCreate(callable, call_python, release_callable, &handle) != 0) {
    Py_DECREF(callable);
    return TVMFFIPyRaiseFFIError();
  }
  TVMFFIAny any;
  any.type_index = kTVMFFIFunction;
  any.zero_padding = 0;
  any.v_obj = (TVMFFIObject*)handle;
  return TVMFFIPyFromAny(&any);
}

static PyMethodDef methods[] = {
    {"roundtrip", roundtrip, METH_O, NULL},
    {"type_index", type_index, METH_O, NULL},
    {"call", call, METH_VARARGS, NULL},
    {"as_function", as_function, METH_O, NULL},
    {"c_callback", c_callback, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "python_helpers_ext", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_python_helpers_ext(void) { return PyModule_Create(&module); }
