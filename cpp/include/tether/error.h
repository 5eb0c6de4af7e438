/*
 * tether/error.h — Error: an ffi.Error object that is also a C++ exception.
 *
 * No exception crosses the C ABI. A C++ function exposed through the ABI
 * catches what its body throws and leaves it in the raised-error slot with
 * a nonzero return (detail::CallCatching); a failed call into the ABI is
 * turned back into a thrown Error carrying the very error object that was
 * raised (detail::ThrowRaised), so kind, message, backtrace and cause
 * survive any number of crossings.
 */
#ifndef TETHER_ERROR_H_
#define TETHER_ERROR_H_

#include <tether/object.h>

#include <exception>
#include <memory>
#include <string>

namespace tether {

/* The object of an ffi.Error (created by the core; C++ only reads it). */
class ErrorObj : public Object {
 public:
  TETHER_DECLARE_STATIC_OBJECT_INFO("ffi.Error", kTVMFFIError, true)
  TVMFFIErrorCell cell;
};

class Error : public ObjectRef, public std::exception {
 public:
  using ContainerType = ErrorObj;

  /* A new ffi.Error of the given kind ("ValueError", "TypeError", ...). */
  Error(const std::string& kind, const std::string& message, const std::string& backtrace = "")
      : ObjectRef(Create(kind, message, backtrace)) {
    Describe(kind, message);
  }
  /* An existing ffi.Error object. */
  Error(detail::UnsafeInit tag, ObjectPtr<Object> error) : ObjectRef(tag, std::move(error)) {
    Describe(kind(), message());
  }

  const ErrorObj* get() const { return static_cast<const ErrorObj*>(data_.get()); }
  std::string kind() const { return Field(&TVMFFIErrorCell::kind, "RuntimeError"); }
  std::string message() const { return Field(&TVMFFIErrorCell::message, ""); }
  std::string backtrace() const { return Field(&TVMFFIErrorCell::backtrace, ""); }
  /* "Kind: message". */
  const char* what() const noexcept override { return what_->c_str(); }

 private:
  static ObjectPtr<Object> Create(const std::string& kind, const std::string& message,
                                  const std::string& backtrace) {
    TVMFFIByteArray k{kind.data(), kind.size()}, m{message.data(), message.size()},
        b{backtrace.data(), backtrace.size()};
    TVMFFIObjectHandle out = nullptr;
    if (TVMFFIErrorCreate(&k, &m, &b, &out) != 0) {
      // Creating the error failed (the allocator refused, say): carry the
      // error that failure raised instead, so nothing is lost silently.
      TVMFFIErrorMoveFromRaised(&out);
    }
    return ObjectPtr<Object>::Adopt(static_cast<Object*>(out));
  }
  std::string Field(TVMFFIByteArray TVMFFIErrorCell::*field, const char* fallback) const {
    if (!data_ || data_->type_index() != kTVMFFIError) return fallback;
    const TVMFFIByteArray& s = get()->cell.*field;
    return std::string(s.data, s.size);
  }
  void Describe(const std::string& kind, const std::string& message) {
    what_ = std::make_shared<std::string>(kind + ": " + message);
  }
  // Shared so copying the exception (as `throw` may) cannot throw.
  std::shared_ptr<const std::string> what_;
};

namespace detail {

/* Throw the calling thread's raised error. */
[[noreturn]] inline void ThrowRaised() {
  TVMFFIObjectHandle raised = nullptr;
  TVMFFIErrorMoveFromRaised(&raised);
  if (raised == nullptr) throw Error("RuntimeError", "a call through the C ABI failed without raising an error");
  throw Error(UnsafeInit{}, ObjectPtr<Object>::Adopt(static_cast<Object*>(raised)));
}

/* Check the return code of a C ABI call. */
inline void CheckCall(int rc) {
  if (rc != 0) ThrowRaised();
}

/* Run `body`; if it throws, leave the exception in the raised-error slot
 * and return -1 instead, so it never unwinds into a C caller. */
template <typename F>
int CallCatching(F&& body) noexcept {
  try {
    body();
    return 0;
  } catch (const Error& e) {
    if (e.defined()) {
      TVMFFIErrorSetRaised(Header(e.get()));
    } else {
      TVMFFIErrorSetRaisedFromCStr("RuntimeError", e.what());
    }
  } catch (const std::bad_alloc&) {
    TVMFFIErrorSetRaisedFromCStr("MemoryError", "C++ allocation failed (std::bad_alloc)");
  } catch (const std::exception& e) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", e.what());
  } catch (...) {
    TVMFFIErrorSetRaisedFromCStr("RuntimeError", "unknown C++ exception");
  }
  return -1;
}

inline int32_t RegisterObjectType(const char* key, int32_t parent_index, bool final_type) {
  TVMFFIByteArray k{key, std::strlen(key)};
  int32_t depth = TypeDepthOf(parent_index);
  if (depth < 0) throw Error("ValueError", std::string("unknown parent type of ") + key);
  int32_t index = TVMFFITypeGetOrAllocIndex(&k, -1, depth + 1, 0, final_type ? 0 : 1, parent_index);
  if (index < 0) ThrowRaised();
  return index;
}

}  // namespace detail
}  // namespace tether

#endif  // TETHER_ERROR_H_
