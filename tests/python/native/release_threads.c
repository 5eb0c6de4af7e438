/* Native threads dropping the last reference to FFI values while the
 * calling thread keeps the GIL: what a C++ library does when a worker
 * clears a stored value (or a destructor runs under a lock) while Python
 * waits for it. A release that waited for the GIL would deadlock here;
 * tether's park the Python side until the GIL is next held. */
#include <pthread.h>

#include "tether/c_api.h"

static TVMFFIObjectHandle g_kept = NULL;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static int set_true(TVMFFIAny* result) {
  result->type_index = kTVMFFIBool;
  result->zero_padding = 0;
  result->v_int64 = 1;
  return 0;
}

/* keep(value): store a reference to `value` (an object) for a later drop. */
__attribute__((visibility("default"))) int __tvm_ffi_keep(void* self, const TVMFFIAny* args, int32_t n,
                                                         TVMFFIAny* result) {
  (void)self;
  if (n != 1 || args[0].type_index < kTVMFFIStaticObjectBegin || g_kept != NULL) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "keep expects one object, and holds one at a time");
    return -1;
  }
  TVMFFIObjectIncRef(args[0].v_obj);
  g_kept = args[0].v_obj;
  return set_true(result);
}

static void* drop(void* under_lock) {
  if (under_lock) pthread_mutex_lock(&g_lock);
  TVMFFIObjectDecRef(g_kept);
  g_kept = NULL;
  if (under_lock) pthread_mutex_unlock(&g_lock);
  return NULL;
}

static int drop_kept(int under_lock, TVMFFIAny* result) {
  if (g_kept == NULL) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", "nothing is kept");
    return -1;
  }
  pthread_t t;
  if (pthread_create(&t, NULL, drop, under_lock ? (void*)1 : NULL) != 0) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", "pthread_create failed");
    return -1;
  }
  if (under_lock) {
    /* Contend for the lock the dropping thread holds. */
    for (int i = 0; i < 1000; ++i) {
      pthread_mutex_lock(&g_lock);
      pthread_mutex_unlock(&g_lock);
    }
  }
  pthread_join(t, NULL);
  return set_true(result);
}

/* drop_kept_on_thread(): a new thread drops the kept reference while this
 * one waits for it. */
__attribute__((visibility("default"))) int __tvm_ffi_drop_kept_on_thread(void* self, const TVMFFIAny* args,
                                                                        int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)n;
  return drop_kept(0, result);
}

/* drop_kept_under_lock(): a new thread drops the kept reference holding a
 * lock this one contends for meanwhile (as a destructor guarded by that
 * lock would). */
__attribute__((visibility("default"))) int __tvm_ffi_drop_kept_under_lock(void* self, const TVMFFIAny* args,
                                                                         int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)n;
  return drop_kept(1, result);
}
