// The consumer's test: tether's C ABI reached through the Bazel dependency
// @tether//cpp:tether (header and core shared library).
#include <cstdio>
#include <string>

#include "echo_client.h"

static int failures = 0;
static int passed = 0;

#define EXPECT(cond)                                                  \
  do {                                                                \
    if (cond) {                                                       \
      ++passed;                                                       \
    } else {                                                          \
      ++failures;                                                     \
      std::fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                 \
  } while (0)

int main() {
  EXPECT(consumer::RoundTripString("tiny") == "tiny");
  const std::string long_text = "a string long enough to live in an object";
  EXPECT(consumer::RoundTripString(long_text) == long_text);

  EXPECT(consumer::HasGlobal("testing.echo"));
  EXPECT(!consumer::HasGlobal("consumer.no_such_function"));
  EXPECT(consumer::CallWithInt("testing.echo", 42) == 42);
  EXPECT(consumer::CallWithInt("testing.echo", -7) == -7);

  bool threw = false;
  try {
    consumer::CallWithInt("consumer.no_such_function", 1);
  } catch (const consumer::FfiError& e) {
    threw = e.kind() == "KeyError";
  }
  EXPECT(threw);

  std::printf("%d passed, %d failed\n", passed, failures);
  return failures == 0 ? 0 : 1;
}
