/* Type-attribute columns of two FFI core libraries, side by side, in one
 * process: usage `compare_type_attrs LIB_UNDER_TEST REFERENCE_LIB`.
 *
 * Compiled code reads type attributes (`__ffi_shallow_copy__`, `__s_visit__`,
 * `__any_hash__`, ...) straight from the columns TVMFFIGetTypeAttrColumn
 * returns, and takes another path when a value is missing or of another
 * kind (an opaque function pointer, an ffi.Function, a bool). This program
 * loads both libraries privately (RTLD_LOCAL: neither's symbols reach the
 * other), lists each one's registered types (`ffi.GetRegisteredTypeKeys`),
 * and for every type both register on their own and every attribute name
 * TVM-FFI defines compares what the column holds: nothing, None, an opaque
 * pointer, a Function, or a bool (with its value); and each type's
 * reflection: its metadata (structural kind, size, creator or not), its own
 * fields (name, flags, offset, size, static type index) and methods (name,
 * flags). It includes only <tether/c_api.h>, for the layouts, and links
 * neither library. Prints each difference and exits 1 if there is any. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tether/c_api.h"

typedef int (*GetGlobalFn)(const TVMFFIByteArray*, TVMFFIObjectHandle*);
typedef int (*CallFn)(TVMFFIObjectHandle, TVMFFIAny*, int32_t, TVMFFIAny*);
typedef int (*KeyToIndexFn)(const TVMFFIByteArray*, int32_t*);
typedef const TVMFFITypeAttrColumn* (*ColumnFn)(const TVMFFIByteArray*);
typedef int (*DecRefFn)(TVMFFIObjectHandle);
typedef const TVMFFITypeInfo* (*TypeInfoFn)(int32_t);

typedef struct {
  const char* path;
  void* handle;
  GetGlobalFn get_global;
  CallFn call;
  KeyToIndexFn key_to_index;
  ColumnFn column;
  DecRefFn dec_ref;
  TypeInfoFn type_info;
  char** keys;
  int num_keys;
} Lib;

/* Every attribute name TVM-FFI 0.1.15 defines for types. */
static const char* const kAttrs[] = {
    "__ffi_new__",       "__ffi_init__",       "__ffi_shallow_copy__", "__ffi_type_final__",
    "__ffi_repr__",      "__ffi_convert__",    "__ffi_enum__",         "__ffi_eq__",
    "__ffi_hash__",      "__ffi_compare__",    "__any_equal__",        "__any_hash__",
    "__s_equal__",       "__s_hash__",         "__s_visit__",          "__s_mutate__",
    "__s_maybe_inplace_mutate__", "__data_to_json__", "__data_from_json__",
};
#define NUM_ATTRS ((int)(sizeof(kAttrs) / sizeof(kAttrs[0])))

static void* need(Lib* lib, const char* name) {
  void* sym = dlsym(lib->handle, name);
  if (sym == NULL) {
    fprintf(stderr, "%s: no symbol %s\n", lib->path, name);
    exit(2);
  }
  return sym;
}

static TVMFFIByteArray bytes_of(const char* s) {
  TVMFFIByteArray b = {s, strlen(s)};
  return b;
}

/* The text of a str value (small or heap), copied. */
static char* str_value(const TVMFFIAny* v) {
  const char* data = NULL;
  size_t size = 0;
  if (v->type_index == kTVMFFISmallStr) {
    data = v->v_bytes;
    size = v->small_str_len;
  } else if (v->type_index == kTVMFFIStr) {
    const TVMFFIByteArray* cell = (const TVMFFIByteArray*)((const char*)v->v_obj + sizeof(TVMFFIObject));
    data = cell->data;
    size = cell->size;
  } else {
    fprintf(stderr, "a type key of type index %d\n", v->type_index);
    exit(2);
  }
  char* out = malloc(size + 1);
  memcpy(out, data, size);
  out[size] = '\0';
  return out;
}

static void load(Lib* lib, const char* path) {
  memset(lib, 0, sizeof(*lib));
  lib->path = path;
  lib->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib->handle == NULL) {
    fprintf(stderr, "%s\n", dlerror());
    exit(2);
  }
  lib->get_global = (GetGlobalFn)need(lib, "TVMFFIFunctionGetGlobal");
  lib->call = (CallFn)need(lib, "TVMFFIFunctionCall");
  lib->key_to_index = (KeyToIndexFn)need(lib, "TVMFFITypeKeyToIndex");
  lib->column = (ColumnFn)need(lib, "TVMFFIGetTypeAttrColumn");
  lib->dec_ref = (DecRefFn)need(lib, "TVMFFIObjectDecRef");
  lib->type_info = (TypeInfoFn)need(lib, "TVMFFIGetTypeInfo");

  TVMFFIByteArray name = bytes_of("ffi.GetRegisteredTypeKeys");
  TVMFFIObjectHandle fn = NULL;
  TVMFFIAny result;
  memset(&result, 0, sizeof(result));
  if (lib->get_global(&name, &fn) != 0 || fn == NULL || lib->call(fn, NULL, 0, &result) != 0 ||
      result.type_index != kTVMFFIArray) {
    fprintf(stderr, "%s: ffi.GetRegisteredTypeKeys failed\n", path);
    exit(2);
  }
  const TVMFFISeqCell* seq = TetherSeqCell(result.v_obj);
  const TVMFFIAny* items = (const TVMFFIAny*)seq->data;
  lib->keys = calloc((size_t)seq->size, sizeof(char*));
  for (int64_t i = 0; i < seq->size; ++i) {
    lib->keys[lib->num_keys++] = str_value(&items[i]);
  }
  lib->dec_ref(result.v_obj);
  lib->dec_ref(fn);
}

