// The C++ entry points of TVM-FFI's library that code compiled against
// TVM-FFI's headers links to (structural equality and hashing, JSON, repr,
// deep copy, JSON graphs), implemented over the Rust core.
//
// Each entry point is defined here as an extern "C" function named
// tether_shim_<Class>_<Name> with the C++ parameter and return types of
// its TVM-FFI declaration (library_surface.h; the static_asserts below tie
// each definition to that declaration's type). The exported symbol, with
// TVM-FFI's mangled name, is a tail-jump trampoline in Rust
// (src/cxx_shim/exports.rs): a cdylib only exports what Rust defines,
// and a jump forwards every argument register, the hidden result pointer
// included, unchanged. The work itself is done by the core's
// tether_cxx_* bridge functions (src/cxx_shim/mod.rs), which follow the
// packed safe-call convention: borrowed arguments, an owned result,
// 0 or a nonzero code with the error raised.
//
// Errors: a failed bridge call is rethrown as tvm::ffi::Error holding the
// raised ffi.Error, as TVM-FFI's own implementations throw; exceptions
// never leave through the C bridge.
#include "library_surface.h"

#include <cstring>
#include <initializer_list>
#include <type_traits>

extern "C" {
int tether_cxx_structural_equal(const TetherCxxAny* args, int32_t num_args, TetherCxxAny* result);
int tether_cxx_first_mismatch(const TetherCxxAny* args, int32_t num_args, TetherCxxAny* result);
int tether_cxx_structural_hash(const TetherCxxAny* args, int32_t num_args, TetherCxxAny* result);
int tether_cxx_json_parse(const TetherCxxAny* args, int32_t num_args, TetherCxxAny* result);
int tether_cxx_json_stringify(const TetherCxxAny* args, int32_t num_args, TetherCxxAny* result);
int tether_cxx_repr_print(const TetherCxxAny* args, int32_t num_args, TetherCxxAny* result);
int tether_cxx_deep_copy(const TetherCxxAny* args, int32_t num_args, TetherCxxAny* result);
int tether_cxx_to_json_graph(const TetherCxxAny* args, int32_t num_args, TetherCxxAny* result);
int tether_cxx_from_json_graph(const TetherCxxAny* args, int32_t num_args, TetherCxxAny* result);
int tether_cxx_recursive_compare(const TetherCxxAny* args, int32_t num_args, TetherCxxAny* result);
int tether_cxx_recursive_hash(const TetherCxxAny* args, int32_t num_args, TetherCxxAny* result);
int tether_cxx_find_access_paths(const TetherCxxAny* args, int32_t num_args, TetherCxxAny* result);
}

namespace tvm {
namespace ffi {

// ErrorObj: the object header (24 bytes), then kind and message.
const char* Error::what() const noexcept {
  const TetherCxxByteArray* message =
      reinterpret_cast<const TetherCxxByteArray*>(static_cast<const char*>(data_) + 24 + 16);
  return message->data;
}

}  // namespace ffi
}  // namespace tvm

namespace {

using tvm::ffi::Any;
using tvm::ffi::String;

using BridgeFn = int (*)(const TetherCxxAny*, int32_t, TetherCxxAny*);

}  // namespace

namespace tether_cxx {

[[noreturn]] void ThrowRaised() {
  void* err = nullptr;
  TVMFFIErrorMoveFromRaised(&err);
  if (err == nullptr) {
    // A bridge function reported failure without an error: build one, so
    // the caller still gets a tvm::ffi::Error.
    TetherCxxByteArray kind{"RuntimeError", 12};
    TetherCxxByteArray message{"tether: a core call failed without raising an error", 51};
    TetherCxxByteArray backtrace{"", 0};
    if (TVMFFIErrorCreate(&kind, &message, &backtrace, &err) != 0 || err == nullptr) std::terminate();
  }
  throw tvm::ffi::Error(err);
}

}  // namespace tether_cxx

namespace {

using tether_cxx::ThrowRaised;

Any Call(BridgeFn fn, std::initializer_list<TetherCxxAny> args) {
  TetherCxxAny result{tvm::ffi::kTetherNone, 0, {0}};
  if (fn(args.begin(), static_cast<int32_t>(args.size()), &result) != 0) ThrowRaised();
  return Any::FromOwned(result);
}

TetherCxxAny Bool(bool v) {
  TetherCxxAny a{tvm::ffi::kTetherBool, 0, {0}};
  a.v_int64 = v ? 1 : 0;
  return a;
}

}  // namespace

