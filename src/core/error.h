// Errors as values at module boundaries (Expected<T>), and the exception that parsers
// throw internally from deep inside a byte cursor; readers convert one into the other.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace tally::core {

// What went wrong, for the exit code: the input is malformed, the system refused (open,
// write), or the request cannot be met (a format that cannot hold the data).
enum class ErrorKind { invalid_input, io, unsupported };

// A complete, user-facing message: "FILE: byte 120: expected ...".
struct Error {
  std::string message;
  ErrorKind kind = ErrorKind::invalid_input;
};

// Where in its input a parser gave up: a byte offset for binary formats, a line for text.
enum class PositionKind { byte, line };

class FormatError : public std::runtime_error {
 public:
  FormatError(PositionKind kind, uint64_t position, const std::string& what)
      : std::runtime_error(what), kind_(kind), position_(position) {}
  PositionKind kind() const { return kind_; }
  uint64_t position() const { return position_; }
  // "SOURCE: byte N: what" / "SOURCE: line N: what".
  Error located(const std::string& source) const;

 private:
  PositionKind kind_;
  uint64_t position_;
};

[[noreturn]] inline void fail_at_byte(uint64_t offset, const std::string& what) {
  throw FormatError(PositionKind::byte, offset, what);
}
[[noreturn]] inline void fail_at_line(uint64_t line, const std::string& what) {
  throw FormatError(PositionKind::line, line, what);
}

template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  Expected(Error error) : state_(std::move(error)) {}  // NOLINT
  bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

// For operations that produce nothing but may fail.
struct Done {};
using Status = Expected<Done>;
inline Status ok() { return Done{}; }

}  // namespace tally::core
