#include "toolgate/billing/funding.h"

#include "toolgate/core/problem.h"

namespace toolgate::billing {

std::string_view FundingModeName(FundingMode mode) {
  switch (mode) {
    case FundingMode::kGrants:
      return "grants";
    case FundingMode::kCheckout:
      return "checkout";
    case FundingMode::kDemo:
      return "demo";
  }
  return "grants";
}

std::optional<FundingMode> ParseFundingMode(std::string_view name) {
  for (FundingMode mode : {FundingMode::kGrants, FundingMode::kCheckout, FundingMode::kDemo}) {
    if (name == FundingModeName(mode)) return mode;
  }
  return std::nullopt;
}

std::optional<v1::Problem> TopUpRefusal(FundingMode mode) {
  switch (mode) {
    case FundingMode::kDemo:
      return std::nullopt;
    case FundingMode::kCheckout:
      return core::MakeProblem("funding_by_grant_only",
                               "Members cannot add credit themselves on this system: it is "
                               "bought through checkout or granted by the operator.");
    case FundingMode::kGrants:
      break;
  }
  return core::MakeProblem("funding_by_grant_only",
                           "Members cannot add credit themselves on this system: the operator "
                           "grants it. Ask your operator for credit.");
}

}  // namespace toolgate::billing