static int knows(const Lib* lib, const char* key) {
  for (int i = 0; i < lib->num_keys; ++i) {
    if (strcmp(lib->keys[i], key) == 0) return 1;
  }
  return 0;
}

/* What a column holds for a type, in a word. */
static void describe(Lib* lib, const char* attr, const char* key, char* out, size_t cap) {
  TVMFFIByteArray k = bytes_of(key);
  int32_t index = -1;
  if (lib->key_to_index(&k, &index) != 0) {
    snprintf(out, cap, "(unknown type)");
    return;
  }
  TVMFFIByteArray a = bytes_of(attr);
  const TVMFFITypeAttrColumn* col = lib->column(&a);
  if (col == NULL || index < col->begin_index || index >= col->begin_index + col->size) {
    snprintf(out, cap, "-");
    return;
  }
  const TVMFFIAny* v = &col->data[index - col->begin_index];
  switch (v->type_index) {
    case kTVMFFINone: snprintf(out, cap, "-"); break;
    case kTVMFFIOpaquePtr: snprintf(out, cap, "pointer"); break;
    case kTVMFFIFunction: snprintf(out, cap, "Function"); break;
    case kTVMFFIBool: snprintf(out, cap, "bool(%s)", v->v_int64 ? "true" : "false"); break;
    case kTVMFFIInt: snprintf(out, cap, "int"); break;
    default: snprintf(out, cap, "type index %d", v->type_index); break;
  }
}

/* Append each method's name and flags to `out`. */
static void append_methods(char* out, size_t cap, const TVMFFIMethodInfo* methods, int32_t count) {
  size_t len = strlen(out);
  len += (size_t)snprintf(out + len, len < cap ? cap - len : 0, "; methods:");
  for (int32_t i = 0; i < count && len < cap; ++i) {
    len += (size_t)snprintf(out + len, cap - len, " %.*s/%llx", (int)methods[i].name.size, methods[i].name.data,
                            (unsigned long long)methods[i].flags);
  }
}

/* Append each field's name, flags, offset, size and static type index. */
static void append_fields(char* out, size_t cap, const TVMFFIFieldInfo* fields, int32_t count) {
  size_t len = strlen(out);
  len += (size_t)snprintf(out + len, len < cap ? cap - len : 0, "fields:");
  for (int32_t i = 0; i < count && len < cap; ++i) {
    const TVMFFIFieldInfo* f = &fields[i];
    len += (size_t)snprintf(out + len, cap - len, " %.*s/%llx@%lld:%lld:%d", (int)f->name.size, f->name.data,
                            (unsigned long long)f->flags, (long long)f->offset, (long long)f->size,
                            f->field_static_type_index);
  }
}

/* A type's reflection, in words: metadata (structural kind, whether it has
 * a creator), then its own fields and methods with their flags. */
static void describe_reflection(Lib* lib, const char* key, char* out, size_t cap) {
  TVMFFIByteArray k = bytes_of(key);
  int32_t index = -1;
  out[0] = '\0';
  if (lib->key_to_index(&k, &index) != 0) return;
  const TVMFFITypeInfo* info = lib->type_info(index);
  if (info->metadata == NULL) {
    snprintf(out, cap, "metadata: none; ");
  } else {
    snprintf(out, cap, "metadata: kind %d, %d bytes, %s; ", info->metadata->structural_eq_hash_kind,
             info->metadata->total_size, info->metadata->creator != NULL ? "creator" : "no creator");
  }
  append_fields(out, cap, info->fields, info->num_fields);
  append_methods(out, cap, info->methods, info->num_methods);
}

/* Types a library registers itself (not the test types either side adds). */
static int is_core_type(const char* key) {
  return strncmp(key, "testing.", 8) != 0 && strncmp(key, "test.", 5) != 0;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s LIB_UNDER_TEST REFERENCE_LIB\n", argv[0]);
    return 2;
  }
  Lib tested, reference;
  load(&tested, argv[1]);
  load(&reference, argv[2]);
  int compared = 0, differences = 0;
  for (int i = 0; i < reference.num_keys; ++i) {
    const char* key = reference.keys[i];
    if (!is_core_type(key)) continue;
    if (!knows(&tested, key)) {
      printf("note: %s is registered by %s only\n", key, reference.path);
      continue;
    }
    char want_refl[2048], got_refl[2048];
    describe_reflection(&reference, key, want_refl, sizeof(want_refl));
    describe_reflection(&tested, key, got_refl, sizeof(got_refl));
    ++compared;
    if (strcmp(want_refl, got_refl) != 0) {
      printf("%-36s reflection\n    got       %s\n    reference %s\n", key, got_refl, want_refl);
      ++differences;
    }
    for (int a = 0; a < NUM_ATTRS; ++a) {
      char want[64], got[64];
      describe(&reference, kAttrs[a], key, want, sizeof(want));
      describe(&tested, kAttrs[a], key, got, sizeof(got));
      ++compared;
      if (strcmp(want, got) != 0) {
        printf("%-36s %-28s %-12s (reference: %s)\n", key, kAttrs[a], got, want);
        ++differences;
      }
    }
  }
  for (int i = 0; i < tested.num_keys; ++i) {
    if (is_core_type(tested.keys[i]) && !knows(&reference, tested.keys[i])) {
      printf("note: %s is registered by %s only\n", tested.keys[i], tested.path);
    }
  }
  printf("%d columns and reflection records compared over the types both register, %d differ\n", compared, differences);
  return differences == 0 ? 0 : 1;
}
