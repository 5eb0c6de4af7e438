/*
 * tether/c_api.h — the C ABI of libtether_core.
 *
 * tether implements TVM-FFI's C ABI: the names, struct layouts, type
 * indices and calling conventions below are TVM-FFI's, so code compiled
 * against TVM-FFI's C ABI links and runs against libtether_core unchanged.
 * This header is tether's own description of that ABI.
 *
 * Conventions
 *  - Functions returning int return 0 on success. On failure they return
 *    nonzero and leave an Error object in the calling thread's raised-error
 *    slot; take it with TVMFFIErrorMoveFromRaised.
 *  - A TVMFFIObjectHandle points at a TVMFFIObject. Handles returned
 *    through an out-parameter carry one strong reference the caller owns.
 *  - TVMFFIAny is either a view (borrowed) or owned; owned values with an
 *    object type index own one strong reference.
 */
#ifndef TETHER_C_API_H_
#define TETHER_C_API_H_

#include <stddef.h>
#include <stdint.h>

#if defined(_MSC_VER)
#if defined(TETHER_CORE_EXPORTS)
#define TETHER_DLL __declspec(dllexport)
#else
#define TETHER_DLL __declspec(dllimport)
#endif
#else
#define TETHER_DLL __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ----------------------------------------------------------- */

/* The ABI version implemented (TVM-FFI's numbering). */
#define TETHER_FFI_ABI_VERSION_MAJOR 0
#define TETHER_FFI_ABI_VERSION_MINOR 1
#define TETHER_FFI_ABI_VERSION_PATCH 16

typedef struct {
  uint32_t major;
  uint32_t minor;
  uint32_t patch;
} TVMFFIVersion;

TETHER_DLL void TVMFFIGetVersion(TVMFFIVersion* out_version);

/* ---- type indices ------------------------------------------------------ */

/* Values below kTVMFFIStaticObjectBegin are plain data carried inside an
 * Any; values at or above it are objects. Indices from
 * kTVMFFIDynObjectBegin on are handed out at run time. */
enum {
  kTVMFFIAny = -1,
  kTVMFFINone = 0,
  kTVMFFIInt = 1,
  kTVMFFIBool = 2,
  kTVMFFIFloat = 3,
  kTVMFFIOpaquePtr = 4,
  kTVMFFIDataType = 5,
  kTVMFFIDevice = 6,
  kTVMFFIDLTensorPtr = 7,
  kTVMFFIRawStr = 8,
  kTVMFFIByteArrayPtr = 9,
  kTVMFFIObjectRValueRef = 10,
  kTVMFFISmallStr = 11,
  kTVMFFISmallBytes = 12,
  kTVMFFIUnchanged = 13,
  kTVMFFIStaticObjectBegin = 64,
  kTVMFFIObject = 64,
  kTVMFFIStr = 65,
  kTVMFFIBytes = 66,
  kTVMFFIError = 67,
  kTVMFFIFunction = 68,
  kTVMFFIShape = 69,
  kTVMFFITensor = 70,
  kTVMFFIArray = 71,
  kTVMFFIMap = 72,
  kTVMFFIModule = 73,
  kTVMFFIOpaquePyObject = 74,
  kTVMFFIList = 75,
  kTVMFFIDict = 76,
  kTVMFFIVisitInterrupt = 77,
  kTVMFFIBigInt = 78,
  kTVMFFIStaticObjectEnd = 79,
  kTVMFFIDynObjectBegin = 128
};

/* ---- objects ----------------------------------------------------------- */

typedef void* TVMFFIObjectHandle;

/* Flags passed to an object's deleter: Strong = destroy the contents (strong
 * count reached zero); Weak = free the storage (weak count reached zero). */
enum {
  kTVMFFIObjectDeleterFlagBitMaskStrong = 1 << 0,
  kTVMFFIObjectDeleterFlagBitMaskWeak = 1 << 1,
  kTVMFFIObjectDeleterFlagBitMaskBoth = (1 << 0) | (1 << 1)
};

/* The header at the start of every object (24 bytes).
 * combined_ref_count: strong count in the low 32 bits, weak count in the
 * high 32 bits; a new object starts at strong 1, weak 1.
 * __padding: zero for objects built by upstream headers; tether sets
 * TETHER_OBJECT_MARKER_REGISTRY_ALLOCATED on objects allocated through the
 * allocator registry. */
