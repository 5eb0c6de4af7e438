/* Type-index ranges through the C ABI only: TVMFFITypeGetOrAllocIndex
 * hands out the indices TVM-FFI 0.1.15's runtime hands out for the same
 * registrations (offsets from the first type, as observed on its library),
 * refuses a subtype that fits neither its parent's range nor, when overflow
 * is forbidden, anywhere else (an error raised, the process going on), and
 * a compiled IsInstance (range test, then the ancestor table only for types
 * that allow overflow) agrees with the ancestry for every pair of types.
 * Prints "N passed, N failed" and exits nonzero on any failure. */
#include <stdio.h>
#include <string.h>

#include "tether/c_api.h"

#include "check.h"

/* What a header declares for a type, as IsInstance<T> compiles it in. */
typedef struct {
  const char* key;
  int32_t index;
  int32_t depth;
  int32_t child_slots;
  int can_overflow;
} Declared;

#define MAX_TYPES 64
static Declared g_types[MAX_TYPES];
static int g_num_types = 0;

static int32_t depth_of(int32_t index) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(index);
  return info == NULL ? -1 : info->type_depth;
}

/* Register a type and remember what its header would declare. */
static Declared declare(const char* key, int32_t child_slots, int can_overflow, int32_t parent) {
  TVMFFIByteArray k = ba(key);
  Declared d = {key, -1, depth_of(parent) + 1, child_slots, can_overflow};
  d.index = TVMFFITypeGetOrAllocIndex(&k, -1, d.depth, child_slots, can_overflow, parent);
  CHECK(d.index >= 0);
  if (d.index < 0) {
    fprintf(stderr, "  %s was refused\n", key);
    raised_matches("", "");
  } else if (g_num_types < MAX_TYPES) {
    g_types[g_num_types++] = d;
  }
  return d;
}

/* A registration that must be refused with a ValueError naming `needle`,
 * leaving the key unregistered. */
static int refused(const char* key, int32_t depth, int32_t child_slots, int can_overflow, int32_t parent,
                   const char* needle) {
  TVMFFIByteArray k = ba(key);
  int32_t out = 0;
  int ok = TVMFFITypeGetOrAllocIndex(&k, -1, depth, child_slots, can_overflow, parent) == -1 &&
           raised_matches("ValueError", needle);
  ok = ok && TVMFFITypeKeyToIndex(&k, &out) != 0 && raised_matches("KeyError", key);
  return ok;
}

/* The ancestry: x is t or one of its subtypes. */
static int derives(int32_t x, int32_t t) {
  const TVMFFITypeInfo* xi = TVMFFIGetTypeInfo(x);
  if (xi == NULL) return 0;
  if (x == t) return 1;
  for (int32_t d = 0; d < xi->type_depth; ++d) {
    if (xi->type_ancestors[d]->type_index == t) return 1;
  }
  return 0;
}

/* The headers' inline IsInstance<T>() on an object of type x. */
static int compiled_is_instance(int32_t x, const Declared* t) {
  if (x >= t->index && x < t->index + t->child_slots + 1) return 1;
  if (!t->can_overflow || x < t->index) return 0;
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(x);
  return info->type_depth > t->depth && info->type_ancestors[t->depth]->type_index == t->index;
}

static void check_is_instance_everywhere(void) {
  int mismatches = 0;
  for (int i = 0; i < g_num_types; ++i) {
    for (int j = 0; j < g_num_types; ++j) {
      if (compiled_is_instance(g_types[i].index, &g_types[j]) != derives(g_types[i].index, g_types[j].index)) {
        fprintf(stderr, "  IsInstance<%s>(%s) disagrees with the ancestry\n", g_types[j].key, g_types[i].key);
        ++mismatches;
      }
    }
  }
  CHECK(mismatches == 0);
}

/* The registrations replayed on TVM-FFI 0.1.15's library, with the offsets
 * it gave from the first (it gave 138 for that one: it registers ten types
 * of its own at load). */
