/*
 * tether/string.h — String and Bytes values.
 *
 * Like TVM-FFI's, they are values rather than references: short contents
 * (up to 7 bytes) live inline in a small-string Any, longer ones in an
 * ffi.String / ffi.Bytes object (header, then a TVMFFIByteArray, then the
 * NUL-terminated bytes). Both are created by the core
 * (TVMFFIStringFromByteArray), so whichever form the core picks is used.
 */
#ifndef TETHER_STRING_H_
#define TETHER_STRING_H_

#include <tether/error.h>

#include <cstring>
#include <ostream>
#include <string>
#include <string_view>

namespace tether {

class StringObj : public Object {
 public:
  TETHER_DECLARE_STATIC_OBJECT_INFO("ffi.String", kTVMFFIStr, true)
  TVMFFIByteArray bytes;
};

class BytesObj : public Object {
 public:
  TETHER_DECLARE_STATIC_OBJECT_INFO("ffi.Bytes", kTVMFFIBytes, true)
  TVMFFIByteArray bytes;
};

namespace detail {

/* What String and Bytes share: an owned Any of the small or the object
 * form, never anything else. */
template <int32_t kSmallIndex, int32_t kObjectIndex>
class ByteValue {
 public:
  ByteValue() : ByteValue(nullptr, 0) {}
  ByteValue(const char* data, size_t size) {
    TVMFFIByteArray in{data, size};
    data_ = TVMFFIAny();
    CheckCall(kObjectIndex == kTVMFFIStr ? TVMFFIStringFromByteArray(&in, &data_)
                                         : TVMFFIBytesFromByteArray(&in, &data_));
  }
  ByteValue(const ByteValue& other) : data_(other.data_) {
    if (data_.type_index == kObjectIndex) IncRef(data_.v_obj);
  }
  ByteValue(ByteValue&& other) noexcept : data_(other.data_) { other.SetEmpty(); }
  ByteValue& operator=(ByteValue other) noexcept {
    std::swap(data_, other.data_);
    return *this;
  }
  ~ByteValue() {
    if (data_.type_index == kObjectIndex) DecRef(data_.v_obj);
  }

  const char* data() const {
    return data_.type_index == kObjectIndex ? Cell()->data : data_.v_bytes;
  }
  size_t size() const { return data_.type_index == kObjectIndex ? Cell()->size : data_.small_str_len; }
  bool empty() const { return size() == 0; }
  std::string_view view() const { return std::string_view(data(), size()); }
  /* The value as an owned Any (for TypeTraits). */
  void CopyTo(TVMFFIAny* out) const {
    *out = data_;
    if (data_.type_index == kObjectIndex) IncRef(data_.v_obj);
  }
  /* Adopt an owned Any of either form. */
  static ByteValue AdoptRaw(const TVMFFIAny& raw) {
    ByteValue v(Empty{});
    v.data_ = raw;
    return v;
  }

 private:
  struct Empty {};
  explicit ByteValue(Empty) { SetEmpty(); }
  void SetEmpty() {
    data_ = TVMFFIAny();
    data_.type_index = kSmallIndex;
    data_.small_str_len = 0;
  }
  const TVMFFIByteArray* Cell() const {
    return reinterpret_cast<const TVMFFIByteArray*>(reinterpret_cast<const char*>(data_.v_obj) +
                                                    sizeof(TVMFFIObject));
  }
  TVMFFIAny data_;
};

}  // namespace detail

class String : public detail::ByteValue<kTVMFFISmallStr, kTVMFFIStr> {
  using Base = detail::ByteValue<kTVMFFISmallStr, kTVMFFIStr>;

 public:
  String() = default;
  String(const char* s) : Base(s, std::strlen(s)) {}                  // NOLINT
  String(const std::string& s) : Base(s.data(), s.size()) {}          // NOLINT
  String(std::string_view s) : Base(s.data(), s.size()) {}            // NOLINT
  String(const char* s, size_t n) : Base(s, n) {}
  explicit String(Base b) : Base(std::move(b)) {}

  /* NUL-terminated in both forms. */
  const char* c_str() const { return data(); }
  operator std::string() const { return std::string(data(), size()); }  // NOLINT
  std::string str() const { return std::string(data(), size()); }

  friend bool operator==(const String& a, const String& b) { return a.view() == b.view(); }
  friend bool operator!=(const String& a, const String& b) { return a.view() != b.view(); }
  friend bool operator<(const String& a, const String& b) { return a.view() < b.view(); }
  friend bool operator==(const String& a, const char* b) { return a.view() == b; }
  friend bool operator==(const String& a, const std::string& b) { return a.view() == b; }
  friend std::ostream& operator<<(std::ostream& os, const String& s) { return os << s.view(); }
};

class Bytes : public detail::ByteValue<kTVMFFISmallBytes, kTVMFFIBytes> {
  using Base = detail::ByteValue<kTVMFFISmallBytes, kTVMFFIBytes>;

 public:
  Bytes() = default;
  Bytes(const char* s, size_t n) : Base(s, n) {}
  explicit Bytes(const std::string& s) : Base(s.data(), s.size()) {}
  explicit Bytes(Base b) : Base(std::move(b)) {}
  operator std::string() const { return std::string(data(), size()); }  // NOLINT

  friend bool operator==(const Bytes& a, const Bytes& b) { return a.view() == b.view(); }
  friend bool operator!=(const Bytes& a, const Bytes& b) { return a.view() != b.view(); }
};

}  // namespace tether

#endif  // TETHER_STRING_H_