extern "C" {

bool tether_shim_StructuralEqual_Equal(const Any& lhs, const Any& rhs, bool map_free_vars,
                                       bool skip_tensor_content) {
  Any r = Call(tether_cxx_structural_equal,
               {lhs.data_, rhs.data_, Bool(map_free_vars), Bool(skip_tensor_content)});
  return r.data_.v_int64 != 0;
}

tvm::ffi::OptionalObjectRef tether_shim_StructuralEqual_GetFirstMismatch(const Any& lhs,
                                                                        const Any& rhs,
                                                                        bool map_free_vars,
                                                                        bool skip_tensor_content) {
  Any r = Call(tether_cxx_first_mismatch,
               {lhs.data_, rhs.data_, Bool(map_free_vars), Bool(skip_tensor_content)});
  if (r.data_.type_index < tvm::ffi::kTetherStaticObjectBegin) return tvm::ffi::OptionalObjectRef();
  void* obj = r.data_.v_obj;
  r.data_ = TetherCxxAny{tvm::ffi::kTetherNone, 0, {0}};  // ownership moves to the result
  return tvm::ffi::OptionalObjectRef(obj);
}

uint64_t tether_shim_StructuralHash_Hash(const Any& value, bool map_free_vars,
                                         bool skip_tensor_content) {
  Any r = Call(tether_cxx_structural_hash, {value.data_, Bool(map_free_vars), Bool(skip_tensor_content)});
  return static_cast<uint64_t>(r.data_.v_int64);
}

// With error_msg, a syntax error is reported there (and None returned)
// instead of thrown; success stores an empty string there.
Any tether_shim_json_Parse(const String& json_str, String* error_msg) {
  TetherCxxAny result{tvm::ffi::kTetherNone, 0, {0}};
  if (tether_cxx_json_parse(&json_str.data_, 1, &result) == 0) {
    if (error_msg != nullptr) {
      TetherCxxByteArray empty{"", 0};
      TetherCxxAny s;
      TVMFFIStringFromByteArray(&empty, &s);
      error_msg->Reset();
      error_msg->data_ = s;
    }
    return Any::FromOwned(result);
  }
  if (error_msg == nullptr) ThrowRaised();
  void* err = nullptr;
  TVMFFIErrorMoveFromRaised(&err);
  tvm::ffi::Error owner(err);  // releases the error at scope exit
  const TetherCxxByteArray* message =
      reinterpret_cast<const TetherCxxByteArray*>(static_cast<const char*>(err) + 24 + 16);
  TetherCxxAny s;
  if (TVMFFIStringFromByteArray(message, &s) != 0) ThrowRaised();
  error_msg->Reset();
  error_msg->data_ = s;
  return Any();
}

String tether_shim_json_Stringify(const Any& value, const tvm::ffi::Optional<int>& indent) {
  Any r = Call(tether_cxx_json_stringify, {value.data_, indent.data_});
  String s;
  s.data_ = r.data_;
  r.data_ = TetherCxxAny{tvm::ffi::kTetherNone, 0, {0}};
  return s;
}

String tether_shim_ReprPrint(const Any& value) {
  Any r = Call(tether_cxx_repr_print, {value.data_});
  String s;
  s.data_ = r.data_;
  r.data_ = TetherCxxAny{tvm::ffi::kTetherNone, 0, {0}};
  return s;
}

Any tether_shim_DeepCopy(const Any& value) { return Call(tether_cxx_deep_copy, {value.data_}); }

Any tether_shim_ToJSONGraph(const Any& value, const Any& metadata) {
  return Call(tether_cxx_to_json_graph, {value.data_, metadata.data_});
}

Any tether_shim_FromJSONGraph(const Any& value) {
  return Call(tether_cxx_from_json_graph, {value.data_});
}

// Recursive comparison: the bridge returns the three-way result (its
// second argument says whether only equality is asked, which makes
// unordered values unequal instead of an error).
static int64_t RecursiveCompare(const Any& lhs, const Any& rhs, bool eq_only) {
  Any r = Call(tether_cxx_recursive_compare, {lhs.data_, rhs.data_, Bool(eq_only)});
  return r.data_.v_int64;
}

int64_t tether_shim_RecursiveHash(const Any& value) {
  Any r = Call(tether_cxx_recursive_hash, {value.data_});
  return r.data_.v_int64;
}
bool tether_shim_RecursiveEq(const Any& lhs, const Any& rhs) { return RecursiveCompare(lhs, rhs, true) == 0; }
bool tether_shim_RecursiveLt(const Any& lhs, const Any& rhs) { return RecursiveCompare(lhs, rhs, false) < 0; }
bool tether_shim_RecursiveLe(const Any& lhs, const Any& rhs) { return RecursiveCompare(lhs, rhs, false) <= 0; }
bool tether_shim_RecursiveGt(const Any& lhs, const Any& rhs) { return RecursiveCompare(lhs, rhs, false) > 0; }
bool tether_shim_RecursiveGe(const Any& lhs, const Any& rhs) { return RecursiveCompare(lhs, rhs, false) >= 0; }

tvm::ffi::ObjectRef tether_shim_VisitErrorContext_FindAccessPaths(
    const tvm::ffi::ObjectRef& root, const tvm::ffi::VisitErrorContext& visit_context,
    bool allow_prefix_match) {
  TetherCxxAny root_any{tvm::ffi::kTetherNone, 0, {0}};
  TetherCxxAny context_any{tvm::ffi::kTetherNone, 0, {0}};
  // Borrowed views: the type index is read from the object header (offset 8).
  if (root.data_ != nullptr) {
    root_any.type_index = *reinterpret_cast<const int32_t*>(static_cast<const char*>(root.data_) + 8);
    root_any.v_obj = root.data_;
  }
  if (visit_context.data_ != nullptr) {
    context_any.type_index =
        *reinterpret_cast<const int32_t*>(static_cast<const char*>(visit_context.data_) + 8);
    context_any.v_obj = visit_context.data_;
  }
  Any r = Call(tether_cxx_find_access_paths, {root_any, context_any, Bool(allow_prefix_match)});
  void* obj = r.data_.type_index >= tvm::ffi::kTetherStaticObjectBegin ? r.data_.v_obj : nullptr;
  r.data_ = TetherCxxAny{tvm::ffi::kTetherNone, 0, {0}};  // ownership moves to the result
  return tvm::ffi::ObjectRef(obj);
}

}  // extern "C"

