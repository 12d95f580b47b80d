#include "toolgate/billing/budget_alerts.h"

#include <gtest/gtest.h>

#include "toolgate/base/crypto.h"
#include "toolgate/base/time.h"

namespace toolgate::billing {
namespace {

TEST(BudgetAlertsTest, ThresholdsAreReachedAtEightyAndAHundredPercent) {
  EXPECT_EQ(ThresholdsReached(0, 10), std::vector<int>{});
  EXPECT_EQ(ThresholdsReached(7, 10), std::vector<int>{});
  EXPECT_EQ(ThresholdsReached(8, 10), std::vector<int>{80});
  EXPECT_EQ(ThresholdsReached(9, 10), std::vector<int>{80});
  EXPECT_EQ(ThresholdsReached(10, 10), (std::vector<int>{80, 100}));
  EXPECT_EQ(ThresholdsReached(25, 10), (std::vector<int>{80, 100}));
  // 79.99 % is not 80 %.
  EXPECT_EQ(ThresholdsReached(7999, 10000), std::vector<int>{});
  EXPECT_EQ(ThresholdsReached(8000, 10000), std::vector<int>{80});
  // No cap, nothing to reach.
  EXPECT_EQ(ThresholdsReached(100, 0), std::vector<int>{});
}

TEST(BudgetAlertsTest, TheLargestCapsDoNotOverflow) {
  const int64_t cap = 1'000'000'000'000'000'000LL;  // kMaxBudgetMicroUsd
  EXPECT_EQ(ThresholdsReached(cap / 10 * 8 - 1, cap), std::vector<int>{});
  EXPECT_EQ(ThresholdsReached(cap / 10 * 8, cap), std::vector<int>{80});
  EXPECT_EQ(ThresholdsReached(cap, cap), (std::vector<int>{80, 100}));
}

Budget KeyDailyBudget() {
  Budget b;
  b.kind = BudgetKind::kKey;
  b.id = "0b7e2a4c-0000-4000-8000-000000000001";
  b.org_id = "org-1";
  b.cap_micro_usd = 5'000'000;
  b.period = ParsePeriod(PeriodUnit::kDay, "2026-12-02");
  return b;
}

TEST(BudgetAlertsTest, TheEventNamesTheBudgetItsPeriodAndTheAmounts) {
  const BudgetAlert alert{"org-1", KeyDailyBudget(), 80, 4'100'000};
  const int64_t now = *ParseRfc3339("2026-12-02T15:04:05Z");
  EXPECT_EQ(BudgetAlertJson(alert, now),
            R"({"type":"budget.threshold_reached","timestamp":"2026-12-02T15:04:05.000Z",)"
            R"("data":{"organization_id":"org-1","budget":{"scope":"key",)"
            R"("key_id":"0b7e2a4c-0000-4000-8000-000000000001","period":"day",)"
            R"("period_start":"2026-12-02T00:00:00Z","resets_at":"2026-12-03T00:00:00Z"},)"
            R"("threshold_percent":80,"limit_micro_usd":5000000,"spent_micro_usd":4100000}})");
}

TEST(BudgetAlertsTest, AnOrganizationsMonthlyBudgetHasNoKey) {
  Budget b;
  b.kind = BudgetKind::kOrg;
  b.id = "org-1";
  b.cap_micro_usd = 10;
  b.period = ParsePeriod(PeriodUnit::kMonth, "2026-12");
  const std::string json = BudgetAlertJson(BudgetAlert{"org-1", b, 100, 10}, 0);
  EXPECT_NE(
      json.find(R"("scope":"organization","key_id":null,"period":"month",)"
                R"("period_start":"2026-12-01T00:00:00Z","resets_at":"2027-01-01T00:00:00Z")"),
      std::string::npos)
      << json;
}

TEST(BudgetAlertsTest, EachBudgetPeriodAndThresholdHasAClaimAndAStableId) {
  InitCrypto();
  const Budget b = KeyDailyBudget();
  EXPECT_EQ(AlertClaimKey(b, 80),
            "tg:budget_alert:key:0b7e2a4c-0000-4000-8000-000000000001:d:2026-12-02:80");
  EXPECT_NE(AlertClaimKey(b, 80), AlertClaimKey(b, 100));
  Budget next_day = b;
  next_day.period = ParsePeriod(PeriodUnit::kDay, "2026-12-03");
  EXPECT_NE(AlertClaimKey(b, 80), AlertClaimKey(next_day, 80));
  const std::string id = AlertMessageId(AlertClaimKey(b, 80));
  EXPECT_EQ(id, AlertMessageId(AlertClaimKey(b, 80)));
  EXPECT_NE(id, AlertMessageId(AlertClaimKey(b, 100)));
  EXPECT_TRUE(id.starts_with("msg_")) << id;
  EXPECT_EQ(id.size(), 36u);
}

}  // namespace
}  // namespace toolgate::billing
