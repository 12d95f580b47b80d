#include "toolgate/billing/invoke_stage.h"

#include <gtest/gtest.h>

namespace toolgate::billing {
namespace {

const Limits kLimits;

TEST(InvokeStageTest, RefusedHoldsBecomeTheContractsProblems) {
  HoldOutcome rate{HoldVerdict::kRateLimited, 2, 0};
  auto p = ProblemFor(rate, 63, kLimits);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status(), 429);
  EXPECT_EQ(p->code(), "rate_limited");
  EXPECT_EQ(p->retry_after_s(), 2);

  HoldOutcome busy{HoldVerdict::kConcurrencyLimit, 1, 0};
  p = ProblemFor(busy, 63, kLimits);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status(), 429);
  EXPECT_EQ(p->code(), "concurrency_limit");
  EXPECT_EQ(p->retry_after_s(), 1);

  HoldOutcome spent{HoldVerdict::kTimeoutBudgetExhausted, 1800, 0};
  p = ProblemFor(spent, 63, kLimits);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status(), 429);
  EXPECT_EQ(p->code(), "timeout_budget_exhausted");
  EXPECT_EQ(p->retry_after_s(), 1800);
  EXPECT_NE(p->detail().find("3600 sandbox seconds per hour"), std::string::npos) << p->detail();

  HoldOutcome poor{HoldVerdict::kInsufficientBalance, 0, 40};
  p = ProblemFor(poor, 63, kLimits);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->status(), 402);
  EXPECT_EQ(p->code(), "insufficient_balance");
  EXPECT_EQ(p->retry_after_s(), 0);
  EXPECT_NE(p->detail().find("63"), std::string::npos) << p->detail();
  EXPECT_NE(p->detail().find("40"), std::string::npos) << p->detail();
}

TEST(InvokeStageTest, AcceptedHoldsHaveNoProblem) {
  EXPECT_FALSE(ProblemFor({HoldVerdict::kHeld, 0, 0}, 63, kLimits));
  EXPECT_FALSE(ProblemFor({HoldVerdict::kAlreadyHeld, 0, 0}, 63, kLimits));
}

}  // namespace
}  // namespace toolgate::billing
