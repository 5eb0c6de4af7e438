/* Drives libtether_core through its C ABI only: layouts, objects, the
 * allocator registry, functions, errors, the type registry, and bad input.
 * Prints "N passed, N failed" and exits nonzero on any failure. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tether/c_api.h"

#include "check.h"

/* TVM-FFI's layout, 64-bit targets. */
#define LAYOUT(T, expected) CHECK(sizeof(T) == (expected))
#define OFFSET(T, f, expected) CHECK(offsetof(T, f) == (expected))

static void test_layouts(void) {
  /* DLPack 1.x, as dlpack.h lays it out. */
  LAYOUT(TetherDLPackVersion, 8);
  LAYOUT(TetherDLTensor, 48);
  OFFSET(TetherDLTensor, device, 8);
  OFFSET(TetherDLTensor, ndim, 16);
  OFFSET(TetherDLTensor, dtype, 20);
  OFFSET(TetherDLTensor, shape, 24);
  OFFSET(TetherDLTensor, strides, 32);
  OFFSET(TetherDLTensor, byte_offset, 40);
  LAYOUT(TetherDLManagedTensor, 64);
  OFFSET(TetherDLManagedTensor, manager_ctx, 48);
  OFFSET(TetherDLManagedTensor, deleter, 56);
  LAYOUT(TetherDLManagedTensorVersioned, 80);
  OFFSET(TetherDLManagedTensorVersioned, manager_ctx, 8);
  OFFSET(TetherDLManagedTensorVersioned, deleter, 16);
  OFFSET(TetherDLManagedTensorVersioned, flags, 24);
  OFFSET(TetherDLManagedTensorVersioned, dl_tensor, 32);
  LAYOUT(TVMFFIObject, 24);
  OFFSET(TVMFFIObject, type_index, 8);
  OFFSET(TVMFFIObject, __padding, 12);
  OFFSET(TVMFFIObject, deleter, 16);
  LAYOUT(TVMFFIAny, 16);
  OFFSET(TVMFFIAny, small_str_len, 4);
  OFFSET(TVMFFIAny, v_int64, 8);
  OFFSET(TVMFFIAny, v_bytes, 8);
  LAYOUT(TVMFFIByteArray, 16);
  LAYOUT(TVMFFIShapeCell, 16);
  LAYOUT(TVMFFISeqCell, 32);
  OFFSET(TVMFFISeqCell, size, 8);
  OFFSET(TVMFFISeqCell, capacity, 16);
  OFFSET(TVMFFISeqCell, data_deleter, 24);
  LAYOUT(TVMFFIErrorCell, 72);
  OFFSET(TVMFFIErrorCell, message, 16);
  OFFSET(TVMFFIErrorCell, backtrace, 32);
  OFFSET(TVMFFIErrorCell, update_backtrace, 48);
  OFFSET(TVMFFIErrorCell, cause_chain, 56);
  OFFSET(TVMFFIErrorCell, extra_context, 64);
  LAYOUT(TVMFFIFunctionCell, 16);
  OFFSET(TVMFFIFunctionCell, cpp_call, 8);
  LAYOUT(TVMFFIOpaqueObjectCell, 8);
  LAYOUT(TVMFFIObjectAllocHeader, 8);
  LAYOUT(TVMFFICustomAllocator, 16);
  OFFSET(TVMFFICustomAllocator, context, 8);
  LAYOUT(TVMFFIFieldInfo, 120);
  OFFSET(TVMFFIFieldInfo, flags, 48);
  OFFSET(TVMFFIFieldInfo, size, 56);
  OFFSET(TVMFFIFieldInfo, alignment, 64);
  OFFSET(TVMFFIFieldInfo, offset, 72);
  OFFSET(TVMFFIFieldInfo, getter, 80);
  OFFSET(TVMFFIFieldInfo, setter, 88);
  OFFSET(TVMFFIFieldInfo, default_value_or_factory, 96);
  OFFSET(TVMFFIFieldInfo, field_static_type_index, 112);
  LAYOUT(TVMFFIMethodInfo, 72);
  OFFSET(TVMFFIMethodInfo, flags, 48);
  OFFSET(TVMFFIMethodInfo, method, 56);
  LAYOUT(TVMFFITypeMetadata, 32);
  OFFSET(TVMFFITypeMetadata, creator, 16);
  OFFSET(TVMFFITypeMetadata, total_size, 24);
  OFFSET(TVMFFITypeMetadata, structural_eq_hash_kind, 28);
  LAYOUT(TVMFFITypeAttrColumn, 16);
  OFFSET(TVMFFITypeAttrColumn, size, 8);
  OFFSET(TVMFFITypeAttrColumn, begin_index, 12);
  LAYOUT(TVMFFITypeInfo, 72);
  OFFSET(TVMFFITypeInfo, type_depth, 4);
  OFFSET(TVMFFITypeInfo, type_key, 8);
  OFFSET(TVMFFITypeInfo, type_ancestors, 24);
  OFFSET(TVMFFITypeInfo, type_key_hash, 32);
  OFFSET(TVMFFITypeInfo, num_fields, 40);
  OFFSET(TVMFFITypeInfo, num_methods, 44);
  OFFSET(TVMFFITypeInfo, fields, 48);
  OFFSET(TVMFFITypeInfo, methods, 56);
  OFFSET(TVMFFITypeInfo, metadata, 64);
  LAYOUT(TVMFFIVersion, 12);
}

