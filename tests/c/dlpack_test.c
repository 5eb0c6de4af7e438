/* Tensors, DLPack, dtype strings and the environment through the C ABI
 * only: a Tensor's DLTensor right after its header, both managed-tensor
 * forms with deleters counted, the environment allocator, and bad input.
 * Prints "N passed, N failed" and exits nonzero on any failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tether/c_api.h"

#include "check.h"

/* A managed tensor over static storage whose deleter counts its calls. */
static float g_data[6] = {0, 1, 2, 3, 4, 5};
static int64_t g_shape[2] = {2, 3};
static int g_deleted = 0;
static void count_deleter(TetherDLManagedTensor* self) {
  ++g_deleted;
  free(self);
}
static void count_deleter_versioned(TetherDLManagedTensorVersioned* self) {
  ++g_deleted;
  free(self);
}

static TetherDLTensor cpu_f32(void) {
  TetherDLTensor t;
  memset(&t, 0, sizeof(t));
  t.data = g_data;
  t.device.device_type = 1;
  t.ndim = 2;
  t.dtype.code = 2;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = g_shape;
  return t;
}

static void test_dlpack(void) {
  TetherDLManagedTensor* m = calloc(1, sizeof(*m));
  m->dl_tensor = cpu_f32();
  m->deleter = count_deleter;
  TVMFFIObjectHandle t = NULL;
  CHECK(TVMFFITensorFromDLPack(m, 4, 1, &t) == 0);
  CHECK(((TVMFFIObject*)t)->type_index == kTVMFFITensor);
  TetherDLTensor* dl = TetherTensorDLTensor(t);
  CHECK(dl->data == g_data && dl->ndim == 2 && dl->shape == g_shape);
  CHECK(dl->strides != NULL && dl->strides[0] == 3 && dl->strides[1] == 1);

  TetherDLManagedTensorVersioned* v = NULL;
  CHECK(TVMFFITensorToDLPackVersioned(t, &v) == 0);
  CHECK(v->version.major == TETHER_DLPACK_MAJOR_VERSION && v->version.minor == TETHER_DLPACK_MINOR_VERSION);
  CHECK(v->flags == 0 && v->dl_tensor.data == g_data && v->manager_ctx == t);
  TVMFFIObjectDecRef(t);
  CHECK(g_deleted == 0);
  v->deleter(v);
  CHECK(g_deleted == 1);

  /* Read-only data stays read-only when it goes out again. */
  TetherDLManagedTensorVersioned* ro = calloc(1, sizeof(*ro));
  ro->version.major = 1;
  ro->flags = TETHER_DLPACK_FLAG_READ_ONLY;
  ro->dl_tensor = cpu_f32();
  ro->deleter = count_deleter_versioned;
  CHECK(TVMFFITensorFromDLPackVersioned(ro, 0, 0, &t) == 0);
  TetherDLManagedTensor* legacy = NULL;
  CHECK(TVMFFITensorToDLPack(t, &legacy) == 0 && legacy->dl_tensor.shape == g_shape);
  CHECK(TVMFFITensorToDLPackVersioned(t, &v) == 0 && (v->flags & TETHER_DLPACK_FLAG_READ_ONLY));
  TVMFFIObjectDecRef(t);
  legacy->deleter(legacy);
  CHECK(g_deleted == 1);
  v->deleter(v);
  CHECK(g_deleted == 2);

  /* A view over the last row keeps its source. */
  m = calloc(1, sizeof(*m));
  m->dl_tensor = cpu_f32();
  m->deleter = count_deleter;
  CHECK(TVMFFITensorFromDLPack(m, 0, 0, &t) == 0);
  TetherDLTensor proto = *TetherTensorDLTensor(t);
  int64_t row_shape[1] = {3}, row_strides[1] = {1};
  proto.data = g_data + 3;
  proto.ndim = 1;
  proto.shape = row_shape;
  proto.strides = row_strides;
  TVMFFIObjectHandle view = NULL;
  CHECK(TVMFFITensorCreateUnsafeView(t, &proto, &view) == 0);
  TVMFFIObjectDecRef(t);
  CHECK(g_deleted == 2);
  TetherDLTensor* vdl = TetherTensorDLTensor(view);
  CHECK(vdl->shape != row_shape && vdl->shape[0] == 3 && ((float*)vdl->data)[2] == 5.0f);
  TVMFFIObjectDecRef(view);
  CHECK(g_deleted == 3);

  /* Refused: the caller keeps ownership and no deleter runs. */
  int64_t transposed[2] = {1, 2};
  m = calloc(1, sizeof(*m));
  m->dl_tensor = cpu_f32();
  m->dl_tensor.strides = transposed;
  m->deleter = count_deleter;
  CHECK(TVMFFITensorFromDLPack(m, 0, 1, &t) != 0);
  CHECK(raised_matches("RuntimeError", "FromDLPack: Tensor is not contiguous."));
  m->dl_tensor.strides = NULL;
  m->dl_tensor.data = (char*)g_data + 2;
  CHECK(TVMFFITensorFromDLPack(m, 4, 0, &t) != 0);
  CHECK(raised_matches("RuntimeError", "FromDLPack: Data is not aligned to 4 bytes."));
  CHECK(g_deleted == 3);
  m->deleter(m);
  CHECK(g_deleted == 4);

  CHECK(TVMFFITensorFromDLPack(NULL, 0, 0, &t) != 0 && raised_matches("ValueError", "NULL"));
  CHECK(TVMFFITensorFromDLPackVersioned(NULL, 0, 0, &t) != 0 && raised_matches("ValueError", "NULL"));
  CHECK(TVMFFITensorToDLPack(NULL, &legacy) != 0 && raised_matches("ValueError", "NULL"));
  TVMFFIByteArray name = ba("testing.echo");
  TVMFFIObjectHandle fn = NULL;
  CHECK(TVMFFIFunctionGetGlobal(&name, &fn) == 0);
  CHECK(TVMFFITensorToDLPackVersioned(fn, &v) != 0 && raised_matches("TypeError", "expected ffi.Tensor"));
  CHECK(TVMFFITensorCreateUnsafeView(fn, &proto, &view) != 0 && raised_matches("TypeError", "ffi.Tensor"));
  TVMFFIObjectDecRef(fn);
}

