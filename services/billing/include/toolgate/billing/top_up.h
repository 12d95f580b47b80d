// Validation of POST /billing/top-ups (contract section 6). Pure and thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::billing {

inline constexpr int64_t kMaxTopUpMicroUsd = 1'000'000'000'000;  // one million USD
inline constexpr size_t kMaxIdempotencyKeyLength = 255;

struct TopUpRequest {
  int64_t amount_micro_usd = 0;
  std::string idempotency_key;  // empty: the request carried none
};

// Why key cannot serve as an Idempotency-Key (1 to 255 printable ASCII characters), or nullopt
// when it can.
std::optional<std::string> IdempotencyKeyError(std::string_view key);

// Reads the body {"amount_micro_usd": int} and the optional Idempotency-Key header. Returns the
// request, or the problem to answer: 400 invalid_json when the body is not a JSON object, 422
// validation_failed with one error per bad field.
std::variant<TopUpRequest, v1::Problem> ParseTopUp(const v1::HttpRequest& request);

}  // namespace toolgate::billing