static uint32_t strong_count(TVMFFIObjectHandle h) {
  return (uint32_t)(((TVMFFIObject*)h)->combined_ref_count & 0xFFFFFFFFu);
}

static void test_version_and_strings(void) {
  TVMFFIVersion v;
  TVMFFIGetVersion(&v);
  CHECK(v.major == TETHER_FFI_ABI_VERSION_MAJOR && v.minor == TETHER_FFI_ABI_VERSION_MINOR);

  TVMFFIByteArray small = ba("tiny");
  TVMFFIAny s;
  CHECK(TVMFFIStringFromByteArray(&small, &s) == 0);
  CHECK(s.type_index == kTVMFFISmallStr && s.small_str_len == 4 && memcmp(s.v_bytes, "tiny", 4) == 0);

  TVMFFIByteArray big = ba("a string that is too long to be small");
  CHECK(TVMFFIStringFromByteArray(&big, &s) == 0);
  CHECK(s.type_index == kTVMFFIStr);
  TVMFFIByteArray* cell = TetherBytesCell(s.v_obj);
  CHECK(cell->size == big.size && memcmp(cell->data, big.data, big.size) == 0 && cell->data[cell->size] == 0);
  CHECK(s.v_obj->__padding & TETHER_OBJECT_MARKER_REGISTRY_ALLOCATED);
  TVMFFIObjectAllocHeader* hdr = (TVMFFIObjectAllocHeader*)s.v_obj - 1;
  CHECK(hdr->delete_space != NULL);

  /* A view of the string becomes a second owner. */
  TVMFFIAny owned;
  CHECK(TVMFFIAnyViewToOwnedAny(&s, &owned) == 0);
  CHECK(owned.v_obj == s.v_obj && strong_count(s.v_obj) == 2);
  TVMFFIObjectDecRef(owned.v_obj);

  /* A raw C string view becomes a String. */
  TVMFFIAny raw;
  raw.type_index = kTVMFFIRawStr;
  raw.zero_padding = 0;
  raw.v_c_str = "raw c string from a view";
  CHECK(TVMFFIAnyViewToOwnedAny(&raw, &owned) == 0 && owned.type_index == kTVMFFIStr);
  TVMFFIObjectDecRef(owned.v_obj);

  /* An rvalue reference moves the object out of its slot. */
  TVMFFIObject* slot = s.v_obj;
  TVMFFIAny rv;
  rv.type_index = kTVMFFIObjectRValueRef;
  rv.zero_padding = 0;
  rv.v_ptr = &slot;
  CHECK(TVMFFIAnyViewToOwnedAny(&rv, &owned) == 0 && owned.v_obj == s.v_obj && slot == NULL);
  CHECK(strong_count(owned.v_obj) == 1);
  CHECK(TVMFFIAnyViewToOwnedAny(&rv, &owned) != 0 && raised_matches("ValueError", "already moved"));
  TVMFFIObjectDecRef(s.v_obj);

  TVMFFIByteArray bin = {"\0\1\2binary payload", 17};
  TVMFFIAny b;
  CHECK(TVMFFIBytesFromByteArray(&bin, &b) == 0 && b.type_index == kTVMFFIBytes);
  CHECK(TetherBytesCell(b.v_obj)->size == 17);
  TVMFFIObjectDecRef(b.v_obj);
}

/* A C closure: adds its captured offset to the single int argument. */
typedef struct {
  int64_t offset;
  int* freed;
} Adder;

static int adder_call(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  Adder* a = (Adder*)self;
  if (n != 1 || args[0].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "adder expects one int");
    return -1;
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = args[0].v_int64 + a->offset;
  return 0;
}

static void adder_free(void* self) {
  Adder* a = (Adder*)self;
  ++*a->freed;
  free(a);
}

static TVMFFIObjectHandle global(const char* name) {
  TVMFFIByteArray n = ba(name);
  TVMFFIObjectHandle f = NULL;
  CHECK(TVMFFIFunctionGetGlobal(&n, &f) == 0);
  return f;
}

