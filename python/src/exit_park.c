/* Calls into CPython that may end the calling thread at interpreter exit.
 *
 * Before 3.14, CPython ends a thread that tries to take the GIL after
 * finalization began by calling pthread_exit(). On glibc that is a forced
 * unwind of the whole stack, and Rust frames above cannot let it pass: a
 * catch_unwind frame or an extern "C" boundary aborts the process
 * ("FATAL: exception not rethrown"). So every CPython call through which a
 * daemon thread re-enters the interpreter from native code runs here,
 * inside a cancellation cleanup frame (pthread_cleanup_push without C++
 * exceptions registers a jump buffer with glibc). When the forced unwind
 * reaches this frame, glibc jumps back into it and the cleanup parks the
 * thread for good instead of unwinding further — what CPython 3.14 itself
 * does with such threads. Only CPython's own C frames lie between the exit
 * and this frame, so no Rust destructor is skipped. Elsewhere (no glibc
 * forced unwind) these are plain calls. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

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

/* The thread state this thread gave away around a native call
 * (tether_release_gil), until it takes it back (tether_park_reacquire_gil).
 * A callback the native code makes on the same thread takes the GIL back
 * with it directly, PyEval_RestoreThread/PyEval_SaveThread, instead of
 * PyGILState_Ensure/Release, whose thread-state lookups and counters are a
 * measurable share of a callback. Nested calls save and restore the previous
 * value, and a callback taking the GIL back this way clears it until it
 * gives the GIL away again, so it is non-NULL only while a native call made
 * through tether_release_gil runs below on this thread's stack and this
 * thread has not taken the GIL back through it. */
static _Thread_local PyThreadState *released_ts;

static PyThreadState *current_tstate(void) {
#if PY_VERSION_HEX >= 0x030D0000
  return PyThreadState_GetUnchecked();
#else
  return _PyThreadState_UncheckedGet();
#endif
}

/* PyEval_SaveThread, remembering the thread state; returns the value to
 * hand to tether_park_reacquire_gil. */
PyThreadState *tether_release_gil(void) {
  PyThreadState *prev = released_ts;
  released_ts = PyEval_SaveThread();
  return prev;
}

/* Take back the GIL given away by tether_release_gil (parking the thread if
 * the interpreter is gone); `prev` is what that call returned. */
void tether_park_reacquire_gil(PyThreadState *prev) {
  PyThreadState *ts = released_ts;
  released_ts = prev;
  PARK_BEGIN;
  PyEval_RestoreThread(ts);
  PARK_END;
}

/* A Python callback run by native code, whole: take the GIL, convert the
 * arguments, call, release the arguments, convert the result, give the GIL
 * back. Everything that can run Python code or take the GIL (the take, the
 * call, the decrefs) sits in this one frame, so a callback pays for one
 * cleanup registration instead of one per CPython call. The two conversions
 * are Rust functions that return normally (Python code they run themselves,
 * such as conversion hooks, goes through the parking calls above):
 *   convert_args(args, nargs, buf, &filled) puts `filled` new references in
 *     buf and returns 0, or -1 with a Python exception set;
 *   convert_result(ret, result) converts the call's result (a borrowed
 *     reference, or NULL with a Python exception set) into the FFI result
 *     slot and returns 0, or raises the FFI error and returns -1.
 * The references in buf and the result are released here, in the frame.
 *
 * The GIL: on a thread that gave it away around the native call now
 * running, the thread state is at hand (released_ts). It is taken back
 * with it unless this thread holds the GIL again already (native code in
 * between took it through PyGILState_Ensure: taking it twice would
 * deadlock), in which case PyGILState_Ensure nests as it does on any other
 * thread. */
typedef int (*tether_args_to_py)(const void *args, int nargs, PyObject **buf, int *filled);
typedef int (*tether_result_to_ffi)(PyObject *ret, void *result);

int tether_park_callback(PyObject *callable, const void *args, int nargs, PyObject **buf, void *result,
                         tether_args_to_py convert_args, tether_result_to_ffi convert_result) {
  int rc = -1;
  PARK_BEGIN;
  PyThreadState *ts = released_ts;
  int direct = ts != NULL && current_tstate() != ts;
  PyGILState_STATE gil = PyGILState_LOCKED;
  if (direct) {
    released_ts = NULL;
    PyEval_RestoreThread(ts);
  } else {
    gil = PyGILState_Ensure();
  }
  int filled = 0;
  PyObject *ret = NULL;
  if (convert_args(args, nargs, buf, &filled) == 0) {
    ret = PyObject_Vectorcall(callable, buf, (size_t)nargs, NULL);
  }
  for (int i = 0; i < filled; i++) {
    Py_DECREF(buf[i]);
  }
  rc = convert_result(ret, result);
  Py_XDECREF(ret);
  if (direct) {
    released_ts = PyEval_SaveThread();
  } else {
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