typedef struct {
  uint64_t combined_ref_count;
  int32_t type_index;
  uint32_t __padding;
  union {
    void (*deleter)(void* self, int flags);
    int64_t __ensure_align;
  };
} TVMFFIObject;

/* Bit in TVMFFIObject.__padding: a TVMFFIObjectAllocHeader precedes the
 * object. Read the header only when this bit is set. */
#define TETHER_OBJECT_MARKER_REGISTRY_ALLOCATED 1u

TETHER_DLL int TVMFFIObjectIncRef(TVMFFIObjectHandle obj);
TETHER_DLL int TVMFFIObjectDecRef(TVMFFIObjectHandle obj);

/* ---- values ------------------------------------------------------------ */

typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} TetherDLDataType; /* same layout as DLPack's DLDataType */

typedef struct {
  int32_t device_type;
  int32_t device_id;
} TetherDLDevice; /* same layout as DLPack's DLDevice */

/* A tagged 16-byte value. Small strings/bytes (up to 7 bytes) live in
 * v_bytes with their length in small_str_len. */
typedef struct {
  int32_t type_index;
  union {
    uint32_t zero_padding;
    uint32_t small_str_len;
  };
  union {
    int64_t v_int64;
    double v_float64;
    void* v_ptr;
    const char* v_c_str;
    TVMFFIObject* v_obj;
    TetherDLDataType v_dtype;
    TetherDLDevice v_device;
    char v_bytes[8];
    uint64_t v_uint64;
  };
} TVMFFIAny;

typedef struct {
  const char* data;
  size_t size;
} TVMFFIByteArray;

/* Own whatever a view refers to: raw C strings and byte-array pointers
 * become String/Bytes values, objects gain a reference, an rvalue reference
 * moves its object out (nulling the referenced slot). */
TETHER_DLL int TVMFFIAnyViewToOwnedAny(const TVMFFIAny* any_view, TVMFFIAny* out);

TETHER_DLL int TVMFFIStringFromByteArray(const TVMFFIByteArray* input, TVMFFIAny* out);
TETHER_DLL int TVMFFIBytesFromByteArray(const TVMFFIByteArray* input, TVMFFIAny* out);

/* ---- object cells (what follows the header) ---------------------------- */

/* String and Bytes objects: header, then this, then the NUL-terminated text. */
/* Shape objects: header, then this, then the dims. */
typedef struct {
  const int64_t* data;
  size_t size;
} TVMFFIShapeCell;

/* Array and List objects: header, then this. Array stores its TVMFFIAny
 * elements in place after the cell; List in a separate buffer released by
 * data_deleter. */
typedef struct {
  void* data;
  int64_t size;
  int64_t capacity;
  void (*data_deleter)(void*);
} TVMFFISeqCell;

enum { kTVMFFIBacktraceUpdateModeReplace = 0, kTVMFFIBacktraceUpdateModeAppend = 1 };

/* Error objects: header, then this. */
typedef struct {
  TVMFFIByteArray kind;
  TVMFFIByteArray message;
  TVMFFIByteArray backtrace;
  void (*update_backtrace)(TVMFFIObjectHandle self, const TVMFFIByteArray* backtrace,
                           int32_t update_mode);
  TVMFFIObjectHandle cause_chain;
  TVMFFIObjectHandle extra_context;
} TVMFFIErrorCell;

/* The packed calling convention: `handle` is the Function object itself. */
typedef int (*TVMFFISafeCallType)(void* handle, const TVMFFIAny* args, int32_t num_args,
                                  TVMFFIAny* result);

/* Function objects: header, then this. */
typedef struct {
  TVMFFISafeCallType safe_call;
  void* cpp_call;
} TVMFFIFunctionCell;

/* Opaque objects: header, then this. */
typedef struct {
  void* handle;
} TVMFFIOpaqueObjectCell;

/* Wrap a foreign handle as an object of an opaque type (for example
 * kTVMFFIOpaquePyObject); `deleter(handle)` runs when the object dies. */
TETHER_DLL int TVMFFIObjectCreateOpaque(void* handle, int32_t type_index,
                                        void (*deleter)(void* handle), TVMFFIObjectHandle* out);

