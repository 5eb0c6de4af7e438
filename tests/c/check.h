/* The check harness the C ABI tests in this folder share: CHECK counts
 * passes and reports failures with their location, raised_matches() takes
 * the raised error and compares its kind and message, report() prints the
 * tally and gives the exit code. Only <tether/c_api.h> is used. */
#ifndef TETHER_TESTS_C_CHECK_H_
#define TETHER_TESTS_C_CHECK_H_

#include <stdio.h>
#include <string.h>

#include "tether/c_api.h"

static int g_passed = 0, g_failed = 0;

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (cond) {                                                                  \
      ++g_passed;                                                                \
    } else {                                                                     \
      ++g_failed;                                                                \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
    }                                                                            \
  } while (0)

/* A byte array over a NUL-terminated string. */
static inline TVMFFIByteArray ba(const char* s) {
  TVMFFIByteArray b = {s, strlen(s)};
  return b;
}

/* Take the raised error; 1 when it is an ffi.Error of `kind` whose message
 * contains `needle`. */
static inline int raised_matches(const char* kind, const char* needle) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  if (err == NULL) return 0;
  TVMFFIErrorCell* cell = TetherErrorCell(err);
  int ok = ((TVMFFIObject*)err)->type_index == kTVMFFIError && cell->kind.size == strlen(kind) &&
           memcmp(cell->kind.data, kind, cell->kind.size) == 0;
  char msg[512] = {0};
  size_t n = cell->message.size < sizeof(msg) - 1 ? cell->message.size : sizeof(msg) - 1;
  memcpy(msg, cell->message.data, n);
  if (!ok || strstr(msg, needle) == NULL) {
    fprintf(stderr, "  raised %.*s: %s (wanted %s containing '%s')\n", (int)cell->kind.size,
            cell->kind.data, msg, kind, needle);
    ok = 0;
  }
  TVMFFIObjectDecRef(err);
  return ok;
}

/* Print "N passed, M failed" and return the exit code. */
static inline int report(void) {
  printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}

#endif /* TETHER_TESTS_C_CHECK_H_ */