static void test_functions(void) {
  int freed = 0;
  Adder* a = (Adder*)malloc(sizeof(Adder));
  a->offset = 100;
  a->freed = &freed;
  TVMFFIObjectHandle f = NULL;
  CHECK(TVMFFIFunctionCreate(a, adder_call, adder_free, &f) == 0 && f != NULL);
  CHECK(((TVMFFIObject*)f)->type_index == kTVMFFIFunction);

  TVMFFIAny arg, res;
  arg.type_index = kTVMFFIInt;
  arg.zero_padding = 0;
  arg.v_int64 = 23;
  res.type_index = kTVMFFINone;
  CHECK(TVMFFIFunctionCall(f, &arg, 1, &res) == 0 && res.type_index == kTVMFFIInt && res.v_int64 == 123);
  CHECK(TVMFFIFunctionCall(f, &arg, 0, &res) != 0 && raised_matches("TypeError", "adder expects one int"));

  /* Register globally, find it again, call through the found handle. */
  TVMFFIByteArray name = ba("c_test.adder");
  CHECK(TVMFFIFunctionSetGlobal(&name, f, 0) == 0);
  CHECK(TVMFFIFunctionSetGlobal(&name, f, 0) != 0 && raised_matches("ValueError", "already registered"));
  CHECK(TVMFFIFunctionSetGlobal(&name, f, 1) == 0);
  TVMFFIObjectHandle g = global("c_test.adder");
  CHECK(g == f);
  TVMFFIObjectDecRef(g);
  /* A name the testing library (linked beside the core) registered is
   * taken too, and the method-info form refuses the same way; the first
   * registration stays. */
  TVMFFIByteArray builtin = ba("testing.echo");
  CHECK(TVMFFIFunctionSetGlobal(&builtin, f, 0) != 0 && raised_matches("ValueError", "already registered"));
  TVMFFIMethodInfo minfo;
  memset(&minfo, 0, sizeof(minfo));
  minfo.name = name;
  minfo.method.type_index = kTVMFFIFunction;
  minfo.method.v_obj = (TVMFFIObject*)f;
  CHECK(TVMFFIFunctionSetGlobalFromMethodInfo(&minfo, 0) != 0 && raised_matches("ValueError", "already registered"));
  g = global("testing.echo");
  CHECK(g != NULL && g != f);
  TVMFFIObjectDecRef(g);

  /* A Rust function of the testing library, called from C: echo returns
   * its argument. */
  TVMFFIObjectHandle echo = global("testing.echo");
  CHECK(echo != NULL);
  TVMFFIAny farg;
  farg.type_index = kTVMFFIFunction;
  farg.zero_padding = 0;
  farg.v_obj = (TVMFFIObject*)f;
  res.type_index = kTVMFFINone;
  CHECK(TVMFFIFunctionCall(echo, &farg, 1, &res) == 0 && res.v_obj == (TVMFFIObject*)f);
  TVMFFIObjectDecRef(res.v_obj);
  TVMFFIObjectDecRef(echo);

  /* Removing the global and dropping our handle frees the closure once. */
  TVMFFIObjectHandle rm = global("ffi.FunctionRemoveGlobal");
  TVMFFIAny nm;
  nm.type_index = kTVMFFIRawStr;
  nm.zero_padding = 0;
  nm.v_c_str = "c_test.adder";
  res.type_index = kTVMFFINone;
  CHECK(TVMFFIFunctionCall(rm, &nm, 1, &res) == 0 && res.type_index == kTVMFFIBool && res.v_int64 == 1);
  TVMFFIObjectDecRef(rm);
  CHECK(freed == 0);
  TVMFFIObjectDecRef(f);
  CHECK(freed == 1);

  TVMFFIObjectHandle missing = (TVMFFIObjectHandle)1;
  TVMFFIByteArray nope = ba("no.such.function");
  CHECK(TVMFFIFunctionGetGlobal(&nope, &missing) == 0 && missing == NULL);
}

static void test_errors(void) {
  TVMFFIErrorSetRaisedFromCStr("ValueError", "from C");
  CHECK(raised_matches("ValueError", "from C"));
  const char* parts[] = {"one ", "two ", "three"};
  TVMFFIErrorSetRaisedFromCStrParts("RuntimeError", parts, 3);
  CHECK(raised_matches("RuntimeError", "one two three"));

  TVMFFIByteArray k = ba("KeyError"), m = ba("missing key"), bt = ba("frame 0\n");
  TVMFFIObjectHandle err = NULL;
  CHECK(TVMFFIErrorCreate(&k, &m, &bt, &err) == 0);
  TVMFFIErrorCell* cell = TetherErrorCell(err);
  TVMFFIByteArray more = ba("frame 1\n");
  cell->update_backtrace(err, &more, kTVMFFIBacktraceUpdateModeAppend);
  CHECK(cell->backtrace.size == 16 && memcmp(cell->backtrace.data, "frame 0\nframe 1\n", 16) == 0);
  TVMFFIErrorSetRaised(err);
  TVMFFIObjectHandle back = NULL;
  TVMFFIErrorMoveFromRaised(&back);
  CHECK(back == err);
  TVMFFIObjectDecRef(back);
  TVMFFIObjectDecRef(err);
  back = (TVMFFIObjectHandle)1;
  TVMFFIErrorMoveFromRaised(&back);
  CHECK(back == NULL);
  CHECK(TVMFFIBacktrace("abi_test.c", 1, "test_errors", 0) != NULL);
}

