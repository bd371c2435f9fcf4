// Status and Result<T>: errors as values at library boundaries.
//
// A Status is either OK or a code plus a human-readable message. Result<T> holds a T or a
// non-OK Status. Both are [[nodiscard]]: ignoring an error is a compile warning.
//
//   Result<Block> ReadBlock(uint64_t height);
//   TESSERA_ASSIGN_OR_RETURN(Block block, ReadBlock(h));
//   TESSERA_RETURN_IF_ERROR(store.Commit(block));
//
// Exceptions are used only at program edges (main), never to cross a library boundary.
#pragma once

#include <cassert>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace tessera {

// The codes follow gRPC's canonical set so statuses map one-to-one onto RPC errors.
enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message);

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "INVALID_ARGUMENT: amount must be positive", or "OK".
  std::string ToString() const;

  // Returns a copy whose message is prefixed with `context` ("reading block 7: ...").
  Status WithContext(std::string_view context) const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

std::ostream& operator<<(std::ostream& os, const Status& status);

Status CancelledError(std::string message);
Status UnknownError(std::string message);
Status InvalidArgumentError(std::string message);
Status DeadlineExceededError(std::string message);
Status NotFoundError(std::string message);
Status AlreadyExistsError(std::string message);
Status PermissionDeniedError(std::string message);
Status ResourceExhaustedError(std::string message);
Status FailedPreconditionError(std::string message);
Status AbortedError(std::string message);
Status OutOfRangeError(std::string message);
Status UnimplementedError(std::string message);
Status InternalError(std::string message);
Status UnavailableError(std::string message);
Status DataLossError(std::string message);

// Holds either a value or an error. Accessing the value of an error Result is a programming
// error (asserts in debug builds, terminates in release).
template <typename T>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<std::decay_t<T>, Status>, "Result<Status> is meaningless");

 public:
  Result(const T& value) : state_(value) {}            // NOLINT: implicit by design
  Result(T&& value) : state_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Status status) : state_(std::move(status)) {  // NOLINT: implicit by design
    if (std::get<Status>(state_).ok()) {
      state_ = Status(StatusCode::kInternal, "Result constructed from an OK status");
    }
  }
  template <typename U>
  requires(std::is_constructible_v<T, U&&> && !std::is_same_v<std::decay_t<U>, T> &&
           !std::is_same_v<std::decay_t<U>, Status> && !std::is_same_v<std::decay_t<U>, Result>)
      Result(U&& value)
      : state_(T(std::forward<U>(value))) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  // OK when a value is held.
  Status status() const { return ok() ? Status() : std::get<Status>(state_); }

  T& value() & { return Checked(); }
  const T& value() const& { return Checked(); }
  T&& value() && { return std::move(Checked()); }
  T& operator*() & { return Checked(); }
  const T& operator*() const& { return Checked(); }
  T&& operator*() && { return std::move(Checked()); }
  T* operator->() { return &Checked(); }
  const T* operator->() const { return &Checked(); }

  template <typename U>
  T value_or(U&& fallback) const& {
    return ok() ? std::get<T>(state_) : static_cast<T>(std::forward<U>(fallback));
  }

 private:
  T& Checked() {
    if (!ok()) Die();
    return std::get<T>(state_);
  }
  const T& Checked() const {
    if (!ok()) Die();
    return std::get<T>(state_);
  }
  [[noreturn]] void Die() const;

  std::variant<T, Status> state_;
};

namespace internal {
[[noreturn]] void DieOnBadResultAccess(const Status& status);
}  // namespace internal

template <typename T>
void Result<T>::Die() const {
  internal::DieOnBadResultAccess(std::get<Status>(state_));
}

}  // namespace tessera

#define TESSERA_CONCAT_INNER_(a, b) a##b
#define TESSERA_CONCAT_(a, b) TESSERA_CONCAT_INNER_(a, b)

// Returns the Status of `expr` from the enclosing function when it is not OK.
#define TESSERA_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::tessera::Status tessera_status_ = (expr);        \
    if (!tessera_status_.ok()) return tessera_status_; \
  } while (false)

// Evaluates `rexpr` (a Result<T>); on error returns its Status, else assigns the value to `lhs`
// (which may be a declaration: `TESSERA_ASSIGN_OR_RETURN(auto x, F())`).
#define TESSERA_ASSIGN_OR_RETURN(lhs, rexpr) \
  TESSERA_ASSIGN_OR_RETURN_IMPL_(TESSERA_CONCAT_(tessera_result_, __LINE__), lhs, rexpr)
#define TESSERA_ASSIGN_OR_RETURN_IMPL_(result, lhs, rexpr) \
  auto result = (rexpr);                                   \
  if (!result.ok()) return result.status();                \
  lhs = std::move(result).value()