// Each definition has exactly the type of the TVM-FFI declaration whose
// mangled name its trampoline exports.
#define TETHER_SAME_TYPE(decl, impl) \
  static_assert(std::is_same<decltype(decl), decltype(impl)>::value, #impl " differs from " #decl)
TETHER_SAME_TYPE(tvm::ffi::StructuralEqual::Equal, tether_shim_StructuralEqual_Equal);
TETHER_SAME_TYPE(tvm::ffi::StructuralEqual::GetFirstMismatch, tether_shim_StructuralEqual_GetFirstMismatch);
TETHER_SAME_TYPE(tvm::ffi::StructuralHash::Hash, tether_shim_StructuralHash_Hash);
TETHER_SAME_TYPE(tvm::ffi::json::Parse, tether_shim_json_Parse);
TETHER_SAME_TYPE(tvm::ffi::json::Stringify, tether_shim_json_Stringify);
TETHER_SAME_TYPE(tvm::ffi::ReprPrint, tether_shim_ReprPrint);
TETHER_SAME_TYPE(tvm::ffi::DeepCopy, tether_shim_DeepCopy);
TETHER_SAME_TYPE(tvm::ffi::ToJSONGraph, tether_shim_ToJSONGraph);
TETHER_SAME_TYPE(tvm::ffi::FromJSONGraph, tether_shim_FromJSONGraph);
TETHER_SAME_TYPE(tvm::ffi::RecursiveHash, tether_shim_RecursiveHash);
TETHER_SAME_TYPE(tvm::ffi::RecursiveEq, tether_shim_RecursiveEq);
TETHER_SAME_TYPE(tvm::ffi::RecursiveLt, tether_shim_RecursiveLt);
TETHER_SAME_TYPE(tvm::ffi::RecursiveLe, tether_shim_RecursiveLe);
TETHER_SAME_TYPE(tvm::ffi::RecursiveGt, tether_shim_RecursiveGt);
TETHER_SAME_TYPE(tvm::ffi::RecursiveGe, tether_shim_RecursiveGe);
TETHER_SAME_TYPE(tvm::ffi::VisitErrorContext::FindAccessPaths,
                 tether_shim_VisitErrorContext_FindAccessPaths);