/* ---- the allocator registry --------------------------------------------- */

/* Immediately precedes every object body allocated through the registry;
 * delete_space(body) reclaims the whole block when the weak count reaches 0. */
typedef struct {
  void (*delete_space)(void* ptr);
} TVMFFIObjectAllocHeader;

/* allocate(size, alignment, type_index, context) returns a body of `size`
 * bytes aligned to `alignment`, preceded by a filled-in
 * TVMFFIObjectAllocHeader, or NULL on failure. */
typedef struct {
  void* (*allocate)(size_t size, size_t alignment, int32_t type_index, void* context);
  void* context;
} TVMFFICustomAllocator;

/* The installed allocator; never NULL. */
TETHER_DLL TVMFFICustomAllocator* TVMFFIGetCustomAllocator(void);
/* Install `allocator` (it must outlive the process), or NULL for the
 * builtin one. Install once, before objects are created concurrently. */
TETHER_DLL int TVMFFISetCustomAllocator(TVMFFICustomAllocator* allocator);

/* ---- functions and errors ---------------------------------------------- */

TETHER_DLL int TVMFFIFunctionCreate(void* self, TVMFFISafeCallType safe_call,
                                    void (*deleter)(void* self), TVMFFIObjectHandle* out);
/* `result` must be initialised to None by the caller. */
TETHER_DLL int TVMFFIFunctionCall(TVMFFIObjectHandle func, TVMFFIAny* args, int32_t num_args,
                                  TVMFFIAny* result);
/* *out is NULL when no function has that name. */
TETHER_DLL int TVMFFIFunctionGetGlobal(const TVMFFIByteArray* name, TVMFFIObjectHandle* out);
TETHER_DLL int TVMFFIFunctionSetGlobal(const TVMFFIByteArray* name, TVMFFIObjectHandle f,
                                       int allow_override);

TETHER_DLL void TVMFFIErrorMoveFromRaised(TVMFFIObjectHandle* result);
TETHER_DLL void TVMFFIErrorSetRaised(TVMFFIObjectHandle error);
TETHER_DLL void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* message);
TETHER_DLL void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** message_parts,
                                                  int32_t num_parts);
TETHER_DLL int TVMFFIErrorCreate(const TVMFFIByteArray* kind, const TVMFFIByteArray* message,
                                 const TVMFFIByteArray* backtrace, TVMFFIObjectHandle* out);
TETHER_DLL int TVMFFIErrorCreateWithCauseAndExtraContext(
    const TVMFFIByteArray* kind, const TVMFFIByteArray* message, const TVMFFIByteArray* backtrace,
    TVMFFIObjectHandle cause_chain, TVMFFIObjectHandle extra_context, TVMFFIObjectHandle* out);
/* The calling thread's backtrace up to the FFI boundary (cross_ffi_boundary
 * 0) or of the whole stack, at most TVM_TRACEBACK_LIMIT frames (512 when
 * unset), the caller's own frame given by filename/lineno/func when not
 * NULL; most recent call first. Valid until the thread's next call. The
 * native frames are unresolved placeholders (TetherFFIBacktraceResolve). */
TETHER_DLL const TVMFFIByteArray* TVMFFIBacktrace(const char* filename, int lineno,
                                                  const char* func, int cross_ffi_boundary);

/* ---- reflection -------------------------------------------------------- */

typedef int (*TVMFFIFieldGetter)(void* field, TVMFFIAny* result);
typedef int (*TVMFFIFieldSetter)(void* field, const TVMFFIAny* value);
typedef int (*TVMFFIObjectCreator)(TVMFFIObjectHandle* result);

