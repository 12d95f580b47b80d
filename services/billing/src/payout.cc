#include "toolgate/billing/payout.h"

#include "toolgate/billing/credit_grant.h"
#include "toolgate/core/problem.h"

namespace toolgate::billing {

std::variant<PayoutRequest, v1::Problem> ParsePayout(const v1::HttpRequest& request,
                                                     const std::string& org_id) {
  static constexpr NoteRule kReference{
      "reference", "the bank or transfer reference of the payment", kMaxPayoutReferenceLength,
      "{\"amount_micro_usd\": 5000000, \"reference\": \"SEPA 2026-12-01 #4711\"}"};
  auto parsed = ParseOperatorMoneyRequest(request, org_id, kReference);
  if (auto* problem = std::get_if<v1::Problem>(&parsed)) return std::move(*problem);
  auto& money = std::get<OperatorMoneyRequest>(parsed);
  return PayoutRequest{std::move(money.org_id), money.amount_micro_usd, std::move(money.note),
                       std::move(money.idempotency_key)};
}

std::optional<v1::Problem> PayoutRefusal(int64_t amount_micro_usd, const Payable& payable) {
  const int64_t payable_micro_usd = payable.payable_micro_usd();
  if (amount_micro_usd <= payable_micro_usd) return std::nullopt;
  return core::MakeProblem(
      "payout_exceeds_payable",
      "The organization can be paid at most " + std::to_string(payable_micro_usd) +
          " micro-USD: its earnings not yet paid out (" +
          std::to_string(payable.earned_micro_usd - payable.paid_out_micro_usd) +
          "), but no more than its balance (" + std::to_string(payable.balance_micro_usd) +
          "). Nothing was recorded.");
}

v1::Problem PayoutExceedsAvailable(int64_t amount_micro_usd, int64_t available_micro_usd) {
  return core::MakeProblem(
      "payout_exceeds_available",
      "Calls in flight hold part of the balance: " + std::to_string(available_micro_usd) +
          " micro-USD are available now, less than " + std::to_string(amount_micro_usd) +
          ". Nothing was recorded; try again once they have settled.");
}

}  // namespace toolgate::billing