/* A function that fails as TVM_FFI_THROW does: the backtrace taken where
 * it raises, then an Error object carrying it. `cross` asks for the frames
 * beyond the FFI boundary too. */
static int g_raise_line = 0;
static int raise_with_backtrace(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)args;
  (void)n;
  (void)result;
  int cross = self != NULL;
  g_raise_line = __LINE__ + 1;
  const TVMFFIByteArray* bt = TVMFFIBacktrace("abi_test.c", g_raise_line, "raise_with_backtrace", cross);
  TVMFFIByteArray k = ba("ValueError"), m = ba("raised in C");
  TVMFFIObjectHandle err = NULL;
  if (TVMFFIErrorCreate(&k, &m, bt, &err) != 0) return -1;
  TVMFFIErrorSetRaised(err);
  TVMFFIObjectDecRef(err);
  return -1;
}

static int64_t symbolized_count(void) {
  TVMFFIObjectHandle f = global("tether.backtrace.SymbolizedCount");
  TVMFFIAny res;
  res.type_index = kTVMFFINone;
  CHECK(f != NULL && TVMFFIFunctionCall(f, NULL, 0, &res) == 0 && res.type_index == kTVMFFIInt);
  TVMFFIObjectDecRef(f);
  return res.v_int64;
}

/* The backtrace text of the error a call raised (a new string). */
static char* raised_backtrace(TVMFFIObjectHandle f) {
  TVMFFIAny res;
  res.type_index = kTVMFFINone;
  CHECK(TVMFFIFunctionCall(f, NULL, 0, &res) != 0);
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  CHECK(err != NULL);
  if (err == NULL) return NULL;
  TVMFFIErrorCell* cell = TetherErrorCell(err);
  char* text = (char*)calloc(cell->backtrace.size + 1, 1);
  memcpy(text, cell->backtrace.data, cell->backtrace.size);
  TVMFFIObjectDecRef(err);
  return text;
}

static void test_backtrace(void) {
  TVMFFIObjectHandle within = NULL, across = NULL;
  CHECK(TVMFFIFunctionCreate(NULL, raise_with_backtrace, NULL, &within) == 0);
  CHECK(TVMFFIFunctionCreate((void*)1, raise_with_backtrace, NULL, &across) == 0);
  int64_t before = symbolized_count();

  /* Raising, moving and dropping errors looks up no symbol. */
  char* within_text = NULL;
  for (int i = 0; i < 100; ++i) {
    char* t = raised_backtrace(within);
    if (i == 0) {
      within_text = t;
    } else {
      free(t);
    }
  }
  char* text = raised_backtrace(across);
  CHECK(symbolized_count() == before);
  char expect[128];
  snprintf(expect, sizeof expect, "  File \"abi_test.c\", line %d, in raise_with_backtrace\n", g_raise_line);
  /* Stopped at the boundary: the raising frame (named by the caller, which
   * replaces its own) and nothing beyond TVMFFIFunctionCall, once the
   * core's own call plumbing is left out. */
  TVMFFIByteArray in = ba(within_text), out = {NULL, 0};
  CHECK(strncmp(within_text, expect, strlen(expect)) == 0);
  CHECK(TetherFFIBacktraceResolve(&in, &out) == 0 && out.size == strlen(expect) &&
        memcmp(out.data, expect, out.size) == 0);
  free(within_text);
  /* Across the boundary: placeholders for this test's own frames. */
  CHECK(text != NULL && strncmp(text, expect, strlen(expect)) == 0);
  CHECK(text != NULL && strstr(text, "File \"<unresolved>\", line 0, in 0x") != NULL);

  /* Reading resolves them, once per address. */
  in = ba(text);
  CHECK(TetherFFIBacktraceResolve(&in, &out) == 0);
  char* resolved = (char*)calloc(out.size + 1, 1);
  memcpy(resolved, out.data, out.size);
  CHECK(strstr(resolved, "test_backtrace") != NULL && strstr(resolved, "<unresolved>") == NULL);
  CHECK(strncmp(resolved, expect, strlen(expect)) == 0);
  int64_t after = symbolized_count();
  CHECK(after > before);
  CHECK(TetherFFIBacktraceResolve(&in, &out) == 0 && out.size == strlen(resolved));
  CHECK(symbolized_count() == after);
  /* Text without placeholders comes back as it was. */
  TVMFFIByteArray plain = ba("  File \"x.py\", line 3, in f\n");
  CHECK(TetherFFIBacktraceResolve(&plain, &out) == 0 && out.size == plain.size &&
        memcmp(out.data, plain.data, plain.size) == 0);
  free(resolved);
  free(text);

  /* Bad input is refused through the raised error. */
  CHECK(TetherFFIBacktraceResolve(NULL, &out) != 0 && raised_matches("ValueError", "text"));
  CHECK(TetherFFIBacktraceResolve(&plain, NULL) != 0 && raised_matches("ValueError", ""));
  CHECK(TetherFFIBacktraceAddBoundary(NULL) != 0 && raised_matches("ValueError", "null"));
  TVMFFIObjectDecRef(within);
  TVMFFIObjectDecRef(across);
}

