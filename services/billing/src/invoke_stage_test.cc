#include "toolgate/billing/invoke_stage.h"

#include <gtest/gtest.h>

namespace toolgate::billing {
namespace {

const Limits kLimits;

HoldRecord HoldOf(int64_t amount, std::vector<Budget> budgets = {}) {
  HoldRecord hold;
  hold.amount_micro_usd = amount;
  hold.budgets = std::move(budgets);
  return hold;
}

TEST(InvokeStageTest, RefusedHoldsBecomeTheContractsProblems) {
  HoldOutcome rate{HoldVerdict::kRateLimited, 2, 0};
  auto p = ProblemFor(rate, HoldOf(63), kLimits);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status(), 429);
  EXPECT_EQ(p->code(), "rate_limited");
  EXPECT_EQ(p->retry_after_s(), 2);

  HoldOutcome busy{HoldVerdict::kConcurrencyLimit, 1, 0};
  p = ProblemFor(busy, HoldOf(63), kLimits);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status(), 429);
  EXPECT_EQ(p->code(), "concurrency_limit");
  EXPECT_EQ(p->retry_after_s(), 1);

  HoldOutcome spent{HoldVerdict::kTimeoutBudgetExhausted, 1800, 0};
  p = ProblemFor(spent, HoldOf(63), kLimits);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status(), 429);
  EXPECT_EQ(p->code(), "timeout_budget_exhausted");
  EXPECT_EQ(p->retry_after_s(), 1800);
  EXPECT_NE(p->detail().find("3600 sandbox seconds per hour"), std::string::npos) << p->detail();

  HoldOutcome poor{HoldVerdict::kInsufficientBalance, 0, 40};
  p = ProblemFor(poor, HoldOf(63), kLimits);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status(), 402);
  EXPECT_EQ(p->code(), "insufficient_balance");
  EXPECT_EQ(p->retry_after_s(), 0);
  EXPECT_NE(p->detail().find("63"), std::string::npos) << p->detail();
  EXPECT_NE(p->detail().find("40"), std::string::npos) << p->detail();
}

TEST(InvokeStageTest, AcceptedHoldsHaveNoProblem) {
  EXPECT_FALSE(ProblemFor({HoldVerdict::kHeld, 0, 0}, HoldOf(63), kLimits));
  EXPECT_FALSE(ProblemFor({HoldVerdict::kAlreadyHeld, 0, 0}, HoldOf(63), kLimits));
}

TEST(InvokeStageTest, AGrantsUsedUpCapIsA402ThatNamesTheCap) {
  const Budget grant{BudgetKind::kGrant, "5f0c2b7e-9a41-4d3c-8e2b-1a0f4c3d2e1f", 2'500'000, {}, {}};
  HoldOutcome capped;
  capped.verdict = HoldVerdict::kBudgetExceeded;
  capped.budget = 0;
  capped.budget_used_micro_usd = 2'499'990;
  auto p = ProblemFor(capped, HoldOf(63, {grant}), kLimits);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status(), 402);
  EXPECT_EQ(p->code(), "grant_cap_exceeded");
  EXPECT_EQ(p->retry_after_s(), 0);
  EXPECT_EQ(p->detail(),
            "This connected app's spending cap of $2.50 is used up; raise or remove the cap in "
            "Settings → Connected apps. Nothing was charged.");
  // A budget the hold does not have is a fault, never a refusal naming some other cap.
  capped.budget = 1;
  p = ProblemFor(capped, HoldOf(63, {grant}), kLimits);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->code(), "service_unavailable");
}

TEST(InvokeStageTest, ABudgetStillNotLoadedIsUnavailable) {
  HoldOutcome unloaded;
  unloaded.verdict = HoldVerdict::kBudgetNotLoaded;
  auto p = ProblemFor(unloaded, HoldOf(63, {Budget{}}), kLimits);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status(), 503);
  EXPECT_EQ(p->code(), "service_unavailable");
}

