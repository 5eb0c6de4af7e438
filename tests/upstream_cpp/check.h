// The tiny check harness the conformance tests in this folder share: CHECK
// counts passes and reports failures with their location, and report()
// prints the tally and gives the process's exit code.
#ifndef TETHER_TESTS_UPSTREAM_CPP_CHECK_H_
#define TETHER_TESTS_UPSTREAM_CPP_CHECK_H_

#include <cstdio>
#include <string>

static int g_passed = 0, g_failed = 0;

#define CHECK(cond)                                                                 \
  do {                                                                              \
    if (cond) {                                                                     \
      ++g_passed;                                                                   \
    } else {                                                                        \
      ++g_failed;                                                                   \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                               \
  } while (0)

[[maybe_unused]] static bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Print "<label>N passed, M failed" and return the exit code.
static int report(const char* label = "") {
  std::printf("%s%d passed, %d failed\n", label, g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}

#endif  // TETHER_TESTS_UPSTREAM_CPP_CHECK_H_