static int g_getter_calls = 0;
static int int_getter(void* field, TVMFFIAny* out) {
  ++g_getter_calls;
  out->type_index = kTVMFFIInt;
  out->zero_padding = 0;
  out->v_int64 = *(int64_t*)field;
  return 0;
}

static void test_types(void) {
  /* Node lets subtypes overflow its (empty) child range, or SubNode would
   * be refused; type_index_test.c covers the ranges. */
  TVMFFIByteArray key = ba("c_test.Node");
  int32_t idx = TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 1, kTVMFFIObject);
  CHECK(idx >= kTVMFFIDynObjectBegin);
  CHECK(TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 1, kTVMFFIObject) == idx);
  TVMFFIByteArray sub = ba("c_test.SubNode");
  int32_t sidx = TVMFFITypeGetOrAllocIndex(&sub, -1, 2, 0, 0, idx);
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(sidx);
  CHECK(info != NULL && info->type_depth == 2);
  CHECK(info->type_ancestors[0]->type_index == kTVMFFIObject && info->type_ancestors[1]->type_index == idx);
  CHECK(info->type_key.size == sub.size && memcmp(info->type_key.data, sub.data, sub.size) == 0);
  int32_t found = -1;
  CHECK(TVMFFITypeKeyToIndex(&sub, &found) == 0 && found == sidx);
  TVMFFIByteArray unknown = ba("c_test.Unknown");
  CHECK(TVMFFITypeGetOrAllocIndex(&unknown, -1, 1, 0, 0, -2) == -2);
  CHECK(TVMFFITypeKeyToIndex(&unknown, &found) != 0 && raised_matches("KeyError", "c_test.Unknown"));

  TVMFFIFieldInfo fi;
  memset(&fi, 0, sizeof(fi));
  fi.name = ba("value");
  fi.flags = 0;
  fi.size = 8;
  fi.alignment = 8;
  fi.offset = 24;
  fi.getter = int_getter;
  fi.field_static_type_index = kTVMFFIInt;
  CHECK(TVMFFITypeRegisterField(idx, &fi) == 0);
  info = TVMFFIGetTypeInfo(idx);
  CHECK(info->num_fields == 1 && info->fields[0].offset == 24 && info->fields[0].getter == int_getter);
  int64_t storage = 77;
  TVMFFIAny out;
  CHECK(info->fields[0].getter(&storage, &out) == 0 && out.v_int64 == 77 && g_getter_calls == 1);

  TVMFFITypeMetadata md;
  memset(&md, 0, sizeof(md));
  md.doc = ba("a node");
  md.total_size = 32;
  CHECK(TVMFFITypeRegisterMetadata(idx, &md) == 0 && TVMFFIGetTypeInfo(idx)->metadata->total_size == 32);

  TVMFFIAny attr;
  attr.type_index = kTVMFFIInt;
  attr.zero_padding = 0;
  attr.v_int64 = 5;
  TVMFFIByteArray aname = ba("c_test.attr");
  CHECK(TVMFFITypeRegisterAttr(idx, &aname, &attr) == 0);
  const TVMFFITypeAttrColumn* col = TVMFFIGetTypeAttrColumn(&aname);
  CHECK(col != NULL && col->size > idx - col->begin_index && col->data[idx - col->begin_index].v_int64 == 5);
  TVMFFIByteArray noattr = ba("c_test.no_such_attr");
  CHECK(TVMFFIGetTypeAttrColumn(&noattr) == NULL);
}

