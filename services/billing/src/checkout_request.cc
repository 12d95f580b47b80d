#include "toolgate/billing/checkout_request.h"

#include "toolgate/base/json.h"
#include "toolgate/billing/payment_store.h"
#include "toolgate/billing/top_up.h"
#include "toolgate/core/problem.h"

namespace toolgate::billing {
namespace {

// "$0.50" for 50 cents.
std::string Dollars(int64_t cents) {
  std::string fraction = std::to_string(cents % 100);
  if (fraction.size() < 2) fraction.insert(0, "0");
  return "$" + std::to_string(cents / 100) + "." + fraction;
}

std::string Range(const CheckoutLimits& limits) {
  return "must be a whole number of cents from " +
         std::to_string(limits.min_cents * kMicroUsdPerCent) + " (" + Dollars(limits.min_cents) +
         ") to " + std::to_string(limits.max_cents * kMicroUsdPerCent) + " (" +
         Dollars(limits.max_cents) + ") micro-USD";
}

}  // namespace

std::optional<std::string> CheckoutAmountError(int64_t amount_micro_usd,
                                               const CheckoutLimits& limits) {
  if (amount_micro_usd % kMicroUsdPerCent != 0) {
    return "must be a whole number of cents (a multiple of 10000 micro-USD)";
  }
  const int64_t cents = amount_micro_usd / kMicroUsdPerCent;
  if (cents < limits.min_cents || cents > limits.max_cents) return Range(limits);
  return std::nullopt;
}

std::variant<CheckoutRequest, v1::Problem> ParseCheckoutRequest(const v1::HttpRequest& request,
                                                                const CheckoutLimits& limits) {
  auto doc = ParseJson(request.body());
  simdjson::dom::object body;
  if (!doc.ok() || doc->root.get_object().get(body) != simdjson::SUCCESS) {
    return core::MakeProblem("invalid_json",
                             "Send a JSON object such as {\"amount_micro_usd\": 10000000}.");
  }
  CheckoutRequest out;
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
      fail("amount_micro_usd", Range(limits));
      break;
    case Field::kOk:
      if (auto error = CheckoutAmountError(out.amount_micro_usd, limits)) {
        fail("amount_micro_usd", *error);
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
