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

PyObject *tether_park_vectorcall(PyObject *callable, PyObject *const *args, size_t nargs) {
  PyObject *r;
  PARK_BEGIN;
  r = PyObject_Vectorcall(callable, args, nargs, NULL);
  PARK_END;
  return r;
}

void tether_park_decref(PyObject *o) {
  PARK_BEGIN;
  Py_DECREF(o);
  PARK_END;
}