/* A custom allocator installed through the ABI sees C-visible allocations. */
static int g_allocs = 0, g_frees = 0;
static void counting_delete(void* body) {
  ++g_frees;
  free((char*)body - 16);
}
static void* counting_alloc(size_t size, size_t align, int32_t type_index, void* ctx) {
  (void)type_index;
  (void)ctx;
  if (align > 16) return NULL;
  char* base = (char*)aligned_alloc(16, ((size + 16 + 15) / 16) * 16);
  if (!base) return NULL;
  ((TVMFFIObjectAllocHeader*)(base + 8))->delete_space = counting_delete;
  ++g_allocs;
  return base + 16;
}
static TVMFFICustomAllocator g_counting = {counting_alloc, NULL};
static void* failing_alloc(size_t size, size_t align, int32_t type_index, void* ctx) {
  (void)size, (void)align, (void)type_index, (void)ctx;
  return NULL;
}
static TVMFFICustomAllocator g_failing = {failing_alloc, NULL};

static void test_allocator(void) {
  TVMFFICustomAllocator* builtin = TVMFFIGetCustomAllocator();
  CHECK(builtin != NULL && builtin->allocate != NULL);
  CHECK(TVMFFISetCustomAllocator(&g_counting) == 0 && TVMFFIGetCustomAllocator() == &g_counting);
  TVMFFIByteArray big = ba("allocated through the counting allocator");
  TVMFFIAny s;
  CHECK(TVMFFIStringFromByteArray(&big, &s) == 0 && g_allocs == 1);
  TVMFFIObjectHandle op = NULL;
  CHECK(TVMFFIObjectCreateOpaque((void*)0x10, kTVMFFIOpaquePyObject, NULL, &op) == 0 && g_allocs == 2);
  TVMFFIObjectDecRef(s.v_obj);
  TVMFFIObjectDecRef(op);
  CHECK(g_frees == 2);
  CHECK(TVMFFISetCustomAllocator(NULL) == 0 && TVMFFIGetCustomAllocator() == builtin);
  TVMFFICustomAllocator broken = {NULL, NULL};
  CHECK(TVMFFISetCustomAllocator(&broken) != 0 && raised_matches("ValueError", "allocate is NULL"));
  /* An allocator that fails reports MemoryError, not a crash. */
  CHECK(TVMFFISetCustomAllocator(&g_failing) == 0);
  CHECK(TVMFFIStringFromByteArray(&big, &s) != 0 && raised_matches("MemoryError", "failed"));
  CHECK(TVMFFISetCustomAllocator(NULL) == 0);
}

static int init_calls = 0;
static int make_handle(void** out) {
  ++init_calls;
  *out = (void*)0x42;
  return 0;
}
static int drop_handle(void* h) { return h == (void*)0x42 ? 0 : -1; }

