#include "echo_client.h"

#include <tether/c_api.h>

namespace consumer {
namespace {

TVMFFIByteArray View(const std::string& s) { return TVMFFIByteArray{s.data(), s.size()}; }

// Takes the raised error (set by the failed call) and throws it.
[[noreturn]] void ThrowRaised() {
  TVMFFIObjectHandle err = nullptr;
  TVMFFIErrorMoveFromRaised(&err);
  if (err == nullptr) throw FfiError("InternalError", "call failed without a raised error");
  TVMFFIErrorCell* cell = TetherErrorCell(err);
  FfiError error(std::string(cell->kind.data, cell->kind.size), std::string(cell->message.data, cell->message.size));
  TVMFFIObjectDecRef(err);
  throw error;
}

void Check(int rc) {
  if (rc != 0) ThrowRaised();
}

// Owns one reference to an FFI object.
class ObjectRef {
 public:
  explicit ObjectRef(TVMFFIObjectHandle h) : handle_(h) {}
  ObjectRef(const ObjectRef&) = delete;
  ObjectRef& operator=(const ObjectRef&) = delete;
  ~ObjectRef() {
    if (handle_ != nullptr) TVMFFIObjectDecRef(handle_);
  }
  TVMFFIObjectHandle get() const { return handle_; }

 private:
  TVMFFIObjectHandle handle_;
};

ObjectRef GetGlobal(const std::string& name) {
  TVMFFIByteArray n = View(name);
  TVMFFIObjectHandle f = nullptr;
  Check(TVMFFIFunctionGetGlobal(&n, &f));
  if (f == nullptr) throw FfiError("KeyError", "no global function " + name);
  return ObjectRef(f);
}

}  // namespace

std::string RoundTripString(const std::string& text) {
  TVMFFIByteArray in = View(text);
  TVMFFIAny value;
  Check(TVMFFIStringFromByteArray(&in, &value));
  if (value.type_index == kTVMFFISmallStr) return std::string(value.v_bytes, value.small_str_len);
  ObjectRef owner(value.v_obj);
  const TVMFFIByteArray* cell = TetherBytesCell(value.v_obj);
  return std::string(cell->data, cell->size);
}

bool HasGlobal(const std::string& name) {
  TVMFFIByteArray n = View(name);
  TVMFFIObjectHandle f = nullptr;
  Check(TVMFFIFunctionGetGlobal(&n, &f));
  if (f == nullptr) return false;
  TVMFFIObjectDecRef(f);
  return true;
}

int64_t CallWithInt(const std::string& name, int64_t value) {
  ObjectRef f = GetGlobal(name);
  TVMFFIAny arg;
  arg.type_index = kTVMFFIInt;
  arg.zero_padding = 0;
  arg.v_int64 = value;
  TVMFFIAny result;
  result.type_index = kTVMFFINone;
  result.zero_padding = 0;
  result.v_int64 = 0;
  Check(TVMFFIFunctionCall(f.get(), &arg, 1, &result));
  if (result.type_index != kTVMFFIInt) {
    if (result.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(result.v_obj);
    throw FfiError("TypeError", name + " did not return an int");
  }
  return result.v_int64;
}

}  // namespace consumer
