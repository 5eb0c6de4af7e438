// tether's own minimal declarations of the TVM-FFI C++ types that appear in
// the signatures of the C++ entry points libtether_core provides
// (library_surface.cc). They are not TVM-FFI's headers: each class only has
// the layout, the name (for the mangling of the entry points and for the
// thrown exception's type name) and the copy semantics of its TVM-FFI
// namesake, which is what code compiled against TVM-FFI's headers relies on
// when it calls these entry points:
//
// * Any, String, Optional<int> and json::Value are one TVMFFIAny (16 bytes);
//   ObjectRef and its reference subclasses are one object pointer.
// * All of them have user-provided copy constructors and destructors, so
//   the Itanium C++ ABI passes and returns them through memory, exactly as
//   the caller compiled against TVM-FFI's headers does.
// * Error is std::exception followed by an ObjectRef to an ffi.Error, so a
//   handler written against the headers (catch (const tvm::ffi::Error&))
//   matches the exceptions thrown here by type name and reads kind and
//   message through the same layout.
#ifndef TETHER_CXX_LIBRARY_SURFACE_H_
#define TETHER_CXX_LIBRARY_SURFACE_H_

#include <cstddef>
#include <cstdint>
#include <exception>

extern "C" {
struct TetherCxxByteArray {
  const char* data;
  size_t size;
};
struct TetherCxxAny {
  int32_t type_index;
  uint32_t small_len;
  union {
    int64_t v_int64;
    double v_float64;
    void* v_ptr;
    void* v_obj;
  };
};
// The core's own C ABI, bound inside the library (-Bsymbolic).
int TVMFFIObjectIncRef(void* obj);
int TVMFFIObjectDecRef(void* obj);
int TVMFFIErrorMoveFromRaised(void** result);
int TVMFFIErrorCreate(const TetherCxxByteArray* kind, const TetherCxxByteArray* message,
                      const TetherCxxByteArray* backtrace, void** out);
int TVMFFIStringFromByteArray(const TetherCxxByteArray* input, TetherCxxAny* out);
}

namespace tvm {
namespace ffi {

// Type indices this file needs (TVM-FFI's static indices).
enum : int32_t {
  kTetherNone = 0,
  kTetherInt = 1,
  kTetherBool = 2,
  kTetherStaticObjectBegin = 64,
  kTetherStr = 65,
  kTetherError = 67,
  kTetherSmallStr = 11,
};

class Any {
 public:
  Any() { data_ = TetherCxxAny{kTetherNone, 0, {0}}; }
  Any(const Any& other) : data_(other.data_) {
    if (data_.type_index >= kTetherStaticObjectBegin) TVMFFIObjectIncRef(data_.v_obj);
  }
  Any& operator=(const Any& other) {
    Any copy(other);
    TetherCxxAny tmp = data_;
    data_ = copy.data_;
    copy.data_ = tmp;
    return *this;
  }
  ~Any() { Reset(); }
  // Takes over an owned value.
  static Any FromOwned(TetherCxxAny raw) {
    Any a;
    a.data_ = raw;
    return a;
  }
  void Reset() {
    if (data_.type_index >= kTetherStaticObjectBegin) TVMFFIObjectDecRef(data_.v_obj);
    data_ = TetherCxxAny{kTetherNone, 0, {0}};
  }
  TetherCxxAny data_;
};

// A string: a small string inline or an ffi.String object, in one TVMFFIAny.
class String : public Any {
 public:
  String() = default;
  String(const String&) = default;
  String& operator=(const String&) = default;
  ~String() = default;
};

template <typename T, typename = void>
class Optional;
// Optional of a POD is an Any holding None or the value.
template <>
class Optional<int, void> : public Any {};

namespace json {
using Value = Any;
}  // namespace json

class ObjectRef {
 public:
  ObjectRef() = default;
  explicit ObjectRef(void* owned) : data_(owned) {}
  ObjectRef(const ObjectRef& other) : data_(other.data_) {
    if (data_ != nullptr) TVMFFIObjectIncRef(data_);
  }
  ObjectRef& operator=(const ObjectRef& other) {
    if (other.data_ != nullptr) TVMFFIObjectIncRef(other.data_);
    if (data_ != nullptr) TVMFFIObjectDecRef(data_);
    data_ = other.data_;
    return *this;
  }
  ~ObjectRef() {
    if (data_ != nullptr) TVMFFIObjectDecRef(data_);
  }
  void* data_ = nullptr;
};

// The result type of GetFirstMismatch: a nullable reference.
class OptionalObjectRef : public ObjectRef {
 public:
  using ObjectRef::ObjectRef;
};

// std::exception first (its vtable pointer at offset 0), then the ffi.Error.
class Error : public std::exception, public ObjectRef {
 public:
  explicit Error(void* owned_error) : ObjectRef(owned_error) {}
  Error(const Error&) = default;
  ~Error() override = default;
  const char* what() const noexcept override;
};

class StructuralEqual {
 public:
  static bool Equal(const Any& lhs, const Any& rhs, bool map_free_vars, bool skip_tensor_content);
  static OptionalObjectRef GetFirstMismatch(const Any& lhs, const Any& rhs, bool map_free_vars,
                                            bool skip_tensor_content);
};

class StructuralHash {
 public:
  static uint64_t Hash(const Any& value, bool map_free_vars, bool skip_tensor_content);
};

namespace json {
Value Parse(const String& json_str, String* error_msg);
String Stringify(const Value& value, const Optional<int>& indent);
}  // namespace json

String ReprPrint(const Any& value);
Any DeepCopy(const Any& value);

int64_t RecursiveHash(const Any& value);
bool RecursiveEq(const Any& lhs, const Any& rhs);
bool RecursiveLt(const Any& lhs, const Any& rhs);
bool RecursiveLe(const Any& lhs, const Any& rhs);
bool RecursiveGt(const Any& lhs, const Any& rhs);
bool RecursiveGe(const Any& lhs, const Any& rhs);

// A reference to an ffi.VisitErrorContext. FindAccessPaths returns an
// Array of access paths, which is one object pointer like ObjectRef (the
// return type is not part of the mangled name).
class VisitErrorContext : public ObjectRef {
 public:
  static ObjectRef FindAccessPaths(const ObjectRef& root, const VisitErrorContext& visit_context,
                                   bool allow_prefix_match);
};
json::Value ToJSONGraph(const Any& value, const Any& metadata);
Any FromJSONGraph(const json::Value& value);

}  // namespace ffi
}  // namespace tvm

namespace tether_cxx {
// Rethrows the core's raised error as tvm::ffi::Error (one is made when a
// call failed without raising).
[[noreturn]] void ThrowRaised();
}  // namespace tether_cxx

#endif  // TETHER_CXX_LIBRARY_SURFACE_H_
