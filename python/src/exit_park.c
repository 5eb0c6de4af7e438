/* Calls into CPython that may end the calling thread at interpreter exit.
 *
 * Before 3.14, CPython ends a thread that tries to take the GIL after
 * finalization began by calling pthread_exit(). On glibc that is a forced
 * unwind of the whole stack, and Rust frames above cannot let it pass: a
 * catch_unwind frame or an extern "C" boundary aborts the process
 * ("FATAL: exception not rethrown"). So every CPython call through which a
 * daemon thread re-enters the interpreter from native code runs here,
 * inside a cancellation cleanup frame (pthread_cleanup_push). When the
 * forced unwind reaches this frame it runs the cleanup, which parks the
 * thread for good instead of returning to the unwinder — what CPython 3.14
 * itself does with such threads. Only CPython's own C frames lie between
 * the exit and this frame, so no Rust frame is unwound and no Rust
 * destructor is skipped. Elsewhere (no glibc forced unwind) these are plain
 * calls.
 *
 * The build compiles this file with -fexceptions (python/build.rs, the
 * Bazel target) where the compiler takes it. glibc's pthread_cleanup_push
 * then declares a variable with a cleanup attribute: the cleanup is a
 * landing pad in this frame's unwind tables, which the forced unwind's
 * personality routine enters, and on the normal path it costs a store.
 * Without the flag glibc falls back to a jump buffer filled by __sigsetjmp
 * and registered with the thread on every call, and the unwinder jumps back
 * into the frame to run the cleanup; that works the same, at a few
 * nanoseconds per callback. Either way the cleanup never returns, so the
 * unwind stops here. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <tether/c_api.h>

#if defined(__GLIBC__)
#include <pthread.h>
#include <unistd.h>

static void park_forever(void *unused) {
  (void)unused;
  for (;;) pause();
}
#define PARK_BEGIN pthread_cleanup_push(park_forever, NULL)
#define PARK_END pthread_cleanup_pop(0)
#else
#define PARK_BEGIN do {
#define PARK_END } while (0)
#endif

PyGILState_STATE tether_park_gil_ensure(void) {
  PyGILState_STATE s;
  PARK_BEGIN;
  s = PyGILState_Ensure();
  PARK_END;
  return s;
}

void tether_park_restore_thread(PyThreadState *ts) {
  PARK_BEGIN;
  PyEval_RestoreThread(ts);
  PARK_END;
}

PyObject *tether_park_call(PyObject *callable, PyObject *args, PyObject *kwargs) {
  PyObject *r;
  PARK_BEGIN;
  r = PyObject_Call(callable, args, kwargs);
  PARK_END;
  return r;
}

static PyThreadState *current_tstate(void) {
#if PY_VERSION_HEX >= 0x030D0000
  return PyThreadState_GetUnchecked();
#else
  return _PyThreadState_UncheckedGet();
#endif
}

/* A Python callback run by native code, whole: take the GIL, convert the
 * arguments, call, release the arguments, convert the result, give the GIL
 * back. Everything that can run Python code or take the GIL (the take, the
 * call, the decrefs) sits in this one frame, so a callback enters one
 * cleanup frame instead of one per CPython call. The two conversions
 * are Rust functions that return normally (Python code they run themselves,
 * such as conversion hooks, goes through the parking calls above):
 *   convert_args(args, nargs, buf, &filled) puts `filled` new references in
 *     buf and returns 0, or -1 with a Python exception set;
 *   convert_result(ret, result) converts the call's result (a borrowed
 *     reference, or NULL with a Python exception set) into the FFI result
 *     slot and returns 0, or raises the FFI error and returns -1. A None
 *     result (most callbacks return nothing) is written here instead.
 * The references in buf and the result are released here, in the frame.
 *
 * The GIL, as PyGILState_Ensure/Release take and give it, minus their
 * bookkeeping: on a thread CPython knows (it has a thread state: the usual
 * case, a native call made from Python that released the GIL) the thread
 * state is taken back with PyEval_RestoreThread and given away again with
 * PyEval_SaveThread, unless this thread holds the GIL already (native code
 * in between took it back, or never gave it away), when there is nothing
 * to take. Only a thread without a thread state goes through
 * PyGILState_Ensure, which creates one. What is skipped is the gilstate
 * counter's increment and decrement around the callback; the counter only
 * decides when PyGILState_Release deletes a thread state it created, and
 * the callback's own Ensure/Release pairs stay balanced without it. */
typedef int (*tether_args_to_py)(const void *args, int nargs, PyObject **buf, int *filled);
typedef int (*tether_result_to_ffi)(PyObject *ret, void *result);

int tether_park_callback(PyObject *callable, const void *args, int nargs, PyObject **buf, void *result,
                         tether_args_to_py convert_args, tether_result_to_ffi convert_result) {
  int rc = -1;
  PARK_BEGIN;
  PyThreadState *ts = PyGILState_GetThisThreadState();
  /* 0: the GIL was held already; 1: taken with the thread state; 2: by PyGILState_Ensure. */
  int taken = ts == NULL ? 2 : current_tstate() != ts;
  PyGILState_STATE gil = PyGILState_LOCKED;
  if (taken == 1) {
    PyEval_RestoreThread(ts);
  } else if (taken == 2) {
    gil = PyGILState_Ensure();
  }
  int filled = 0;
  PyObject *ret = NULL;
  if (nargs == 0 || convert_args(args, nargs, buf, &filled) == 0) {
    ret = PyObject_Vectorcall(callable, buf, (size_t)nargs, NULL);
  }
  for (int i = 0; i < filled; i++) {
    Py_DECREF(buf[i]);
  }
  if (ret == Py_None) {
    if (result != NULL) {
      TVMFFIAny *slot = (TVMFFIAny *)result;
      slot->type_index = kTVMFFINone;
      slot->zero_padding = 0;
      slot->v_int64 = 0;
    }
    rc = 0;
  } else {
    rc = convert_result(ret, result);
  }
  Py_XDECREF(ret);
  if (taken == 1) {
    PyEval_SaveThread();
  } else if (taken == 2) {
    PyGILState_Release(gil);
  }
  PARK_END;
  return rc;
}

void tether_park_decref(PyObject *o) {
  PARK_BEGIN;
  Py_DECREF(o);
  PARK_END;
}