static void test_bad_input(void) {
  TVMFFIAny res;
  res.type_index = kTVMFFINone;
  CHECK(TVMFFIObjectIncRef(NULL) != 0 && raised_matches("ValueError", "NULL"));
  CHECK(TVMFFIObjectDecRef(NULL) != 0 && raised_matches("ValueError", "NULL"));
  CHECK(TVMFFIFunctionCall(NULL, NULL, 0, &res) != 0 && raised_matches("ValueError", "handle is NULL"));
  TVMFFIByteArray big = ba("not a function but a long string");
  TVMFFIAny s;
  TVMFFIStringFromByteArray(&big, &s);
  CHECK(TVMFFIFunctionCall(s.v_obj, NULL, 0, &res) != 0 && raised_matches("TypeError", "expected ffi.Function, got ffi.String"));
  TVMFFIObjectHandle echo = global("testing.echo");
  CHECK(TVMFFIFunctionCall(echo, NULL, 2, &res) != 0 && raised_matches("ValueError", "bad arguments"));
  CHECK(TVMFFIFunctionCall(echo, NULL, 0, NULL) != 0 && raised_matches("ValueError", "output pointer is NULL"));
  TVMFFIObjectHandle out = NULL;
  CHECK(TVMFFIFunctionGetGlobal(NULL, &out) != 0 && raised_matches("ValueError", "name is NULL"));
  TVMFFIByteArray name = ba("c_test.not_a_function");
  CHECK(TVMFFIFunctionSetGlobal(&name, s.v_obj, 0) != 0 && raised_matches("TypeError", "expected ffi.Function"));
  CHECK(TVMFFIFunctionCreate(NULL, NULL, NULL, &out) != 0 && raised_matches("ValueError", "safe_call is NULL"));
  TVMFFIErrorSetRaised(s.v_obj);
  CHECK(raised_matches("TypeError", "expected ffi.Error"));
  TVMFFIObjectDecRef(s.v_obj);
  TVMFFIObjectDecRef(echo);

  TVMFFIByteArray key = ba("c_test.Orphan");
  CHECK(TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 0, 99999) == -1 && raised_matches("ValueError", "unknown parent"));
  CHECK(TVMFFITypeGetOrAllocIndex(&key, -1, 5, 0, 0, kTVMFFIObject) == -1 && raised_matches("ValueError", "depth"));
  CHECK(TVMFFITypeGetOrAllocIndex(NULL, -1, 1, 0, 0, kTVMFFIObject) == -1 && raised_matches("ValueError", "type_key is NULL"));
  CHECK(TVMFFIGetTypeInfo(99999) == NULL && TVMFFIGetTypeInfo(-5) == NULL);
  TVMFFIFieldInfo fi;
  memset(&fi, 0, sizeof(fi));
  fi.name = ba("x");
  CHECK(TVMFFITypeRegisterField(99999, &fi) != 0 && raised_matches("ValueError", "unknown type index 99999"));
  CHECK(TVMFFITypeRegisterField(kTVMFFIObject, NULL) != 0 && raised_matches("ValueError", "field info is NULL"));
  CHECK(TVMFFIObjectCreateOpaque(NULL, 12345, NULL, &out) != 0 && raised_matches("ValueError", "type index"));

  /* Wrong field type through a dataclass setter: an error, not a crash. */
  TVMFFIAny bad;
  bad.type_index = 99;  /* not a registered object type */
  bad.zero_padding = 0;
  bad.v_int64 = 0;
  TVMFFIAny owned;
  CHECK(TVMFFIAnyViewToOwnedAny(&bad, &owned) != 0);
  TVMFFIErrorMoveFromRaised(&out);
  CHECK(out != NULL);
  TVMFFIObjectDecRef(out);
  bad.type_index = 40; /* unused POD index */
  CHECK(TVMFFIAnyViewToOwnedAny(&bad, &owned) != 0 && raised_matches("TypeError", "unknown value type index 40"));

  void* h = NULL;
  CHECK(TVMFFIHandleInitOnce(&h, make_handle) == 0 && TVMFFIHandleInitOnce(&h, make_handle) == 0);
  CHECK(h == (void*)0x42 && init_calls == 1);
  CHECK(TVMFFIHandleDeinitOnce(&h, drop_handle) == 0 && h == NULL);
  CHECK(TVMFFIHandleInitOnce(NULL, make_handle) != 0 && raised_matches("ValueError", "NULL"));
}

/* TVM-FFI's own keys for every static index, read by code compiled against
 * its headers without a NULL check. */
