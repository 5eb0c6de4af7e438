/* Objects allocated the way code built against upstream's headers (or plain
 * C) allocates them: with malloc, no TVMFFIObjectAllocHeader in front and no
 * tether marker. Python must tie them through its side table.
 *
 * headerless.Node: {value: int, next: Object or None}. Globals:
 *   headerless.make_node(value, next=None) -> Node
 *   headerless.storage_count() -> how many Node blocks are not yet freed
 *   headerless.alive_count()   -> how many Nodes still have their contents */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tether/c_api.h"

typedef struct {
  TVMFFIObject header;
  int64_t value;
  TVMFFIObject* next; /* owned strong reference, or NULL */
} Node;

static int32_t node_type_index = -1;
static int64_t storage_count = 0; /* guarded by the callers' GIL / single-threaded test use */
static int64_t alive_count = 0;

static void node_deleter(void* self, int flags) {
  Node* n = (Node*)self;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    if (n->next != NULL) TVMFFIObjectDecRef(n->next);
    n->next = NULL;
    alive_count--;
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) {
    storage_count--;
    free(n);
  }
}

static int get_value(void* field, TVMFFIAny* out) {
  out->type_index = kTVMFFIInt;
  out->zero_padding = 0;
  out->v_int64 = *(int64_t*)field;
  return 0;
}

static int get_next(void* field, TVMFFIAny* out) {
  TVMFFIObject* next = *(TVMFFIObject**)field;
  out->zero_padding = 0;
  if (next == NULL) {
    out->type_index = kTVMFFINone;
    out->v_int64 = 0;
    return 0;
  }
  TVMFFIObjectIncRef(next);
  out->type_index = next->type_index;
  out->v_obj = next;
  return 0;
}

static int make_node(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  if (n < 1 || n > 2 || args[0].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "headerless.make_node(value: int, next=None)");
    return -1;
  }
  Node* node = (Node*)malloc(sizeof(Node));
  if (node == NULL) {
    TVMFFIErrorSetRaisedFromCStr("MemoryError", "headerless.make_node: out of memory");
    return -1;
  }
  memset(node, 0, sizeof(Node));
  node->header.combined_ref_count = 1 | ((uint64_t)1 << 32);
  node->header.type_index = node_type_index;
  node->header.deleter = node_deleter;
  node->value = args[0].v_int64;
  if (n == 2 && args[1].type_index >= kTVMFFIStaticObjectBegin) {
    node->next = args[1].v_obj;
    TVMFFIObjectIncRef(node->next);
  }
  storage_count++;
  alive_count++;
  result->type_index = node_type_index;
  result->zero_padding = 0;
  result->v_obj = &node->header;
  return 0;
}

static int get_storage_count(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = storage_count;
  return 0;
}

static int get_alive_count(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = alive_count;
  return 0;
}

static void set_global(const char* name, TVMFFISafeCallType fn) {
  TVMFFIObjectHandle f = NULL;
  if (TVMFFIFunctionCreate(NULL, fn, NULL, &f) == 0) {
    TVMFFIByteArray n = {name, strlen(name)};
    TVMFFIFunctionSetGlobal(&n, f, 1);
    TVMFFIObjectDecRef(f);
  }
}

static void add_field(const char* name, int64_t offset, int32_t static_type, TVMFFIFieldGetter getter) {
  TVMFFIFieldInfo info;
  memset(&info, 0, sizeof(info));
  info.name.data = name;
  info.name.size = strlen(name);
  info.size = 8;
  info.alignment = 8;
  info.offset = offset;
  info.getter = getter;
  info.field_static_type_index = static_type;
  TVMFFITypeRegisterField(node_type_index, &info);
}

__attribute__((constructor)) static void headerless_load(void) {
  TVMFFIByteArray key = {"headerless.Node", 15};
  node_type_index = TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 0, kTVMFFIObject);
  add_field("value", offsetof(Node, value), kTVMFFIInt, get_value);
  add_field("next", offsetof(Node, next), kTVMFFIObject, get_next);
  set_global("headerless.make_node", make_node);
  set_global("headerless.storage_count", get_storage_count);
  set_global("headerless.alive_count", get_alive_count);
}