enum {
  kTVMFFIFieldFlagBitMaskWritable = 1 << 0,
  kTVMFFIFieldFlagBitMaskHasDefault = 1 << 1,
  kTVMFFIFieldFlagBitMaskIsStaticMethod = 1 << 2,
  kTVMFFIFieldFlagBitMaskSEqHashIgnore = 1 << 3,
  kTVMFFIFieldFlagBitMaskSEqHashDefPattern = 1 << 4,
  kTVMFFIFieldFlagBitMaskDefaultFromFactory = 1 << 5,
  kTVMFFIFieldFlagBitMaskReprOff = 1 << 6,
  kTVMFFIFieldFlagBitMaskCompareOff = 1 << 7,
  kTVMFFIFieldFlagBitMaskHashOff = 1 << 8,
  kTVMFFIFieldFlagBitMaskInitOff = 1 << 9,
  kTVMFFIFieldFlagBitMaskKwOnly = 1 << 10,
  /* `setter` is a Function handle called as setter(field_addr, value). */
  kTVMFFIFieldFlagBitSetterIsFunctionObj = 1 << 11,
  kTVMFFIFieldFlagBitMaskSEqHashDefSimple = 1 << 12
};

typedef struct {
  TVMFFIByteArray name;
  TVMFFIByteArray doc;
  TVMFFIByteArray metadata;
  int64_t flags;
  int64_t size;
  int64_t alignment;
  int64_t offset;
  TVMFFIFieldGetter getter;
  void* setter;
  TVMFFIAny default_value_or_factory;
  int32_t field_static_type_index;
} TVMFFIFieldInfo;

typedef struct {
  TVMFFIByteArray name;
  TVMFFIByteArray doc;
  TVMFFIByteArray metadata;
  int64_t flags;
  TVMFFIAny method;
} TVMFFIMethodInfo;

typedef struct {
  TVMFFIByteArray doc;
  TVMFFIObjectCreator creator;
  int32_t total_size;
  int32_t structural_eq_hash_kind;
} TVMFFITypeMetadata;

typedef struct {
  const TVMFFIAny* data;
  int32_t size;
  int32_t begin_index;
} TVMFFITypeAttrColumn;

typedef struct TVMFFITypeInfo {
  int32_t type_index;
  int32_t type_depth;
  TVMFFIByteArray type_key;
  /* type_ancestors[d] is the ancestor at depth d, for d < type_depth. */
  const struct TVMFFITypeInfo** type_ancestors;
  uint64_t type_key_hash;
  int32_t num_fields;
  int32_t num_methods;
  const TVMFFIFieldInfo* fields;
  const TVMFFIMethodInfo* methods;
  const TVMFFITypeMetadata* metadata;
} TVMFFITypeInfo;

TETHER_DLL int TVMFFITypeKeyToIndex(const TVMFFIByteArray* type_key, int32_t* out_tindex);
/* Returns the type's index, registering it when new (static_type_index >= 0
 * fixes it below kTVMFFIDynObjectBegin, -1 allocates one). parent_type_index
 * -1 makes a root (static indices only); -2 only queries and returns -2 when
 * the key is unknown. Returns -1 on error.
 * A type owns num_child_slots + 1 consecutive indices: its own, then the
 * ones its subtypes take first (compiled type checks treat that whole range
 * as the type). A subtype that no longer fits takes fresh indices past all
 * others if child_slots_can_overflow held for the parent and every ancestor,
 * and is refused with an error otherwise. */
TETHER_DLL int32_t TVMFFITypeGetOrAllocIndex(const TVMFFIByteArray* type_key,
                                             int32_t static_type_index, int32_t type_depth,
                                             int32_t num_child_slots,
                                             int32_t child_slots_can_overflow,
                                             int32_t parent_type_index);
/* Every static index has an entry (the POD indices 0..13 as depth-0 types
 * keyed "None", "int", ..., as in TVM-FFI); NULL for an unknown index. */
TETHER_DLL const TVMFFITypeInfo* TVMFFIGetTypeInfo(int32_t type_index);
/* The getter may be NULL: the field is then described but not readable. */
TETHER_DLL int TVMFFITypeRegisterField(int32_t type_index, const TVMFFIFieldInfo* info);
TETHER_DLL int TVMFFITypeRegisterMethod(int32_t type_index, const TVMFFIMethodInfo* info);
TETHER_DLL int TVMFFITypeRegisterMetadata(int32_t type_index, const TVMFFITypeMetadata* metadata);
/* type_index == kTVMFFINone only makes sure the column exists. */
TETHER_DLL int TVMFFITypeRegisterAttr(int32_t type_index, const TVMFFIByteArray* attr_name,
                                      const TVMFFIAny* attr_value);
/* The columns TVM-FFI creates at start-up ("__ffi_init__", "__s_hash__",
 * ...) exist from the start, possibly empty; NULL for a name nobody
 * registered. */
