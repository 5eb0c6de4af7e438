/* The C functions of the library surface beyond objects and tensors:
 * arbitrary-precision integers, the host environment's entry points and
 * the module symbol registries, through the C ABI only; and the core on
 * its own (this test does not link the testing library) having no
 * `testing.*` global. Prints
 * "N passed, N failed" and exits nonzero on any failure. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tether/c_api.h"

#include "check.h"

static int from_words(const int64_t* words, size_t n, TVMFFIAny* out) {
  TVMFFIByteArray in = {(const char*)words, n * sizeof(int64_t)};
  return TVMFFIBigIntFromByteArray(&in, out);
}

static void test_big_int(void) {
  TVMFFIAny v = {0};
  /* Empty is zero; one word, or a redundant sign word, is an inline int. */
  CHECK(from_words(NULL, 0, &v) == 0 && v.type_index == kTVMFFIInt && v.v_int64 == 0);
  int64_t five_padded[] = {5, 0};
  CHECK(from_words(five_padded, 2, &v) == 0 && v.type_index == kTVMFFIInt && v.v_int64 == 5);
  int64_t minus_five[] = {-5, -1, -1};
  CHECK(from_words(minus_five, 3, &v) == 0 && v.type_index == kTVMFFIInt && v.v_int64 == -5);
  TVMFFIByteArray c = TVMFFIBigIntGetContentByteArray(&v);
  CHECK(c.size == 8 && c.data == (const char*)&v.v_int64);
  /* 2^64 needs two words; 2^63 needs a zero sign guard; the top zero of a
   * three-word input is dropped. */
  int64_t two_64[] = {0, 1, 0};
  CHECK(from_words(two_64, 3, &v) == 0 && v.type_index == kTVMFFIBigInt);
  CHECK(*(size_t*)((char*)v.v_obj + sizeof(TVMFFIObject)) == 2);
  c = TVMFFIBigIntGetContentByteArray(&v);
  CHECK(c.size == 16 && c.data == (char*)v.v_obj + sizeof(TVMFFIObject) + sizeof(size_t));
  CHECK(((const int64_t*)c.data)[0] == 0 && ((const int64_t*)c.data)[1] == 1);
  CHECK(TVMFFIObjectDecRef(v.v_obj) == 0);
  int64_t two_63[] = {INT64_MIN, 0};
  CHECK(from_words(two_63, 2, &v) == 0 && v.type_index == kTVMFFIBigInt);
  c = TVMFFIBigIntGetContentByteArray(&v);
  CHECK(c.size == 16 && ((const int64_t*)c.data)[0] == INT64_MIN && ((const int64_t*)c.data)[1] == 0);
  CHECK(TVMFFIObjectDecRef(v.v_obj) == 0);
  /* -2^64 keeps its sign word. */
  int64_t minus_2_64[] = {0, -1};
  CHECK(from_words(minus_2_64, 2, &v) == 0 && v.type_index == kTVMFFIBigInt);
  CHECK(TVMFFIObjectDecRef(v.v_obj) == 0);
  /* Refused input goes through the raised error. */
  TVMFFIByteArray odd = {"abc", 3};
  v.type_index = kTVMFFINone;
  CHECK(TVMFFIBigIntFromByteArray(&odd, &v) != 0 && v.type_index == kTVMFFINone);
  CHECK(raised_matches("ValueError", "BigInt content must contain whole 64-bit words"));
  CHECK(TVMFFIBigIntFromByteArray(NULL, &v) != 0 && raised_matches("ValueError", "input is NULL"));
  CHECK(TVMFFIBigIntFromByteArray(&odd, NULL) != 0 && raised_matches("ValueError", "output pointer is NULL"));
  TVMFFIAny f = {.type_index = kTVMFFIFloat, .v_float64 = 1.5};
  c = TVMFFIBigIntGetContentByteArray(&f);
  CHECK(c.data == NULL && c.size == 0 && raised_matches("TypeError", "expected int or ffi.BigInt, got float"));
  c = TVMFFIBigIntGetContentByteArray(NULL);
  CHECK(c.data == NULL && c.size == 0 && raised_matches("ValueError", "value is NULL"));
}

static int signal_pending = 0, gil_depth = 0, gil_taken = 0;
static int check_signals(void) { return gil_depth == 1 && signal_pending ? -1 : 0; }
static void* gil_ensure(void) {
  ++gil_depth;
  ++gil_taken;
  return (void*)&gil_depth;
}
static void gil_release(void* state) {
  if (state == (void*)&gil_depth) --gil_depth;
}

static void test_env_capi(void) {
  /* Nothing registered: no check, no error. */
  CHECK(TVMFFIEnvCheckSignals() == 0);
  CHECK(TVMFFIEnvRegisterCAPI("PyErr_CheckSignals", (void*)check_signals) == 0);
  /* A check without the GIL functions cannot run; reported, not aborted. */
  CHECK(TVMFFIEnvCheckSignals() != 0 && raised_matches("RuntimeError", "PyGILState_Ensure"));
  CHECK(TVMFFIEnvRegisterCAPI("PyGILState_Ensure", (void*)gil_ensure) == 0);
  CHECK(TVMFFIEnvRegisterCAPI("PyGILState_Release", (void*)gil_release) == 0);
  CHECK(TVMFFIEnvCheckSignals() == 0 && gil_taken == 1 && gil_depth == 0);
  signal_pending = 1;
  CHECK(TVMFFIEnvCheckSignals() == -1 && gil_taken == 2 && gil_depth == 0);
  signal_pending = 0;
  CHECK(TVMFFIEnvRegisterCAPI("Py_Nothing", (void*)check_signals) != 0);
  CHECK(raised_matches("ValueError", "Unknown env API Py_Nothing"));
  CHECK(TVMFFIEnvRegisterCAPI(NULL, NULL) != 0 && raised_matches("ValueError", "name is NULL"));
  /* Unregistering turns the check off again. */
  CHECK(TVMFFIEnvRegisterCAPI("PyErr_CheckSignals", NULL) == 0 && TVMFFIEnvCheckSignals() == 0);
  CHECK(gil_taken == 2);
}

static void test_module_symbols(void) {
  static int anchor;
  CHECK(TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_surface_c_symbol", &anchor) == 0);
  CHECK(TVMFFIEnvModRegisterContextSymbol("__surface_c_context", &anchor) == 0);
  CHECK(TVMFFIEnvModRegisterSystemLibSymbol(NULL, &anchor) != 0 && raised_matches("ValueError", "name is NULL"));
  CHECK(TVMFFIEnvModRegisterContextSymbol(NULL, &anchor) != 0 && raised_matches("ValueError", "name is NULL"));
}

/* The testing globals live in libtether_testing, which this program does
 * not load: the core alone registers none of them. */
static void test_no_testing_globals(void) {
  const char* names[] = {"testing.echo", "testing.apply", "testing.nop", "testing.apply_n", "testing.raise_error",
                         "testing.object_use_count", "testing.test_raise_error"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
    TVMFFIByteArray name = ba(names[i]);
    TVMFFIObjectHandle f = NULL;
    CHECK(TVMFFIFunctionGetGlobal(&name, &f) == 0 && f == NULL);
  }
  TVMFFIByteArray key = ba("testing.TestIntPair");
  int32_t index = -1;
  CHECK(TVMFFITypeKeyToIndex(&key, &index) != 0);
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  if (err != NULL) TVMFFIObjectDecRef(err);
}

int main(void) {
  test_no_testing_globals();
  test_big_int();
  test_env_capi();
  test_module_symbols();
  return report();
}