static void test_same_indices_as_tvm_ffi(void) {
  const int32_t obj = kTVMFFIObject;
  Declared base = declare("ranges.Base4", 4, 1, obj);
  int32_t b = base.index;
  CHECK(b >= kTVMFFIDynObjectBegin);
  printf("first dynamic type at index %d\n", b);
  Declared c1 = declare("ranges.C1", 0, 1, b);
  Declared c2 = declare("ranges.C2", 1, 1, b);
  CHECK(c1.index == b + 1 && c2.index == b + 2);
  CHECK(declare("ranges.Unrelated", 0, 1, obj).index == b + 5);
  CHECK(declare("ranges.C3", 0, 1, b).index == b + 4);
  CHECK(declare("ranges.C2a", 0, 1, c2.index).index == b + 3);
  CHECK(declare("ranges.C2b", 0, 1, c2.index).index == b + 6);
  CHECK(declare("ranges.C4", 0, 1, b).index == b + 7);
  CHECK(declare("ranges.C1a", 0, 1, c1.index).index == b + 8);

  /* Nested bases: Inner3 inside Outer6; OuterC no longer fits. */
  Declared outer = declare("ranges.Outer6", 6, 1, obj);
  Declared inner = declare("ranges.Inner3", 3, 1, outer.index);
  CHECK(outer.index == b + 9 && inner.index == b + 10);
  CHECK(declare("ranges.InnerX", 0, 1, inner.index).index == b + 11);
  CHECK(declare("ranges.OuterB", 1, 1, outer.index).index == b + 14);
  CHECK(declare("ranges.OuterC", 1, 1, outer.index).index == b + 16);

  /* Overflow forbidden, and inherited as forbidden. */
  Declared closed = declare("ranges.Closed1", 1, 0, obj);
  Declared closed_a = declare("ranges.ClosedA", 0, 1, closed.index);
  CHECK(closed.index == b + 18 && closed_a.index == b + 19);
  CHECK(refused("ranges.ClosedB", 2, 0, 1, closed.index, "forbids overflow"));
  CHECK(refused("ranges.ClosedAX", 3, 0, 1, closed_a.index, "forbids overflow"));
  Declared closed3 = declare("ranges.Closed3", 3, 0, obj);
  CHECK(closed3.index == b + 20);
  CHECK(refused("ranges.Closed3Big", 2, 3, 1, closed3.index, "forbids overflow"));
  Declared mid = declare("ranges.Closed3Mid", 2, 1, closed3.index);
  CHECK(mid.index == b + 21);
  CHECK(declare("ranges.MidX", 0, 1, mid.index).index == b + 22);
  CHECK(declare("ranges.MidY", 0, 1, mid.index).index == b + 23);
  CHECK(refused("ranges.MidZ", 3, 0, 1, mid.index, "forbids overflow"));
  CHECK(declare("ranges.Last", 0, 1, obj).index == b + 24);

  /* A registered key keeps its index whatever is asked now. */
  TVMFFIByteArray k = ba("ranges.Base4");
  CHECK(TVMFFITypeGetOrAllocIndex(&k, -1, 1, 9, 0, obj) == b);
}

/* Types with no child slots take one index each; a zero-slot type that
 * forbids overflow takes no subtype at all. */
static void test_zero_slots(void) {
  Declared a = declare("zero.A", 0, 1, kTVMFFIObject);
  CHECK(declare("zero.B", 0, 1, a.index).index == a.index + 1);
  CHECK(declare("zero.C", 0, 1, kTVMFFIObject).index == a.index + 2);
  Declared leaf = declare("zero.Leaf", 0, 0, kTVMFFIObject);
  CHECK(refused("zero.UnderLeaf", 2, 0, 1, leaf.index, "forbids overflow"));
}

/* The fixed-index object types take no subtypes (ffi.Object and
 * ffi.VisitInterrupt excepted), as in TVM-FFI. */
static void test_builtin_parents(void) {
  CHECK(refused("builtin.SubError", 2, 0, 1, kTVMFFIError, "forbids overflow"));
  CHECK(refused("builtin.SubModule", 2, 0, 1, kTVMFFIModule, "forbids overflow"));
  CHECK(refused("builtin.SubFunction", 2, 0, 1, kTVMFFIFunction, "forbids overflow"));
  CHECK(declare("builtin.SubVisitInterrupt", 0, 1, kTVMFFIVisitInterrupt).index >= kTVMFFIDynObjectBegin);
}

/* Requests the runtime cannot honour are errors, never an abort. */
static void test_bad_requests(void) {
  CHECK(refused("bad.NegativeSlots", 1, -1, 1, kTVMFFIObject, "num_child_slots"));
  CHECK(refused("bad.DynamicRoot", 0, 0, 1, -1, "needs a parent"));
  TVMFFIByteArray k = ba("bad.StaticInDynamicRegion");
  CHECK(TVMFFITypeGetOrAllocIndex(&k, 200, 1, 0, 1, kTVMFFIObject) == -1 && raised_matches("ValueError", "below 128"));
  TVMFFIByteArray s = ba("ranges.Static100");
  CHECK(TVMFFITypeGetOrAllocIndex(&s, 100, 1, 2, 1, kTVMFFIObject) == 100);
  TVMFFIByteArray t = ba("ranges.Static101");
  CHECK(TVMFFITypeGetOrAllocIndex(&t, 101, 1, 0, 1, kTVMFFIObject) == -1 && raised_matches("ValueError", "overlaps"));
  /* Its child slots are its subtypes' first choice. */
  CHECK(declare("ranges.Static100Child", 0, 1, 100).index == 101);
}

int main(void) {
  test_same_indices_as_tvm_ffi();
  test_zero_slots();
  test_builtin_parents();
  test_bad_requests();
  check_is_instance_everywhere();
  return report();
}
