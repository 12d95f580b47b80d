// Validation of POST /billing/checkout-sessions (docs/api.md "Checkout"): the amount to buy, in
// micro-USD, must be whole cents (a card is charged in cents) within what the payment provider
// accepts for one payment. Pure and thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "toolgate/billing/payment_provider.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::billing {

struct CheckoutRequest {
  int64_t amount_micro_usd = 0;
  std::string idempotency_key;  // empty: the request carried none
};

// Why amount_micro_usd cannot be bought in one checkout under limits (not whole cents, below
// the minimum, above the maximum), or nullopt when it can.
std::optional<std::string> CheckoutAmountError(int64_t amount_micro_usd,
                                               const CheckoutLimits& limits);

// Reads {"amount_micro_usd": int} and the optional Idempotency-Key header. The problem to answer
// otherwise: 400 invalid_json when the body is not a JSON object, 422 validation_failed with one
// error per bad field.
std::variant<CheckoutRequest, v1::Problem> ParseCheckoutRequest(const v1::HttpRequest& request,
                                                                const CheckoutLimits& limits);

}  // namespace toolgate::billing
