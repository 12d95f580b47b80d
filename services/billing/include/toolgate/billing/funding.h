// Funding: where an organization's credit comes from (docs/operations.md "Funding"), one mode per
// deployment, set with billing's --funding (TOOLGATE_FUNDING):
//   grants    the default: only an operator adds credit (POST /admin/organizations/{id}/credits);
//             a member's top-up is 403 funding_by_grant_only.
//   checkout  credit is bought through a payment provider (not built yet: the provider's
//             confirmation will record its credit the way a grant does); operators grant as in
//             grants mode and members' top-ups are refused the same way.
//   demo      play money: any member tops up any amount (POST /billing/top-ups). `toolgate up`
//             passes it only with --demo or --dev-funding.
// Pure and thread-safe.
#pragma once

#include <optional>
#include <string_view>

#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::billing {

enum class FundingMode { kGrants, kCheckout, kDemo };

// "grants", "checkout" or "demo": the flag's value and the API's `funding` field.
std::string_view FundingModeName(FundingMode mode);
// The mode named exactly so; nullopt for anything else.
std::optional<FundingMode> ParseFundingMode(std::string_view name);
// Whether a member may credit their own organization with POST /billing/top-ups.
inline bool MembersMayTopUp(FundingMode mode) {
  return mode == FundingMode::kDemo;
}
// The 403 funding_by_grant_only a member's top-up gets in mode, saying where credit comes from;
// nullopt in demo.
std::optional<v1::Problem> TopUpRefusal(FundingMode mode);

}  // namespace toolgate::billing