TETHER_DLL const TVMFFITypeAttrColumn* TVMFFIGetTypeAttrColumn(const TVMFFIByteArray* attr_name);
TETHER_DLL int TVMFFIFunctionSetGlobalFromMethodInfo(const TVMFFIMethodInfo* method_info,
                                                     int allow_override);

/* ---- tensors and DLPack ------------------------------------------------ */

/* DLPack 1.x layouts. When dlpack/dlpack.h is included first, the Tether*
 * names are its types; otherwise they are defined here with the same
 * layout (pinned by tests/c/abi_test.c), so either header works. */
#if defined(DLPACK_MAJOR_VERSION)
typedef DLPackVersion TetherDLPackVersion;
typedef DLTensor TetherDLTensor;
typedef DLManagedTensor TetherDLManagedTensor;
typedef DLManagedTensorVersioned TetherDLManagedTensorVersioned;
#else
typedef struct {
  uint32_t major;
  uint32_t minor;
} TetherDLPackVersion;

/* data + byte_offset is the first element; strides == NULL means compact
 * row-major; shape and strides hold ndim entries. */
typedef struct {
  void* data;
  TetherDLDevice device;
  int32_t ndim;
  TetherDLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} TetherDLTensor;

/* Pre-1.0 form: whoever ends up owning it calls deleter(self) once. */
typedef struct TetherDLManagedTensor {
  TetherDLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct TetherDLManagedTensor* self);
} TetherDLManagedTensor;

/* 1.x form, with a version and flags (TETHER_DLPACK_FLAG_*). */
typedef struct TetherDLManagedTensorVersioned {
  TetherDLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct TetherDLManagedTensorVersioned* self);
  uint64_t flags;
  TetherDLTensor dl_tensor;
} TetherDLManagedTensorVersioned;
#endif

#define TETHER_DLPACK_MAJOR_VERSION 1
#define TETHER_DLPACK_MINOR_VERSION 3
#define TETHER_DLPACK_FLAG_READ_ONLY (1ULL << 0)
#define TETHER_DLPACK_FLAG_IS_COPIED (1ULL << 1)
#define TETHER_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED (1ULL << 2)

/* An ffi.Tensor (kTVMFFITensor) is a TVMFFIObject immediately followed by
 * a TetherDLTensor describing its data. */
static inline TetherDLTensor* TetherTensorDLTensor(TVMFFIObjectHandle obj) {
  return (TetherDLTensor*)((char*)obj + sizeof(TVMFFIObject));
}

/* Wrap a managed tensor in a new Tensor. On success the Tensor owns it and
 * calls its deleter exactly once, when the Tensor is destroyed; the Tensor
 * uses the producer's shape (and strides; compact strides are computed when
 * they are NULL). On failure nothing changed: the caller still owns it.
 * require_alignment (0 = none) must divide data + byte_offset (on devices
 * addressed directly: CPU, CUDA, CUDA host/managed, ROCm, ROCm host) or
 * byte_offset (elsewhere), else RuntimeError "FromDLPack: Data is not aligned
 * to N bytes."; require_contiguous != 0 demands a compact row-major layout,
 * else RuntimeError "FromDLPack: Tensor is not contiguous.". The versioned
 * form also refuses sub-byte-padded data and a major version other than 1,
 * and keeps the read-only and copied flags. */
TETHER_DLL int TVMFFITensorFromDLPack(TetherDLManagedTensor* from, int32_t require_alignment,
                                      int32_t require_contiguous, TVMFFIObjectHandle* out);
TETHER_DLL int TVMFFITensorFromDLPackVersioned(TetherDLManagedTensorVersioned* from,
                                               int32_t require_alignment,
                                               int32_t require_contiguous,
                                               TVMFFIObjectHandle* out);
/* A new managed tensor over the Tensor's memory; it holds a reference on
 * the Tensor, released by its deleter. The versioned form reports version
 * 1.3 and the flags the data came with. */
TETHER_DLL int TVMFFITensorToDLPack(TVMFFIObjectHandle from, TetherDLManagedTensor** out);
TETHER_DLL int TVMFFITensorToDLPackVersioned(TVMFFIObjectHandle from,
                                             TetherDLManagedTensorVersioned** out);
