#include "toolgate/billing/top_up.h"

#include "toolgate/base/json.h"
#include "toolgate/core/problem.h"

namespace toolgate::billing {

std::optional<std::string> IdempotencyKeyError(std::string_view key) {
  if (key.empty()) return "must not be empty";
  if (key.size() > kMaxIdempotencyKeyLength) return "must be at most 255 characters";
  for (char c : key) {
    if (c < 0x20 || c > 0x7E) return "must contain printable ASCII characters only";
  }
  return std::nullopt;
}

std::variant<TopUpRequest, v1::Problem> ParseTopUp(const v1::HttpRequest& request) {
  auto doc = ParseJson(request.body());
  simdjson::dom::object body;
  if (!doc.ok() || doc->root.get_object().get(body)) {
    return core::MakeProblem("invalid_json",
                             "Send a JSON object such as {\"amount_micro_usd\": 5000000}.");
  }
  TopUpRequest out;
  v1::Problem problem;
  auto fail = [&](std::string_view field, std::string_view message) {
    if (problem.code().empty()) {
      problem = core::ValidationProblem(field, message);
    } else {
      core::AddFieldError(&problem, field, message);
    }
  };
  switch (GetInt(body, "amount_micro_usd", &out.amount_micro_usd)) {
    case Field::kAbsent:
      fail("amount_micro_usd", "is required");
      break;
    case Field::kWrongType:
      fail("amount_micro_usd", "must be an integer from 1 to 1000000000000");
      break;
    case Field::kOk:
      if (out.amount_micro_usd < 1 || out.amount_micro_usd > kMaxTopUpMicroUsd) {
        fail("amount_micro_usd", "must be an integer from 1 to 1000000000000");
      }
      break;
  }
  auto header = request.headers().find("idempotency-key");
  if (header != request.headers().end()) {
    if (auto error = IdempotencyKeyError(header->second)) {
      fail("Idempotency-Key", *error);
    } else {
      out.idempotency_key = header->second;
    }
  }
  if (!problem.code().empty()) return problem;
  return out;
}

}  // namespace toolgate::billing
