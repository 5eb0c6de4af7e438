/*
 * tether/any.h — Any (an owned value) and AnyView (a borrowed one), and
 * TypeTraits, the one place that says how each C++ type becomes a
 * TVMFFIAny and back.
 *
 * A TypeTraits<T> specialisation has:
 *   static void ToAny(const T& value, TVMFFIAny* out);   // out owns what it refers to
 *   static std::optional<T> TryCast(const TVMFFIAny& v); // nullopt when v is no T
 *   static std::string TypeStr();                        // for messages
 * Casts convert where TVM-FFI's do: int from bool, float from int and
 * bool, bool from int, str from the raw C-string form, and object
 * references from any object of a derived type.
 */
#ifndef TETHER_ANY_H_
#define TETHER_ANY_H_

#include <tether/string.h>

#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace tether {

template <typename T, typename = void>
struct TypeTraits;

namespace detail {

/* The type key of what an Any holds, for messages. */
inline std::string AnyTypeKey(const TVMFFIAny& v) {
  if (v.type_index >= kTVMFFIStaticObjectBegin && v.v_obj != nullptr) return TypeKeyOf(v.v_obj->type_index);
  switch (v.type_index) {
    case kTVMFFISmallStr:
    case kTVMFFIRawStr:
      return "str";
    case kTVMFFISmallBytes:
    case kTVMFFIByteArrayPtr:
      return "bytes";
    default:
      return TypeKeyOf(v.type_index);
  }
}

inline void ReleaseRaw(TVMFFIAny* v) {
  if (v->type_index >= kTVMFFIStaticObjectBegin && v->v_obj != nullptr) DecRef(v->v_obj);
  *v = TVMFFIAny();
}

inline TVMFFIAny CopyRaw(const TVMFFIAny& v) {
  if (v.type_index >= kTVMFFIStaticObjectBegin && v.v_obj != nullptr) IncRef(v.v_obj);
  return v;
}

[[noreturn]] inline void ThrowCastError(const TVMFFIAny& v, const std::string& target) {
  throw Error("TypeError", "Cannot convert from type `" + AnyTypeKey(v) + "` to `" + target + "`");
}

/* The object an Any refers to (reading through an rvalue-reference slot,
 * the form a caller uses to hand over its reference), or nullptr. */
inline TVMFFIObject* AnyObject(const TVMFFIAny& v) {
  if (v.type_index == kTVMFFIObjectRValueRef) {
    TVMFFIObject** slot = static_cast<TVMFFIObject**>(v.v_ptr);
    return slot == nullptr ? nullptr : *slot;
  }
  return v.type_index >= kTVMFFIStaticObjectBegin ? v.v_obj : nullptr;
}

}  // namespace detail

/* A borrowed value (what a packed function receives). */
class AnyView {
 public:
  AnyView() : data_() {}
  explicit AnyView(const TVMFFIAny& raw) : data_(raw) {}

  int32_t type_index() const { return data_.type_index; }
  bool is_none() const { return data_.type_index == kTVMFFINone; }
  std::string GetTypeKey() const { return detail::AnyTypeKey(data_); }
  const TVMFFIAny& raw() const { return data_; }

  template <typename T>
  std::optional<T> try_cast() const {
    return TypeTraits<T>::TryCast(data_);
  }
  /* The value as a T, or TypeError "Cannot convert from type `X` to `T`". */
  template <typename T>
  T cast() const {
    std::optional<T> r = TypeTraits<T>::TryCast(data_);
    if (!r.has_value()) detail::ThrowCastError(data_, TypeTraits<T>::TypeStr());
    return std::move(*r);
  }

 private:
  TVMFFIAny data_;
};

/* An owned value of any FFI type. */
class Any {
 public:
  Any() : data_() {}
  Any(std::nullptr_t) : data_() {}  // NOLINT
  Any(const Any& other) : data_(detail::CopyRaw(other.data_)) {}
  Any(Any&& other) noexcept : data_(other.data_) { other.data_ = TVMFFIAny(); }
  Any(const AnyView& view) : Any(OwnView(view.raw())) {}  // NOLINT
  template <typename T, typename = std::enable_if_t<!std::is_same_v<std::decay_t<T>, Any> &&
                                                    !std::is_same_v<std::decay_t<T>, AnyView>>>
  Any(const T& value) : data_() {  // NOLINT
    TypeTraits<std::decay_t<T>>::ToAny(value, &data_);
  }
  Any(const char* s) : data_() { String(s).CopyTo(&data_); }  // NOLINT
  Any& operator=(Any other) noexcept {
    std::swap(data_, other.data_);
    return *this;
  }
  ~Any() { detail::ReleaseRaw(&data_); }

