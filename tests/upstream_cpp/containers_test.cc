// Container conformance: C++ compiled against the upstream apache-tvm-ffi
// headers, linked against tether's libtether_core only. The headers read and
// write Map, Dict, List, Array and Shape cells inline (lookups, iteration,
// Map::Set's copy-on-write, Dict::Set's in-place switch), so containers made
// by tether's globals must have upstream's exact layout, hashing and probing,
// and containers the headers made (with their own allocation and deleter)
// must work in tether's globals. Prints "N passed, N failed".

#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/dict.h>
#include <tvm/ffi/container/list.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "check.h"

namespace ffi = tvm::ffi;

static ffi::Function global(const char* name) { return ffi::Function::GetGlobalRequired(name); }

// A key of either size class: inline small strings and heap strings.
static std::string key(int i) {
  return i % 2 == 0 ? "k" + std::to_string(i) : "a much longer key, number " + std::to_string(i);
}

// The raw `slots_` word of a map object (header 24 bytes, data, size, slots).
static uint64_t raw_slots(const ffi::ObjectRef& m) {
  uint64_t v;
  std::memcpy(&v, reinterpret_cast<const char*>(m.get()) + 40, sizeof(v));
  return v;
}

// Keys in iteration order, read through tether's forward iterator global.
static std::vector<std::string> keys_via_tether(const ffi::ObjectRef& m, const char* functor) {
  std::vector<std::string> out;
  size_t n = m->type_index() == ffi::TypeIndex::kTVMFFIMap ? global("ffi.MapSize")(m).cast<int64_t>()
                                                             : global("ffi.DictSize")(m).cast<int64_t>();
  if (n == 0) return out;
  ffi::Function it = global(functor)(m).cast<ffi::Function>();
  do {
    out.push_back(it(0).cast<ffi::String>());
  } while (it(2).cast<bool>());
  return out;
}

template <typename M>
static std::vector<std::string> keys_inline(const M& m) {
  std::vector<std::string> out;
  for (auto kv : m) out.push_back(kv.first);
  return out;
}

// A Map the headers built, read by tether's globals.
static void test_header_map_in_tether(int n) {
  ffi::Map<ffi::String, int64_t> m;
  for (int i = 0; i < n; ++i) m.Set(key(i), i);
  CHECK(global("ffi.MapSize")(m).cast<int64_t>() == n);
  bool all = true;
  for (int i = 0; i < n; ++i) {
    all = all && global("ffi.MapGetItem")(m, ffi::String(key(i))).cast<int64_t>() == i;
    all = all && global("ffi.MapCount")(m, ffi::String(key(i))).cast<int64_t>() == 1;
  }
  CHECK(all);
  CHECK(global("ffi.MapCount")(m, ffi::String("absent")).cast<int64_t>() == 0);
  CHECK(keys_via_tether(m, "ffi.MapForwardIterFunctor") == keys_inline(m));
}

// A Map tether built, read inline by the headers.
static void test_tether_map_inline(int n) {
  std::vector<ffi::AnyView> args;
  std::vector<ffi::String> keys;
  for (int i = 0; i < n; ++i) keys.push_back(key(i));
  std::vector<ffi::Any> flat;
  for (int i = 0; i < n; ++i) {
    flat.push_back(keys[i]);
    flat.push_back(int64_t(i));
  }
  for (auto& a : flat) args.push_back(a);
  ffi::Any made;
  global("ffi.Map").CallPacked(args.data(), static_cast<int32_t>(args.size()), &made);
  auto m = made.cast<ffi::Map<ffi::String, int64_t>>();
  CHECK(m.size() == static_cast<size_t>(n));
  bool all = true;
  for (int i = 0; i < n; ++i) all = all && m.count(keys[i]) == 1 && m[keys[i]] == i;
  CHECK(all);
  CHECK(m.count(ffi::String("absent")) == 0);
  std::vector<std::string> want;
  for (int i = 0; i < n; ++i) want.push_back(keys[i]);
  CHECK(keys_inline(m) == want);
  // Same layout as the headers build for the same insertions.
  ffi::Map<ffi::String, int64_t> ref;
  for (int i = 0; i < n; ++i) ref.Set(keys[i], i);
  CHECK(raw_slots(m) == raw_slots(ref));
  // Map::Set on a shared map copies (tether's map is left alone); on the
  // copy it inserts inline.
  ffi::Map<ffi::String, int64_t> copy = m;
  copy.Set(ffi::String("extra"), 99);
  CHECK(m.size() == static_cast<size_t>(n) && copy.size() == static_cast<size_t>(n) + 1);
  CHECK(global("ffi.MapGetItem")(copy, ffi::String("extra")).cast<int64_t>() == 99);
  CHECK(global("ffi.MapCount")(made, ffi::String("extra")).cast<int64_t>() == 0);
}

