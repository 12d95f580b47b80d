// Payouts (POST /admin/organizations/{organization_id}/payouts, docs/api.md "Earnings and
// payouts"): an operator's record that money was sent to an organization for its earnings. The
// pure parts: the request, and the rule that decides whether an amount may be paid out. Pure and
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "toolgate/billing/earnings.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::billing {

// A bank or transfer reference is how the payout is found again in the bank's records.
inline constexpr size_t kMaxPayoutReferenceLength = 200;

struct PayoutRequest {
  std::string org_id;  // lower-case UUID, from the path
  int64_t amount_micro_usd = 0;
  std::string reference;        // trimmed, 1 to kMaxPayoutReferenceLength bytes, no controls
  std::string idempotency_key;  // empty: the request carried none
};

// Reads the path's organization id, the body {"amount_micro_usd": int, "reference": string} and
// the optional Idempotency-Key header. Returns the request, or the problem to answer: 404
// not_found for an id that is not a UUID, 400 invalid_json when the body is not a JSON object,
// 422 validation_failed with one error per bad field (amount 1 to kMaxTopUpMicroUsd).
std::variant<PayoutRequest, v1::Problem> ParsePayout(const v1::HttpRequest& request,
                                                     const std::string& org_id);

// Why amount may not be paid out of payable (409 payout_exceeds_payable, saying what may be),
// or nullopt when it may. The balance's part held by calls in flight is Redis's to check, in the
// same step that takes the amount (BalanceStore::TakePayout: 409 payout_exceeds_available).
std::optional<v1::Problem> PayoutRefusal(int64_t amount_micro_usd, const Payable& payable);

// 409 payout_exceeds_available: the balance less what calls in flight hold is below the amount.
v1::Problem PayoutExceedsAvailable(int64_t amount_micro_usd, int64_t available_micro_usd);

}  // namespace toolgate::billing