static void test_static_types(void) {
  static const char* pod_keys[] = {"None", "int", "bool", "float", "void*", "DataType", "Device",
                                   "DLTensor*", "const char*", "TVMFFIByteArray*", "ObjectRValueRef",
                                   "ffi.SmallStr", "ffi.SmallBytes", "ffi.Unchanged"};
  for (int32_t i = kTVMFFINone; i <= kTVMFFIUnchanged; ++i) {
    const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(i);
    CHECK(info != NULL && info->type_index == i && info->type_depth == 0 && info->num_fields == 0);
    if (info == NULL) continue;
    CHECK(info->type_key.size == strlen(pod_keys[i]) &&
          memcmp(info->type_key.data, pod_keys[i], info->type_key.size) == 0);
    int32_t found = -1;
    TVMFFIByteArray k = ba(pod_keys[i]);
    CHECK(TVMFFITypeKeyToIndex(&k, &found) == 0 && found == i);
  }
  static const char* object_keys[] = {"ffi.Object", "ffi.String", "ffi.Bytes", "ffi.Error", "ffi.Function",
                                      "ffi.Shape", "ffi.Tensor", "ffi.Array", "ffi.Map", "ffi.Module",
                                      "ffi.OpaquePyObject", "ffi.List", "ffi.Dict", "ffi.VisitInterrupt",
                                      "ffi.BigInt"};
  for (int32_t i = kTVMFFIObject; i <= kTVMFFIBigInt; ++i) {
    const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(i);
    const char* want = object_keys[i - kTVMFFIObject];
    CHECK(info != NULL && info->type_index == i && info->type_depth == (i == kTVMFFIObject ? 0 : 1));
    if (info == NULL) continue;
    CHECK(info->type_key.size == strlen(want) && memcmp(info->type_key.data, want, info->type_key.size) == 0);
  }
  CHECK(TVMFFIGetTypeInfo(kTVMFFIObject)->metadata != NULL &&
        TVMFFIGetTypeInfo(kTVMFFIObject)->metadata->total_size == (int32_t)sizeof(TVMFFIObject));
  /* Unused indices below the dynamic range stay unknown. */
  CHECK(TVMFFIGetTypeInfo(kTVMFFIUnchanged + 1) == NULL && TVMFFIGetTypeInfo(kTVMFFIAny) == NULL);

  static const char* columns[] = {"__s_visit__", "__s_equal__", "__s_hash__", "__s_mutate__",
                                  "__s_maybe_inplace_mutate__", "__any_hash__", "__any_equal__",
                                  "__ffi_repr__", "__ffi_hash__", "__ffi_eq__", "__ffi_compare__",
                                  "__data_to_json__", "__data_from_json__", "__ffi_init__", "__ffi_new__",
                                  "__ffi_shallow_copy__", "__ffi_convert__", "__ffi_type_final__",
                                  "__ffi_enum__"};
  for (size_t i = 0; i < sizeof(columns) / sizeof(columns[0]); ++i) {
    TVMFFIByteArray n = ba(columns[i]);
    const TVMFFITypeAttrColumn* col = TVMFFIGetTypeAttrColumn(&n);
    CHECK(col != NULL && col->size >= 0 && (col->size == 0 || col->data != NULL));
  }
  /* Registering for kTVMFFINone only makes sure the column exists. */
  TVMFFIByteArray ensured = ba("c_test.ensured_column");
  TVMFFIAny none;
  memset(&none, 0, sizeof(none));
  none.type_index = kTVMFFINone;
  CHECK(TVMFFIGetTypeAttrColumn(&ensured) == NULL);
  CHECK(TVMFFITypeRegisterAttr(kTVMFFINone, &ensured, &none) == 0);
  const TVMFFITypeAttrColumn* col = TVMFFIGetTypeAttrColumn(&ensured);
  CHECK(col != NULL && col->size == 0);
  CHECK(TVMFFITypeRegisterAttr(kTVMFFINone, &ensured, &none) == 0 && TVMFFIGetTypeAttrColumn(&ensured) == col);

  /* A field may be registered without a getter (described, not readable). */
  TVMFFIByteArray key = ba("c_test.NoGetter");
  int32_t idx = TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 0, kTVMFFIObject);
  TVMFFIFieldInfo fi;
  memset(&fi, 0, sizeof(fi));
  fi.name = ba("hidden");
  fi.size = 8;
  fi.alignment = 8;
  fi.offset = 24;
  fi.field_static_type_index = kTVMFFIInt;
  CHECK(TVMFFITypeRegisterField(idx, &fi) == 0);
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(idx);
  CHECK(info->num_fields == 1 && info->fields[0].getter == NULL && info->fields[0].offset == 24);
}

static int init_yields_null(void** out) {
  *out = NULL;
  return 0;
}
static int init_fails(void** out) {
  (void)out;
  TVMFFIErrorSetRaisedFromCStr("ValueError", "init says no");
  return -2;
}
static int deinit_calls = 0;
static int deinit_fails(void* h) {
  (void)h;
  ++deinit_calls;
  TVMFFIErrorSetRaisedFromCStr("RuntimeError", "deinit says no");
  return -3;
}

/* InitOnce/DeinitOnce as in TVM-FFI: a NULL result is an error, the init
 * and deinit return codes pass through, a failed deinit still clears. */
static void test_init_once(void) {
  void* h = NULL;
  CHECK(TVMFFIHandleInitOnce(&h, init_yields_null) != 0 && h == NULL);
  CHECK(raised_matches("RuntimeError", "non-NULL"));
  CHECK(TVMFFIHandleInitOnce(&h, init_fails) == -2 && h == NULL && raised_matches("ValueError", "init says no"));
  CHECK(TVMFFIHandleInitOnce(&h, NULL) != 0 && raised_matches("ValueError", "init_func is NULL"));
  h = (void*)0x43;
  /* Already set: the init function is not even looked at. */
  CHECK(TVMFFIHandleInitOnce(&h, NULL) == 0 && h == (void*)0x43);
  CHECK(TVMFFIHandleDeinitOnce(&h, deinit_fails) == -3 && h == NULL && deinit_calls == 1);
  CHECK(raised_matches("RuntimeError", "deinit says no"));
  CHECK(TVMFFIHandleDeinitOnce(&h, deinit_fails) == 0 && deinit_calls == 1);
  CHECK(TVMFFIHandleDeinitOnce(NULL, deinit_fails) != 0 && raised_matches("ValueError", "NULL"));
  h = (void*)0x43;
  CHECK(TVMFFIHandleDeinitOnce(&h, NULL) != 0 && h == (void*)0x43 && raised_matches("ValueError", "deinit_func"));
}

int main(void) {
  test_layouts();
  test_version_and_strings();
  test_functions();
  test_errors();
  test_backtrace();
  test_types();
  test_allocator();
  test_bad_input();
  test_static_types();
  test_init_once();
  return report();
}