  /* Adopt an owned TVMFFIAny / give the value up as one. */
  static Any FromRawOwned(const TVMFFIAny& raw) {
    Any a;
    a.data_ = raw;
    return a;
  }
  TVMFFIAny ReleaseToRaw() {
    TVMFFIAny r = data_;
    data_ = TVMFFIAny();
    return r;
  }

  int32_t type_index() const { return data_.type_index; }
  bool is_none() const { return data_.type_index == kTVMFFINone; }
  std::string GetTypeKey() const { return detail::AnyTypeKey(data_); }
  const TVMFFIAny& raw() const { return data_; }
  AnyView view() const { return AnyView(data_); }
  operator AnyView() const { return AnyView(data_); }  // NOLINT

  template <typename T>
  std::optional<T> try_cast() const {
    return TypeTraits<T>::TryCast(data_);
  }
  template <typename T>
  T cast() const {
    return view().cast<T>();
  }
  /* Same object, or equal plain data. */
  bool same_as(const Any& other) const {
    if (data_.type_index != other.data_.type_index) return false;
    if (data_.type_index == kTVMFFISmallStr || data_.type_index == kTVMFFISmallBytes) {
      return data_.small_str_len == other.data_.small_str_len &&
             std::memcmp(data_.v_bytes, other.data_.v_bytes, data_.small_str_len) == 0;
    }
    return data_.v_int64 == other.data_.v_int64;
  }

 private:
  static Any OwnView(const TVMFFIAny& view) {
    Any a;
    detail::CheckCall(TVMFFIAnyViewToOwnedAny(&view, &a.data_));
    return a;
  }
  TVMFFIAny data_;
};

// ---- TypeTraits for the plain types ---------------------------------------

template <>
struct TypeTraits<bool> {
  static void ToAny(bool v, TVMFFIAny* out) {
    out->type_index = kTVMFFIBool;
    out->v_int64 = v ? 1 : 0;
  }
  static std::optional<bool> TryCast(const TVMFFIAny& v) {
    if (v.type_index == kTVMFFIBool || v.type_index == kTVMFFIInt) return v.v_int64 != 0;
    return std::nullopt;
  }
  static std::string TypeStr() { return "bool"; }
};

template <typename T>
struct TypeTraits<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static void ToAny(T v, TVMFFIAny* out) {
    out->type_index = kTVMFFIInt;
    out->v_int64 = static_cast<int64_t>(v);
  }
  static std::optional<T> TryCast(const TVMFFIAny& v) {
    if (v.type_index == kTVMFFIInt || v.type_index == kTVMFFIBool) return static_cast<T>(v.v_int64);
    return std::nullopt;
  }
  static std::string TypeStr() { return "int"; }
};

template <typename T>
struct TypeTraits<T, std::enable_if_t<std::is_floating_point_v<T>>> {
  static void ToAny(T v, TVMFFIAny* out) {
    out->type_index = kTVMFFIFloat;
    out->v_float64 = static_cast<double>(v);
  }
  static std::optional<T> TryCast(const TVMFFIAny& v) {
    if (v.type_index == kTVMFFIFloat) return static_cast<T>(v.v_float64);
    if (v.type_index == kTVMFFIInt || v.type_index == kTVMFFIBool) return static_cast<T>(v.v_int64);
    return std::nullopt;
  }
  static std::string TypeStr() { return "float"; }
};

template <>
struct TypeTraits<std::nullptr_t> {
  static void ToAny(std::nullptr_t, TVMFFIAny* out) { *out = TVMFFIAny(); }
  static std::optional<std::nullptr_t> TryCast(const TVMFFIAny& v) {
    if (v.type_index == kTVMFFINone) return nullptr;
    return std::nullopt;
  }
  static std::string TypeStr() { return "None"; }
};

template <>
struct TypeTraits<void*> {
  static void ToAny(void* v, TVMFFIAny* out) {
    out->type_index = v == nullptr ? kTVMFFINone : kTVMFFIOpaquePtr;
    out->v_ptr = v;
  }
  static std::optional<void*> TryCast(const TVMFFIAny& v) {
    if (v.type_index == kTVMFFIOpaquePtr) return v.v_ptr;
    if (v.type_index == kTVMFFINone) return static_cast<void*>(nullptr);
    return std::nullopt;
  }
  static std::string TypeStr() { return "void*"; }
};

template <>
struct TypeTraits<String> {
  static void ToAny(const String& s, TVMFFIAny* out) { s.CopyTo(out); }
  static std::optional<String> TryCast(const TVMFFIAny& v) {
    switch (v.type_index) {
      case kTVMFFISmallStr:
      case kTVMFFIStr:
        return String(String::AdoptRaw(detail::CopyRaw(v)));
      case kTVMFFIRawStr:
        return String(v.v_c_str);
      default:
        return std::nullopt;
    }
  }
  static std::string TypeStr() { return "str"; }
};