/* A Tensor with the prototype's data pointer, dtype, device, shape, strides
 * and byte_offset (shape and strides copied) that keeps `source` alive. The
 * prototype's data must lie in source's memory: that is not checked. */
TETHER_DLL int TVMFFITensorCreateUnsafeView(TVMFFIObjectHandle source,
                                            const TetherDLTensor* prototype,
                                            TVMFFIObjectHandle* out);

/* ---- data type strings ------------------------------------------------- */

/* "float32", "int8x4", "bool", "handle", "bfloat16", "float8_e4m3fn",
 * "float4_e2m1fnx2", "int32xvscalex4", "" or "void" (code 3, 0 bits, 0
 * lanes), and the short forms "i8", "u8", "f32", "bf16", "fp8_e5m2".
 * Unknown strings raise ValueError. */
TETHER_DLL int TVMFFIDataTypeFromString(const TVMFFIByteArray* str, TetherDLDataType* out);
/* *out becomes an owned str value (small or a String object). */
TETHER_DLL int TVMFFIDataTypeToString(const TetherDLDataType* dtype, TVMFFIAny* out);

/* ---- execution environment --------------------------------------------- */

typedef void* TVMFFIStreamHandle;

/* Allocates a tensor like prototype (dtype, ndim, shape, device); on failure
 * calls SetError(error_ctx, kind, message) and returns nonzero. */
typedef int (*TetherDLPackManagedTensorAllocator)(
    TetherDLTensor* prototype, TetherDLManagedTensorVersioned** out, void* error_ctx,
    void (*SetError)(void* error_ctx, const char* kind, const char* message));

/* The calling thread's stream per (device type, device id), NULL until set;
 * the previous one is returned through opt_out_original_stream. */
TETHER_DLL int TVMFFIEnvSetStream(int32_t device_type, int32_t device_id,
                                  TVMFFIStreamHandle stream,
                                  TVMFFIStreamHandle* opt_out_original_stream);
TETHER_DLL TVMFFIStreamHandle TVMFFIEnvGetStream(int32_t device_type, int32_t device_id);
/* Sets the calling thread's allocator, and the process-wide fallback too
 * when write_to_global_context != 0; returns the thread's previous one. */
TETHER_DLL int TVMFFIEnvSetDLPackManagedTensorAllocator(
    TetherDLPackManagedTensorAllocator allocator, int write_to_global_context,
    TetherDLPackManagedTensorAllocator* opt_out_original_allocator);
/* The thread's allocator, else the process-wide one, else NULL. */
TETHER_DLL TetherDLPackManagedTensorAllocator TVMFFIEnvGetDLPackManagedTensorAllocator(void);
/* A Tensor allocated by the current allocator (RuntimeError when there is
 * none); the allocator's failure code and error pass through. */
TETHER_DLL int TVMFFIEnvTensorAlloc(TetherDLTensor* prototype, TVMFFIObjectHandle* out);

/* The host environment's C entry points, by their CPython names:
 * "PyErr_CheckSignals", "PyGILState_Ensure", "PyGILState_Release" (any
 * other name is a ValueError). CheckSignals returns 0 when nothing is
 * registered or no signal is pending, -1 when the registered check failed
 * (the host has set its own error). */
TETHER_DLL int TVMFFIEnvRegisterCAPI(const char* name, void* symbol);
TETHER_DLL int TVMFFIEnvCheckSignals(void);

/* ---- modules: symbols a loaded library reaches ------------------------- */

/* Functions a library registers for the system library (ffi.SystemLib),
 * under their full symbol names ("__tvm_ffi_<name>"). */
TETHER_DLL int TVMFFIEnvModRegisterSystemLibSymbol(const char* name, void* symbol);
/* A pointer stored, at load time, into every library that defines a
 * void* variable of that name (later loads only). */
TETHER_DLL int TVMFFIEnvModRegisterContextSymbol(const char* name, void* symbol);
/* Function func_name as seen from the library whose context (the value
 * the loader stored in its __tvm_ffi__library_ctx) is library_ctx: from
 * the module's imports, depth first, else the global registry. *out is
 * borrowed: the module keeps it alive. */
