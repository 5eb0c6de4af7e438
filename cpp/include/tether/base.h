/*
 * tether/base.h — what every header of tether's C++ layer shares: the
 * export macro for symbols a plugin publishes, and the atomic operations on
 * an object's combined reference count, written with each compiler's own
 * intrinsics so the layer needs nothing but the C ABI header (GCC and Clang
 * builtins; MSVC's Interlocked intrinsics, which are full barriers).
 */
#ifndef TETHER_BASE_H_
#define TETHER_BASE_H_

#include <tether/c_api.h>

#include <cstdint>

#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#define TETHER_MSVC_ATOMICS 1
#endif

/* Marks a symbol a shared library publishes (a TETHER_DLL_EXPORT_TYPED_FUNC
 * entry point, say). */
#if defined(_WIN32)
#define TETHER_DLL_EXPORT __declspec(dllexport)
#else
#define TETHER_DLL_EXPORT __attribute__((visibility("default")))
#endif

#define TETHER_STR_CONCAT_INNER(a, b) a##b
#define TETHER_STR_CONCAT(a, b) TETHER_STR_CONCAT_INNER(a, b)

namespace tether {
namespace detail {

/* The combined count: strong references in the low 32 bits, weak ones in
 * the high 32 bits (all strong references together hold one weak). */
constexpr uint64_t kCombinedStrongOne = 1;
constexpr uint64_t kCombinedWeakOne = uint64_t(1) << 32;
constexpr uint64_t kCombinedBothOne = kCombinedStrongOne | kCombinedWeakOne;
constexpr uint64_t kStrongMask = (uint64_t(1) << 32) - 1;

inline uint64_t AtomicLoadRelaxed(const uint64_t* p) {
#if defined(TETHER_MSVC_ATOMICS)
  // Aligned 64-bit loads are single-copy atomic on x64 and ARM64.
  return *reinterpret_cast<const volatile uint64_t*>(p);
#else
  return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

inline uint64_t AtomicFetchAddRelaxed(uint64_t* p, uint64_t v) {
#if defined(TETHER_MSVC_ATOMICS)
  return static_cast<uint64_t>(
      _InterlockedExchangeAdd64(reinterpret_cast<volatile __int64*>(p), static_cast<__int64>(v)));
#else
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

/* Returns the value before the subtraction. */
inline uint64_t AtomicFetchSubRelease(uint64_t* p, uint64_t v) {
#if defined(TETHER_MSVC_ATOMICS)
  return static_cast<uint64_t>(
      _InterlockedExchangeAdd64(reinterpret_cast<volatile __int64*>(p), -static_cast<__int64>(v)));
#else
  return __atomic_fetch_sub(p, v, __ATOMIC_RELEASE);
#endif
}

/* The acquire half of a release decrement that reached zero on *p, before
 * the object is destroyed. An acquire load of the counter reads the
 * decrement's value or a later one in the release sequence, which orders
 * like an acquire fence here; unlike a fence, ThreadSanitizer models it (it
 * would otherwise report every cross-thread destruction as a race). The
 * core does the same. */
inline void AtomicAcquireAfterRelease(const uint64_t* p) {
#if defined(TETHER_MSVC_ATOMICS)
  // The Interlocked operation before it was already a full barrier; keep
  // the compiler from moving the deleter's reads above it.
  (void)p;
  _ReadWriteBarrier();
#else
  (void)__atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

/* Compare-and-swap; on failure *expected receives the current value. */
inline bool AtomicCompareExchange(uint64_t* p, uint64_t* expected, uint64_t desired) {
#if defined(TETHER_MSVC_ATOMICS)
  __int64 seen = _InterlockedCompareExchange64(reinterpret_cast<volatile __int64*>(p),
                                               static_cast<__int64>(desired),
                                               static_cast<__int64>(*expected));
  if (static_cast<uint64_t>(seen) == *expected) return true;
  *expected = static_cast<uint64_t>(seen);
  return false;
#else
  return __atomic_compare_exchange_n(p, expected, desired, /*weak=*/true, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED);
#endif
}

}  // namespace detail
}  // namespace tether

#endif  // TETHER_BASE_H_
