// The C++ half of the bridge: functions Rust calls through cxx. Objects
// are made with tether's C++ layer (make_object, through the allocator
// registry) and handed to Rust as owned handles (one strong reference,
// as a usize); Rust releases them with TVMFFIObjectDecRef.
#pragma once

#include <cstddef>
#include <cstdint>

#include "rust/cxx.h"

namespace tether_bridge {

// A new bridge.Counter (fields: value, label; method: bump) as an owned handle.
std::size_t make_counter(std::int64_t value, rust::Str label);
std::int32_t counter_type_index();
// Installs, from C++, an allocator that counts what it allocates and frees.
void install_counting_allocator();
void restore_builtin_allocator();
std::size_t allocations();
std::size_t frees();
// Calls the global function `name` (registered by Rust, say) with x.
std::int64_t call_global(rust::Str name, std::int64_t x);
// Calls the global `name` with a C++ Function that returns x * factor.
std::int64_t call_global_with_callback(rust::Str name, std::int64_t factor, std::int64_t x);

}  // namespace tether_bridge
