// Status and Result<T>: expected failures as values.
//
// A Status is either OK (cheap: no allocation) or an error with a code and a message meant for
// logs and operators, never for end users (those get a toolgate::v1::Problem). Result<T> holds a
// value or a non-OK Status. Both are thread-compatible value types.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace toolgate {

class Status {
 public:
  enum class Code { kOk, kInvalidArgument, kNotFound, kUnavailable, kTimeout, kInternal, kConflict };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string_view msg) { return {Code::kInvalidArgument, msg}; }
  static Status NotFound(std::string_view msg) { return {Code::kNotFound, msg}; }
  static Status Unavailable(std::string_view msg) { return {Code::kUnavailable, msg}; }
  static Status Timeout(std::string_view msg) { return {Code::kTimeout, msg}; }
  static Status Internal(std::string_view msg) { return {Code::kInternal, msg}; }
  static Status Conflict(std::string_view msg) { return {Code::kConflict, msg}; }

  bool ok() const { return rep_ == nullptr; }
  Code code() const { return rep_ ? rep_->code : Code::kOk; }
  // The message; empty for OK.
  const std::string& message() const;
  std::string ToString() const;

 private:
  struct Rep {
    Code code;
    std::string message;
  };
  Status(Code code, std::string_view msg)
      : rep_(std::make_shared<Rep>(Rep{code, std::string(msg)})) {}
  std::shared_ptr<const Rep> rep_;  // null means OK
};

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}              // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}       // NOLINT: must not be OK

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace toolgate
