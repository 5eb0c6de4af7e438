// A small C++ client of tether's C ABI: creates FFI strings and calls
// global functions, turning the raised-error channel into exceptions.
#ifndef TETHER_CONSUMER_ECHO_CLIENT_H_
#define TETHER_CONSUMER_ECHO_CLIENT_H_

#include <cstdint>
#include <stdexcept>
#include <string>

namespace consumer {

// Thrown when a C ABI call returns nonzero; carries the raised error's kind
// and message.
class FfiError : public std::runtime_error {
 public:
  FfiError(std::string kind, const std::string& message)
      : std::runtime_error(kind + ": " + message), kind_(std::move(kind)) {}
  const std::string& kind() const { return kind_; }

 private:
  std::string kind_;
};

// Round-trips `text` through an FFI String object (TVMFFIStringFromByteArray)
// and returns the characters read back from it.
std::string RoundTripString(const std::string& text);

// Calls the global function `name` with one integer and returns its integer
// result (for `testing.echo`, the argument itself).
int64_t CallWithInt(const std::string& name, int64_t value);

// Whether a global function of that name is registered.
bool HasGlobal(const std::string& name);

}  // namespace consumer

#endif  // TETHER_CONSUMER_ECHO_CLIENT_H_
