/* A plain C library built against tether's C ABI, loaded by the Python tests
 * with tether.load_module. On load it registers a global function and a
 * type with the core; it also exports one function as a module symbol. */
#include <stddef.h>
#include <string.h>

#include "tether/c_api.h"

static int make_name(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  (void)args;
  (void)n;
  /* A string allocated by this library: it goes through the registry. */
  TVMFFIByteArray text = {"made by the C plugin through the registry", 41};
  return TVMFFIStringFromByteArray(&text, result);
}

static int keep_and_return(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  if (n != 1) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "keep_and_return expects one argument");
    return -1;
  }
  return TVMFFIAnyViewToOwnedAny(&args[0], result);
}

int32_t plugin_type_index = -1;

/* plugin.Thing: header plus one int, allocated by this library through the
 * allocator registry the way the C++ layer's make_object does. */
typedef struct {
  TVMFFIObject header;
  int64_t value;
} Thing;

static void thing_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) {
    TVMFFIObjectAllocHeader* h = (TVMFFIObjectAllocHeader*)self - 1;
    h->delete_space(self);
  }
}

static int make_thing(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  /* make_thing(value, alignment=8) */
  size_t align = (n == 2 && args[1].type_index == kTVMFFIInt) ? (size_t)args[1].v_int64 : _Alignof(Thing);
  TVMFFICustomAllocator* a = TVMFFIGetCustomAllocator();
  Thing* t = (Thing*)a->allocate(sizeof(Thing), align, plugin_type_index, a->context);
  if (t == NULL) {
    TVMFFIErrorSetRaisedFromCStr("MemoryError", "plugin.make_thing: allocation failed");
    return -1;
  }
  t->header.combined_ref_count = 1 | ((uint64_t)1 << 32);
  t->header.type_index = plugin_type_index;
  t->header.__padding = TETHER_OBJECT_MARKER_REGISTRY_ALLOCATED;
  t->header.deleter = thing_deleter;
  t->value = (n >= 1 && args[0].type_index == kTVMFFIInt) ? args[0].v_int64 : 0;
  result->type_index = plugin_type_index;
  result->zero_padding = 0;
  result->v_obj = &t->header;
  return 0;
}

__attribute__((constructor)) static void plugin_load(void) {
  TVMFFIByteArray key = {"plugin.Thing", 12};
  plugin_type_index = TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 0, kTVMFFIObject);
  /* A field described without a getter (TVM-FFI allows it): readable from
   * nowhere, so Python must report it rather than call through NULL. */
  TVMFFIFieldInfo hidden;
  memset(&hidden, 0, sizeof(hidden));
  hidden.name.data = "hidden";
  hidden.name.size = 6;
  hidden.size = 8;
  hidden.alignment = 8;
  hidden.offset = offsetof(Thing, value);
  hidden.field_static_type_index = kTVMFFIInt;
  TVMFFITypeRegisterField(plugin_type_index, &hidden);
  TVMFFIObjectHandle f = NULL;
  if (TVMFFIFunctionCreate(NULL, make_name, NULL, &f) == 0) {
    TVMFFIByteArray name = {"plugin.make_name", 16};
    TVMFFIFunctionSetGlobal(&name, f, 1);
    TVMFFIObjectDecRef(f);
  }
  if (TVMFFIFunctionCreate(NULL, make_thing, NULL, &f) == 0) {
    TVMFFIByteArray name = {"plugin.make_thing", 17};
    TVMFFIFunctionSetGlobal(&name, f, 1);
    TVMFFIObjectDecRef(f);
  }
}

/* Exported as a module function: tether.load_module(path).keep_and_return */
__attribute__((visibility("default"))) int __tvm_ffi_keep_and_return(void* self, const TVMFFIAny* args,
                                                                      int32_t n, TVMFFIAny* result) {
  return keep_and_return(self, args, n, result);
}
