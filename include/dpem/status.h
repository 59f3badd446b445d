// dpem: differentially private expectation maximization.
//
// Status and StatusOr<T>: the error model of the whole C++ API. No exception
// crosses a public function; a function that can fail returns a Status (or a
// StatusOr<T> holding either a value or an error). The CLI turns a non-OK
// Status into one line on stderr and exit code 2.
//
// Thread safety: Status and StatusOr are values; distinct objects may be used
// from distinct threads freely, a single object like any other value type.
#ifndef DPEM_STATUS_H_
#define DPEM_STATUS_H_

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace dpem {

// Broad classes of failure, in the spirit of absl::StatusCode.
enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // A caller-supplied value is outside what is accepted.
  kFailedPrecondition,  // The object or system is not in a state to do this.
  kOutOfRange,          // A search or computation left its valid domain.
  kNotFound,            // A file, key or entry does not exist.
  kIoError,             // Reading or writing a file failed.
  kNumericalError,      // A factorisation or special function failed.
  kInternal,            // A bug: an invariant of dpem itself was broken.
};

// Returns a short lower-case name of `code`, e.g. "invalid argument".
const char* StatusCodeName(StatusCode code);

// The result of an operation that returns no value: OK, or a code and a
// one-line, human-readable message naming what was wrong.
class [[nodiscard]] Status {
 public:
  // An OK status.
  Status() = default;
  // A status with `code` and `message`; `code` should not be kOk.
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid argument: <message>", or "OK".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgumentError(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
inline Status FailedPreconditionError(std::string m) {
  return Status(StatusCode::kFailedPrecondition, std::move(m));
}
inline Status OutOfRangeError(std::string m) {
  return Status(StatusCode::kOutOfRange, std::move(m));
}
inline Status NotFoundError(std::string m) {
  return Status(StatusCode::kNotFound, std::move(m));
}
inline Status IoError(std::string m) {
  return Status(StatusCode::kIoError, std::move(m));
}
inline Status NumericalError(std::string m) {
  return Status(StatusCode::kNumericalError, std::move(m));
}
inline Status InternalError(std::string m) {
  return Status(StatusCode::kInternal, std::move(m));
}

// Either a value of type T or a non-OK Status. Accessing value() of an error
// is a programming error (asserted in debug builds).
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  // Implicit from a value or from a non-OK status, so that functions can
  // `return value;` and `return InvalidArgumentError(...);` alike.
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT
    assert(!status_.ok() && "StatusOr constructed from an OK status");
    if (status_.ok()) status_ = InternalError("StatusOr from OK status");
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T& value() & {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace dpem

#define DPEM_STATUS_CONCAT_INNER_(a, b) a##b
#define DPEM_STATUS_CONCAT_(a, b) DPEM_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define DPEM_RETURN_IF_ERROR(expr)             \
  do {                                         \
    ::dpem::Status dpem_status_ = (expr);      \
    if (!dpem_status_.ok()) return dpem_status_; \
  } while (0)

// `lhs = value of expr` (a StatusOr), or returns its error.
#define DPEM_ASSIGN_OR_RETURN(lhs, expr) \
  DPEM_ASSIGN_OR_RETURN_IMPL_(DPEM_STATUS_CONCAT_(dpem_statusor_, __LINE__), lhs, expr)
#define DPEM_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()

#endif  // DPEM_STATUS_H_