static void test_dtype_strings(void) {
  const char* names[] = {"float32", "int8x4", "bool", "handle", "bfloat16", "float8_e4m3fn",
                         "float8_e5m2", "float4_e2m1fnx2", "int32xvscalex4", "uint1"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
    TVMFFIByteArray s = ba(names[i]);
    TetherDLDataType d;
    TVMFFIAny out;
    CHECK(TVMFFIDataTypeFromString(&s, &d) == 0);
    CHECK(TVMFFIDataTypeToString(&d, &out) == 0);
    CHECK(out.type_index == kTVMFFISmallStr || out.type_index == kTVMFFIStr);
    const char* text = out.type_index == kTVMFFISmallStr ? out.v_bytes : TetherBytesCell(out.v_obj)->data;
    size_t len = out.type_index == kTVMFFISmallStr ? out.small_str_len : TetherBytesCell(out.v_obj)->size;
    CHECK(len == strlen(names[i]) && memcmp(text, names[i], len) == 0);
    if (out.type_index == kTVMFFIStr) TVMFFIObjectDecRef(out.v_obj);
  }
  TVMFFIByteArray bad = ba("float8_e9m9");
  TetherDLDataType d;
  CHECK(TVMFFIDataTypeFromString(&bad, &d) != 0 && raised_matches("ValueError", "unknown float8 type"));
  CHECK(TVMFFIDataTypeFromString(NULL, &d) != 0 && raised_matches("ValueError", "NULL"));
}

static int g_env_freed = 0;
static void env_deleter(TetherDLManagedTensorVersioned* self) {
  free(self->dl_tensor.data);
  free(self->dl_tensor.shape);
  free(self);
  ++g_env_freed;
}
static int malloc_allocator(TetherDLTensor* prototype, TetherDLManagedTensorVersioned** out,
                            void* error_ctx, void (*set_error)(void*, const char*, const char*)) {
  if (prototype->device.device_type != 1) {
    set_error(error_ctx, "ValueError", "malloc_allocator: CPU only");
    return -5;
  }
  TetherDLManagedTensorVersioned* m = calloc(1, sizeof(*m));
  size_t n = 1;
  m->dl_tensor = *prototype;
  m->dl_tensor.shape = malloc(sizeof(int64_t) * (size_t)prototype->ndim);
  for (int i = 0; i < prototype->ndim; ++i) {
    m->dl_tensor.shape[i] = prototype->shape[i];
    n *= (size_t)prototype->shape[i];
  }
  m->dl_tensor.strides = NULL;
  m->dl_tensor.data = calloc(n, prototype->dtype.bits / 8);
  m->version.major = 1;
  m->deleter = env_deleter;
  *out = m;
  return 0;
}

static void test_env(void) {
  TVMFFIStreamHandle old = (void*)1;
  CHECK(TVMFFIEnvGetStream(2, 3) == NULL);
  CHECK(TVMFFIEnvSetStream(2, 3, (void*)0x77, &old) == 0 && old == NULL);
  CHECK(TVMFFIEnvGetStream(2, 3) == (void*)0x77 && TVMFFIEnvGetStream(2, 0) == NULL);

  TetherDLTensor proto = cpu_f32();
  TVMFFIObjectHandle t = NULL;
  CHECK(TVMFFIEnvTensorAlloc(&proto, &t) != 0 && raised_matches("RuntimeError", "allocator is nullptr"));
  TetherDLPackManagedTensorAllocator prev = malloc_allocator;
  CHECK(TVMFFIEnvSetDLPackManagedTensorAllocator(malloc_allocator, 0, &prev) == 0 && prev == NULL);
  CHECK(TVMFFIEnvGetDLPackManagedTensorAllocator() == malloc_allocator);
  CHECK(TVMFFIEnvTensorAlloc(&proto, &t) == 0);
  TetherDLTensor* dl = TetherTensorDLTensor(t);
  CHECK(dl->ndim == 2 && dl->shape[1] == 3 && dl->strides[0] == 3 && dl->data != NULL);
  TVMFFIObjectDecRef(t);
  CHECK(g_env_freed == 1);
  proto.device.device_type = 2;
  CHECK(TVMFFIEnvTensorAlloc(&proto, &t) == -5 && raised_matches("ValueError", "CPU only"));
  CHECK(TVMFFIEnvSetDLPackManagedTensorAllocator(NULL, 0, NULL) == 0);
}

int main(void) {
  test_dlpack();
  test_dtype_strings();
  test_env();
  return report();
}
