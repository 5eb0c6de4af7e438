// The C++ half of the bridge (see include/bridge.h): a reflected type made
// with make_object, a counting allocator installed from C++, and calls
// into global functions, which Rust registers. A C++ exception thrown here
// reaches Rust as cxx's Err (its what(), "Kind: message").
#include "tether-cxx-bridge/include/bridge.h"

#include <tether/tether.h>

#include <atomic>
#include <cstdlib>
#include <string>

namespace tether_bridge {

using namespace tether;

class CounterObj : public Object {
 public:
  int64_t value;
  String label;
  CounterObj(int64_t v, String l) : value(v), label(std::move(l)) {}
  int64_t Bump(int64_t by) { return value += by; }
  TETHER_DECLARE_OBJECT_INFO_FINAL("bridge.Counter", CounterObj, Object);
};

namespace {

std::atomic<std::size_t> g_allocations{0};
std::atomic<std::size_t> g_frees{0};

char* AlignedBlock(std::size_t size) {
#if defined(_WIN32)
  return static_cast<char*>(_aligned_malloc(size, 64));
#else
  return static_cast<char*>(std::aligned_alloc(64, size));
#endif
}

// Block: [start | ... | delete_space | body], body 64 bytes in.
void CountingDeleteSpace(void* body) {
  g_frees.fetch_add(1);
  char* start = static_cast<char*>(body) - 64;
#if defined(_WIN32)
  _aligned_free(start);
#else
  std::free(start);
#endif
}

void* CountingAllocate(std::size_t size, std::size_t alignment, int32_t, void*) {
  if (alignment > 64) return nullptr;
  char* start = AlignedBlock((size + 64 + 63) / 64 * 64);
  if (start == nullptr) return nullptr;
  char* body = start + 64;
  reinterpret_cast<TVMFFIObjectAllocHeader*>(body)[-1].delete_space = &CountingDeleteSpace;
  g_allocations.fetch_add(1);
  return body;
}

TVMFFICustomAllocator g_counting{&CountingAllocate, nullptr};

TETHER_STATIC_INIT_BLOCK() {
  reflection::ObjectDef<CounterObj>()
      .def_ro("value", &CounterObj::value, "the count")
      .def_rw("label", &CounterObj::label, "a name")
      .def("bump", &CounterObj::Bump, "adds to the count and returns it");
}

}  // namespace

std::size_t make_counter(std::int64_t value, rust::Str label) {
  ObjectPtr<CounterObj> c = make_object<CounterObj>(value, String(label.data(), label.size()));
  return reinterpret_cast<std::size_t>(detail::Header(c.release()));
}

std::int32_t counter_type_index() { return CounterObj::RuntimeTypeIndex(); }

void install_counting_allocator() {
  g_allocations = 0;
  g_frees = 0;
  detail::CheckCall(TVMFFISetCustomAllocator(&g_counting));
}

void restore_builtin_allocator() { detail::CheckCall(TVMFFISetCustomAllocator(nullptr)); }

std::size_t allocations() { return g_allocations.load(); }
std::size_t frees() { return g_frees.load(); }

std::int64_t call_global(rust::Str name, std::int64_t x) {
  return Function::GetGlobalRequired(std::string(name))(x).cast<int64_t>();
}

std::int64_t call_global_with_callback(rust::Str name, std::int64_t factor, std::int64_t x) {
  Function times = Function::FromTyped([factor](int64_t v) { return v * factor; }, "times");
  return Function::GetGlobalRequired(std::string(name))(times, x).cast<int64_t>();
}

}  // namespace tether_bridge