TETHER_DLL int TVMFFIEnvModLookupFromImports(TVMFFIObjectHandle library_ctx, const char* func_name,
                                             TVMFFIObjectHandle* out);

/* ---- tether's own entries (not part of TVM-FFI's ABI) ------------------ */

/* A new Array (type_index kTVMFFIArray) or List (kTVMFFIList) of the n owned
 * values at items, in *out (a new reference). On success the container
 * owns the values and the caller must not release them; on failure (a bad
 * argument, a view kind such as a raw string among the values, memory)
 * nothing was taken. For frontends converting a whole sequence at once. */
TETHER_DLL int TetherFFISeqFromOwned(TVMFFIAny* items, int64_t n, int32_t type_index, TVMFFIObjectHandle* out);

/* Backtraces (TVMFFIBacktrace, an Error's backtrace) hold their native
 * frames as addresses, placeholder lines that cost nothing to write:
 *   File "<unresolved>", line 0, in 0x7f3a12345678
 * This resolves them: *out is text with every such line replaced by the
 * frames at that address (File "src.cc", line 12, in fn), other lines
 * unchanged; it lives in a thread-local buffer, valid until the calling
 * thread's next call. Resolved addresses are cached for the process. */
TETHER_DLL int TetherFFIBacktraceResolve(const TVMFFIByteArray* text, TVMFFIByteArray* out);
/* Backtraces taken in code that `function` calls stop at its frame, as they
 * stop at TVMFFIFunctionCall's: for a frontend that calls a Function's
 * safe_call directly. `function` is the function's entry address. */
TETHER_DLL int TetherFFIBacktraceAddBoundary(const void* function);

/* ---- arbitrary-precision integers (ffi.BigInt) ------------------------- */

/* An integer from whole native-endian 64-bit words, least significant
 * first, two's complement (empty: zero). Values that fit in 64 bits come
 * back as int, others as an owned ffi.BigInt (header, size_t word count,
 * then the words, canonical). ValueError when the size is not a multiple
 * of 8. */
TETHER_DLL int TVMFFIBigIntFromByteArray(const TVMFFIByteArray* input, TVMFFIAny* out);
/* The words of an int or ffi.BigInt value, borrowed from the value itself
 * (an int's own payload slot). For anything else {NULL, 0}, with a
 * TypeError raised. */
TETHER_DLL TVMFFIByteArray TVMFFIBigIntGetContentByteArray(const TVMFFIAny* value);

/* ---- one-time handles -------------------------------------------------- */

/* InitOnce: an init_func that succeeds with a NULL result is an error; a
 * nonzero init_func return passes through. DeinitOnce clears the slot
 * before calling deinit_func and passes its return code through. */
TETHER_DLL int TVMFFIHandleInitOnce(void** handle_addr, int (*init_func)(void** result));
TETHER_DLL int TVMFFIHandleDeinitOnce(void** handle_addr, int (*deinit_func)(void* handle));

/* ---- accessors for the cells ------------------------------------------- */

static inline TVMFFIByteArray* TetherBytesCell(TVMFFIObjectHandle obj) {
  return (TVMFFIByteArray*)((char*)obj + sizeof(TVMFFIObject));
}
static inline TVMFFISeqCell* TetherSeqCell(TVMFFIObjectHandle obj) {
  return (TVMFFISeqCell*)((char*)obj + sizeof(TVMFFIObject));
}
static inline TVMFFIErrorCell* TetherErrorCell(TVMFFIObjectHandle obj) {
  return (TVMFFIErrorCell*)((char*)obj + sizeof(TVMFFIObject));
}
static inline TVMFFIFunctionCell* TetherFunctionCell(TVMFFIObjectHandle obj) {
  return (TVMFFIFunctionCell*)((char*)obj + sizeof(TVMFFIObject));
}
static inline TVMFFIOpaqueObjectCell* TetherOpaqueCell(TVMFFIObjectHandle obj) {
  return (TVMFFIOpaqueObjectCell*)((char*)obj + sizeof(TVMFFIObject));
}
static inline TVMFFIShapeCell* TetherShapeCell(TVMFFIObjectHandle obj) {
  return (TVMFFIShapeCell*)((char*)obj + sizeof(TVMFFIObject));
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TETHER_C_API_H_ */