// Dicts mutated from both sides, across small->small, small->dense and
// dense rehash growth, on objects either side allocated.
static void test_dict_both_ways() {
  ffi::Dict<ffi::String, int64_t> d;  // allocated by the headers
  for (int i = 0; i < 40; ++i) global("ffi.DictSetItem")(d, ffi::String(key(i)), int64_t(i));
  CHECK(d.size() == 40);
  bool all = true;
  for (int i = 0; i < 40; ++i) all = all && d.count(key(i)) == 1 && d[key(i)] == i;
  CHECK(all);
  global("ffi.DictErase")(d, ffi::String(key(3)));
  CHECK(d.count(key(3)) == 0 && d.size() == 39);

  ffi::Dict<ffi::String, int64_t> t = global("ffi.Dict")().cast<ffi::Dict<ffi::String, int64_t>>();
  for (int i = 0; i < 40; ++i) t.Set(key(i), i);  // the headers grow tether's object in place
  CHECK(global("ffi.DictSize")(t).cast<int64_t>() == 40);
  all = true;
  for (int i = 0; i < 40; ++i) all = all && global("ffi.DictGetItem")(t, ffi::String(key(i))).cast<int64_t>() == i;
  CHECK(all);
  t.erase(key(5));
  CHECK(global("ffi.DictCount")(t, ffi::String(key(5))).cast<int64_t>() == 0);
  CHECK(keys_via_tether(t, "ffi.DictForwardIterFunctor") == keys_inline(t));
  global("ffi.DictSetItem")(t, ffi::String(key(7)), int64_t(70));  // dense: moves to the end
  CHECK(keys_inline(t).back() == key(7) && t[key(7)] == 70);

  // Same sequence on both sides: same slots and the same order.
  ffi::Dict<ffi::String, int64_t> ref;
  ffi::Dict<ffi::String, int64_t> mine = global("ffi.Dict")().cast<ffi::Dict<ffi::String, int64_t>>();
  bool same = true;
  for (int i = 0; i < 300; ++i) {
    ref.Set(key(i % 97), i);
    global("ffi.DictSetItem")(mine, ffi::String(key(i % 97)), int64_t(i));
    if (i % 5 == 0) {
      ref.erase(key((i * 7) % 97));
      global("ffi.DictErase")(mine, ffi::String(key((i * 7) % 97)));
    }
    same = same && raw_slots(ref) == raw_slots(mine) && keys_inline(ref) == keys_inline(mine);
  }
  CHECK(same);
  global("ffi.DictClear")(d);
  CHECK(d.size() == 0 && d.count(key(1)) == 0);
}

// Int keys hash by value: tether and the headers find each other's keys.
static void test_int_and_object_keys() {
  ffi::Map<int64_t, int64_t> m;
  for (int64_t i = 0; i < 1000; ++i) m.Set(i * 1048576, i);
  bool all = true;
  for (int64_t i = 0; i < 1000; ++i) all = all && global("ffi.MapGetItem")(m, i * 1048576).cast<int64_t>() == i;
  CHECK(all);
  ffi::Function f = global("ffi.MapSize");
  ffi::Map<ffi::Any, int64_t> by_obj;
  by_obj.Set(f, 1);
  CHECK(global("ffi.MapGetItem")(by_obj, f).cast<int64_t>() == 1);
  CHECK(global("ffi.MapCount")(by_obj, global("ffi.MapCount")).cast<int64_t>() == 0);
  auto missing = global("ffi.MapGetItemOrMissing")(by_obj, 5);
  CHECK(missing.cast<ffi::ObjectRef>().same_as(global("ffi.GetInvalidObject")().cast<ffi::ObjectRef>()));
}

// Lists, Arrays and Shapes across the boundary.
static void test_sequences() {
  ffi::List<int64_t> l;  // allocated by the headers: no room for a lock inside
  for (int i = 0; i < 3; ++i) l.push_back(i);
  for (int i = 3; i < 100; ++i) global("ffi.ListAppend")(l, int64_t(i));
  CHECK(l.size() == 100 && l[99] == 99);
  global("ffi.ListInsert")(l, int64_t(0), int64_t(-1));
  CHECK(l[0] == -1 && global("ffi.ListSize")(l).cast<int64_t>() == 101);
  global("ffi.ListReverse")(l);
  CHECK(l[0] == 99 && l[100] == -1);

  auto tl = global("ffi.List")(int64_t(1), int64_t(2)).cast<ffi::List<int64_t>>();
  for (int i = 3; i <= 50; ++i) tl.push_back(i);  // the headers grow tether's list
  CHECK(global("ffi.ListSize")(tl).cast<int64_t>() == 50);
  CHECK(global("ffi.ListGetItem")(tl, int64_t(49)).cast<int64_t>() == 50);

  auto arr = global("ffi.Array")(int64_t(4), ffi::String("x"), 2.5).cast<ffi::Array<ffi::Any>>();
  CHECK(arr.size() == 3 && arr[0].cast<int64_t>() == 4 && arr[1].cast<ffi::String>() == "x");
  auto shape = global("ffi.Shape")(int64_t(2), int64_t(3), int64_t(5)).cast<ffi::Shape>();
  CHECK(shape.size() == 3 && shape[0] == 2 && shape[2] == 5 && shape.Product() == 30);
}

int main() {
  for (int n : {0, 1, 2, 3, 4, 5, 8, 20, 1000}) {
    test_header_map_in_tether(n);
    test_tether_map_inline(n);
  }
  test_dict_both_ways();
  test_int_and_object_keys();
  test_sequences();
  return report("");
}
