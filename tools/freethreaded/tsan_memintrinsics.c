/* The memory intrinsics that code instrumented by LLVM 15 and later calls
 * under ThreadSanitizer, for a TSan runtime that predates them (clang 14's,
 * linked into the TSan interpreter by build_python.sh --tsan). Rust
 * nightly's LLVM rewrites memcpy/memmove/memset in instrumented code into
 * these calls; newer runtimes define them as the intercepted libc
 * functions, so forwarding to libc's names (which the runtime intercepts,
 * checking both ranges) is the same behaviour. Compiled without
 * -fsanitize=thread: this file does no memory access of its own. */
#include <string.h>

void *__tsan_memcpy(void *dst, const void *src, size_t n) { return memcpy(dst, src, n); }

void *__tsan_memmove(void *dst, const void *src, size_t n) { return memmove(dst, src, n); }

void *__tsan_memset(void *dst, int c, size_t n) { return memset(dst, c, n); }