TEST(InvokeStageTest, DollarsShowCentsAndEveryDigitBelowThem) {
  EXPECT_EQ(FormatUsd(5'000'000), "$5.00");
  EXPECT_EQ(FormatUsd(250'000), "$0.25");
  EXPECT_EQ(FormatUsd(1'000'001), "$1.000001");
  EXPECT_EQ(FormatUsd(10), "$0.00001");
  EXPECT_EQ(FormatUsd(0), "$0.00");
  EXPECT_EQ(FormatUsd(12'345'670'000), "$12345.67");
  EXPECT_EQ(FormatUsd(-1'500'000), "-$1.50");
}

TEST(InvokeStageTest, OnlyACallMadeWithAGrantIsCountedAgainstABudget) {
  v1::Principal key;
  key.set_org_id("org-a");
  key.set_key_id("key-1");
  EXPECT_TRUE(BudgetsFor(key).empty());

  v1::Principal token = key;
  token.clear_key_id();
  token.set_grant_id("5F0C2B7E-9A41-4D3C-8E2B-1A0F4C3D2E1F");
  token.set_grant_cap_micro_usd(5'000'000);
  auto budgets = BudgetsFor(token);
  ASSERT_EQ(budgets.size(), 1u);
  EXPECT_EQ(budgets[0].kind, BudgetKind::kGrant);
  EXPECT_EQ(budgets[0].id, "5f0c2b7e-9a41-4d3c-8e2b-1a0f4c3d2e1f");  // one key per grant
  EXPECT_EQ(budgets[0].cap_micro_usd, 5'000'000);
  EXPECT_EQ(BudgetKey(budgets[0]), "tg:budget:grant:5f0c2b7e-9a41-4d3c-8e2b-1a0f4c3d2e1f");

  // Without a cap the grant is still counted, so that a cap set later counts what it spent.
  token.set_grant_cap_micro_usd(0);
  budgets = BudgetsFor(token);
  ASSERT_EQ(budgets.size(), 1u);
  EXPECT_EQ(budgets[0].cap_micro_usd, 0);
  token.set_grant_cap_micro_usd(-5);
  EXPECT_EQ(BudgetsFor(token)[0].cap_micro_usd, 0);

  // An id that is not a UUID cannot be keyed: no budget (the stage refuses such a call).
  token.set_grant_id("grant 1");
  EXPECT_TRUE(BudgetsFor(token).empty());
}

TEST(InvokeStageTest, AHoldAboveTheCallersMaxCostIsRefusedBeforeAnythingIsHeld) {
  EXPECT_FALSE(MaxCostProblem(21, 0));   // no ceiling
  EXPECT_FALSE(MaxCostProblem(21, 21));  // at the ceiling
  auto p = MaxCostProblem(21, 20);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status(), 402);
  EXPECT_EQ(p->code(), "max_cost_exceeded");
  EXPECT_NE(p->detail().find("21"), std::string::npos) << p->detail();
  EXPECT_NE(p->detail().find("X-Toolgate-Max-Cost: 20"), std::string::npos) << p->detail();
}

TEST(InvokeStageTest, APassedSpendingLimitNamesItselfAndWhenItResets) {
  constexpr int64_t kDec1At10 = 1'796'119'200'000;  // 2026-12-01T10:00:00Z
  Budget key;
  key.kind = BudgetKind::kKey;
  key.id = "0b9d7c1e-8f3a-4e55-9d2a-6c1b2e3f4a5b";
  key.cap_micro_usd = 2'500'000;
  key.period = PeriodAt(PeriodUnit::kDay, kDec1At10);
  v1::Problem p = PeriodBudgetProblem(key, kDec1At10);
  EXPECT_EQ(p.status(), 402);
  EXPECT_EQ(p.code(), "budget_exceeded");
  EXPECT_NE(p.detail().find("API key's daily spending limit of $2.50"), std::string::npos)
      << p.detail();
  EXPECT_NE(p.detail().find("resets at 2026-12-02T00:00:00Z"), std::string::npos) << p.detail();
  EXPECT_NE(p.detail().find("/api/v1/api-keys/" + key.id + "/budget"), std::string::npos);
  EXPECT_EQ(p.retry_after_s(), 14 * 3600);

  Budget org;
  org.kind = BudgetKind::kOrg;
  org.id = "org-1";
  org.cap_micro_usd = 100;
  org.period = PeriodAt(PeriodUnit::kMonth, kDec1At10);
  p = PeriodBudgetProblem(org, kDec1At10);
  EXPECT_NE(p.detail().find("organization's monthly spending limit"), std::string::npos)
      << p.detail();
  EXPECT_NE(p.detail().find("resets at 2027-01-01T00:00:00Z"), std::string::npos) << p.detail();

  // Through ProblemFor: the refused budget is the hold's i-th.
  HoldOutcome capped;
  capped.verdict = HoldVerdict::kBudgetExceeded;
  capped.budget = 1;
  auto via = ProblemFor(capped, HoldOf(63, {Budget{}, org}), kLimits);
  ASSERT_TRUE(via);
  EXPECT_EQ(via->code(), "budget_exceeded");
}
}  // namespace
}  // namespace toolgate::billing