template <>
struct TypeTraits<std::string> {
  static void ToAny(const std::string& s, TVMFFIAny* out) { TypeTraits<String>::ToAny(String(s), out); }
  static std::optional<std::string> TryCast(const TVMFFIAny& v) {
    if (auto s = TypeTraits<String>::TryCast(v)) return s->str();
    return std::nullopt;
  }
  static std::string TypeStr() { return "str"; }
};

template <>
struct TypeTraits<Bytes> {
  static void ToAny(const Bytes& s, TVMFFIAny* out) { s.CopyTo(out); }
  static std::optional<Bytes> TryCast(const TVMFFIAny& v) {
    switch (v.type_index) {
      case kTVMFFISmallBytes:
      case kTVMFFIBytes:
        return Bytes(Bytes::AdoptRaw(detail::CopyRaw(v)));
      case kTVMFFIByteArrayPtr: {
        const TVMFFIByteArray* b = static_cast<const TVMFFIByteArray*>(v.v_ptr);
        return Bytes(b->data, b->size);
      }
      default:
        return std::nullopt;
    }
  }
  static std::string TypeStr() { return "bytes"; }
};

template <>
struct TypeTraits<Any> {
  static void ToAny(const Any& a, TVMFFIAny* out) { *out = detail::CopyRaw(a.raw()); }
  static std::optional<Any> TryCast(const TVMFFIAny& v) { return Any(AnyView(v)); }
  static std::string TypeStr() { return "Any"; }
};

// ---- object references -----------------------------------------------------

template <typename T>
struct TypeTraits<T, std::enable_if_t<std::is_base_of_v<ObjectRef, T> && !std::is_same_v<T, Error>>> {
  using Container = typename T::ContainerType;
  static void ToAny(const T& ref, TVMFFIAny* out) {
    if (!ref.defined()) {
      *out = TVMFFIAny();
      return;
    }
    TVMFFIObject* h = detail::Header(static_cast<const ObjectRef&>(ref).get());
    detail::IncRef(h);
    out->type_index = h->type_index;
    out->v_obj = h;
  }
  static std::optional<T> TryCast(const TVMFFIAny& v) {
    TVMFFIObject* h = detail::AnyObject(v);
    if (h == nullptr) {
      // Only the untyped reference is nullable; Optional<T> says "or None".
      if constexpr (std::is_same_v<T, ObjectRef>) {
        if (v.type_index == kTVMFFINone) return T();
      }
      return std::nullopt;
    }
    Object* obj = reinterpret_cast<Object*>(h);
    if (!obj->IsInstance<Container>()) return std::nullopt;
    if constexpr (detail_has_element_check<T>::value) {
      if (!T::ElementsMatch(obj)) return std::nullopt;
    }
    return T(detail::UnsafeInit{}, ObjectPtr<Object>::Borrow(obj));
  }
  static std::string TypeStr() {
    if constexpr (detail_has_type_str<T>::value) {
      return T::TypeStr();
    } else {
      return Container::_type_key;
    }
  }

 private:
  template <typename U, typename = void>
  struct detail_has_element_check : std::false_type {};
  template <typename U>
  struct detail_has_element_check<U, std::void_t<decltype(U::ElementsMatch(static_cast<Object*>(nullptr)))>>
      : std::true_type {};
  template <typename U, typename = void>
  struct detail_has_type_str : std::false_type {};
  template <typename U>
  struct detail_has_type_str<U, std::void_t<decltype(U::TypeStr())>> : std::true_type {};
};

template <>
struct TypeTraits<Error> {
  static void ToAny(const Error& e, TVMFFIAny* out) { TypeTraits<ObjectRef>::ToAny(e, out); }
  static std::optional<Error> TryCast(const TVMFFIAny& v) {
    TVMFFIObject* h = detail::AnyObject(v);
    if (h == nullptr || h->type_index != kTVMFFIError) return std::nullopt;
    return Error(detail::UnsafeInit{}, ObjectPtr<Object>::Borrow(reinterpret_cast<Object*>(h)));
  }
  static std::string TypeStr() { return "ffi.Error"; }
};

template <typename T>
struct TypeTraits<ObjectPtr<T>> {
  static void ToAny(const ObjectPtr<T>& p, TVMFFIAny* out) {
    TypeTraits<ObjectRef>::ToAny(ObjectRef(ObjectPtr<Object>(p)), out);
  }
  static std::optional<ObjectPtr<T>> TryCast(const TVMFFIAny& v) {
    TVMFFIObject* h = detail::AnyObject(v);
    if (h == nullptr) return std::nullopt;
    Object* obj = reinterpret_cast<Object*>(h);
    if (!obj->IsInstance<T>()) return std::nullopt;
    return ObjectPtr<T>::Borrow(static_cast<T*>(obj));
  }
  static std::string TypeStr() { return T::_type_key; }
};

}  // namespace tether

#endif  // TETHER_ANY_H_
