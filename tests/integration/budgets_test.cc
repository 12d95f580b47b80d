// Spending limits and X-Toolgate-Max-Cost through the real API (docs/api.md "Spending limits"):
// PUT and GET of a key's and the organization's limits, a call refused with budget_exceeded and
// nothing charged, a call refused with max_cost_exceeded before it ran, and the usage report.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "system.h"
#include "toolgate/base/time.h"

namespace toolgate::testing {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem());

constexpr const char* kEcho = "function service_handler(event, context) return event end";
constexpr int kTimeoutMs = 10'000;
constexpr int kMemoryMb = 128;

// The contract's CPU formula restated independently of the implementation:
// max(1, ceil(billed_ms × memory_mb / 1024 × 0.0166667)). A hold is it at the version's timeout
// (the caller's own function: no fee).
int64_t ExpectedCompute(int64_t runtime_ms, int64_t memory_mb) {
  int64_t billed = std::max<int64_t>(1, runtime_ms);
  __int128 num = static_cast<__int128>(billed) * memory_mb * 166667;
  __int128 den = static_cast<__int128>(1024) * 10'000'000;
  return std::max<int64_t>(1, static_cast<int64_t>((num + den - 1) / den));
}
const int64_t kHold = ExpectedCompute(kTimeoutMs, kMemoryMb);

struct Key {
  std::string id;
  std::string secret;
};

class BudgetsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    account_ = std::make_unique<Account>(*g_system, "Budgets");
    account_->TopUp(10'000'000);
    function_id_ = account_->CreateFunction("echo");
    ASSERT_EQ(account_
                  ->PublishLua(function_id_, "1.0", kEcho,
                               R"("timeout_ms":)" + std::to_string(kTimeoutMs) +
                                   R"(,"memory_mb":)" + std::to_string(kMemoryMb))
                  .status,
              201);
  }

  Key NewKey(Account& account) {
    auto r = account.session().Post("/api/v1/api-keys", R"({"name":"limited"})");
    EXPECT_TRUE(r.ok() && r->status == 201) << (r.ok() ? r->body : r.status().ToString());
    if (!r.ok()) return {};
    return {StringField(r->body, "id"), StringField(r->body, "key")};
  }

  http::HttpResponse Call(const Key& key,
                          const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    return Invoke(*g_system, key.secret, function_id_, "1.0", R"({"event":{"n":1}})", headers);
  }

  static int64_t TotalOf(const http::HttpResponse& r) {
    auto doc = Json(r.body);
    int64_t total = -1;
    EXPECT_FALSE(doc.root["summary"]["cost"]["total_micro_usd"].get(total)) << r.body;
    return total;
  }

  http::HttpResponse Do(Account& account, const std::string& method, const std::string& path,
                        const std::string& body = "") {
    auto r = account.session().Send(method, path, body);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : http::HttpResponse{};
  }

  // Executions of the organization, as GET /executions lists them on its first page.
  size_t ExecutionCount() {
    auto r = Do(*account_, "GET", "/api/v1/executions?limit=100");
    EXPECT_EQ(r.status, 200) << r.body;
    auto doc = Json(r.body);
    simdjson::dom::array items;
    if (doc.root["items"].get(items)) return 0;
    return items.size();
  }

  std::unique_ptr<Account> account_;
  std::string function_id_;
};

TEST_F(BudgetsTest, AKeysDailyLimitRefusesTheCallThatWouldPassItAndChargesNothing) {
  const Key key = NewKey(*account_);
  const std::string path = "/api/v1/api-keys/" + key.id + "/budget";
  auto unset = Do(*account_, "GET", path);
  ASSERT_EQ(unset.status, 200) << unset.body;
  EXPECT_EQ(unset.body,
            R"({"daily_micro_usd":null,"monthly_micro_usd":null,"spent_today_micro_usd":0,)"
            R"("spent_this_month_micro_usd":0})");

  // Exactly one hold fits: once the first call is charged (or still held), a second cannot.
  auto set = Do(*account_, "PUT", path, R"({"daily_micro_usd":)" + std::to_string(kHold) + "}");
  ASSERT_EQ(set.status, 200) << set.body;
  EXPECT_EQ(IntField(set.body, "daily_micro_usd"), kHold);
  EXPECT_NE(set.body.find(R"("monthly_micro_usd":null)"), std::string::npos) << set.body;

  auto first = Call(key);
  ASSERT_EQ(first.status, 200) << first.body;
  const int64_t charged = TotalOf(first);
  const int64_t balance = account_->Balance();
  const size_t executions = ExecutionCount();

  auto refused = Call(key);
  ASSERT_EQ(refused.status, 402) << refused.body;
  EXPECT_EQ(StringField(refused.body, "code"), "budget_exceeded");
  const std::string detail = StringField(refused.body, "detail");
  EXPECT_NE(detail.find("API key's daily spending limit"), std::string::npos) << detail;
  const std::string tomorrow =
      FormatRfc3339((NowMs() / 86'400'000 + 1) * 86'400'000);  // the next UTC midnight
  EXPECT_NE(detail.find("resets at " + tomorrow), std::string::npos) << detail;
  auto retry_after = refused.headers.find("retry-after");
  ASSERT_NE(retry_after, refused.headers.end());
  EXPECT_GE(std::stoll(retry_after->second), 1);
  EXPECT_LE(std::stoll(retry_after->second), 86'400);
  // Nothing charged, nothing recorded.
  EXPECT_EQ(account_->Balance(), balance);
  EXPECT_EQ(account_->Available(), balance);
  EXPECT_EQ(ExecutionCount(), executions);

  auto shown = Do(*account_, "GET", path);
  ASSERT_EQ(shown.status, 200);
  EXPECT_EQ(IntField(shown.body, "spent_today_micro_usd"), charged);
  EXPECT_EQ(IntField(shown.body, "spent_this_month_micro_usd"), charged);

  // Raising the limit lets the key through at once (this replica answered the PUT).
  ASSERT_EQ(
      Do(*account_, "PUT", path, R"({"daily_micro_usd":null,"monthly_micro_usd":null})").status,
      200);
  EXPECT_EQ(Call(key).status, 200);
}

TEST_F(BudgetsTest, TheOrganizationsLimitCoversEveryKey) {
  const Key a = NewKey(*account_), b = NewKey(*account_);
  auto set = Do(*account_, "PUT", "/api/v1/billing/budget",
                R"({"daily_micro_usd":)" + std::to_string(kHold) + "}");
  ASSERT_EQ(set.status, 200) << set.body;
  ASSERT_EQ(Call(a).status, 200);
  auto refused = Call(b);
  ASSERT_EQ(refused.status, 402) << refused.body;
  EXPECT_EQ(StringField(refused.body, "code"), "budget_exceeded");
  EXPECT_NE(StringField(refused.body, "detail").find("organization's daily spending limit"),
            std::string::npos)
      << refused.body;
  auto shown = Do(*account_, "GET", "/api/v1/billing/budget");
  ASSERT_EQ(shown.status, 200);
  EXPECT_GE(IntField(shown.body, "spent_today_micro_usd"), 1);
  ASSERT_EQ(Do(*account_, "PUT", "/api/v1/billing/budget", "{}").status, 200);
  EXPECT_EQ(Call(b).status, 200);
}

TEST_F(BudgetsTest, AnotherOrganizationsLimitOnAKeyIdDoesNotApplyToTheKey) {
  const Key key = NewKey(*account_);
  Account other(*g_system, "Other");
  auto set = Do(other, "PUT", "/api/v1/api-keys/" + key.id + "/budget", R"({"daily_micro_usd":1})");
  ASSERT_EQ(set.status, 200) << set.body;
  EXPECT_EQ(Call(key).status, 200);
  // And the owner still sees no limit on it.
  auto shown = Do(*account_, "GET", "/api/v1/api-keys/" + key.id + "/budget");
  EXPECT_NE(shown.body.find(R"("daily_micro_usd":null)"), std::string::npos) << shown.body;
}

TEST_F(BudgetsTest, BadLimitsAreRefused) {
  for (const char* body :
       {R"({"daily_micro_usd":0})", R"({"monthly_micro_usd":"5"})", R"({"daily_micro_usd":1.5})"}) {
    auto r = Do(*account_, "PUT", "/api/v1/billing/budget", body);
    EXPECT_EQ(r.status, 422) << body << " " << r.body;
  }
  EXPECT_EQ(Do(*account_, "PUT", "/api/v1/billing/budget", "[").status, 400);
  EXPECT_EQ(Do(*account_, "GET", "/api/v1/api-keys/not-a-key/budget").status, 404);
}

TEST_F(BudgetsTest, AMaxCostBelowTheHoldRefusesTheCallUnrun) {
  const Key key = NewKey(*account_);
  const int64_t balance = account_->Balance();
  const size_t executions = ExecutionCount();
  auto refused = Call(key, {{"X-Toolgate-Max-Cost", std::to_string(kHold - 1)}});
  ASSERT_EQ(refused.status, 402) << refused.body;
  EXPECT_EQ(StringField(refused.body, "code"), "max_cost_exceeded");
  EXPECT_NE(StringField(refused.body, "detail").find(std::to_string(kHold)), std::string::npos)
      << refused.body;
  EXPECT_EQ(account_->Balance(), balance);
  EXPECT_EQ(account_->Available(), balance);
  EXPECT_EQ(ExecutionCount(), executions);

  EXPECT_EQ(Call(key, {{"X-Toolgate-Max-Cost", std::to_string(kHold)}}).status, 200);
  for (const char* bad : {"0", "-1", "12abc", "1000000000001"}) {
    auto r = Call(key, {{"X-Toolgate-Max-Cost", bad}});
    EXPECT_EQ(r.status, 400) << bad << " " << r.body;
  }
}

TEST_F(BudgetsTest, TheUsageReportGroupsTheOrganizationsSpend) {
  const Key a = NewKey(*account_), b = NewKey(*account_);
  auto ra1 = Call(a), ra2 = Call(a), rb = Call(b);
  ASSERT_EQ(ra1.status, 200);
  ASSERT_EQ(ra2.status, 200);
  ASSERT_EQ(rb.status, 200);
  const int64_t spent_a = TotalOf(ra1) + TotalOf(ra2), spent_b = TotalOf(rb);

  auto by_key = Do(*account_, "GET", "/api/v1/billing/usage?group_by=key");
  ASSERT_EQ(by_key.status, 200) << by_key.body;
  auto doc = Json(by_key.body);
  simdjson::dom::array items;
  ASSERT_FALSE(doc.root["items"].get(items)) << by_key.body;
  int found = 0;
  for (auto item : items) {
    std::string_view id;
    if (item["key_id"].get(id)) continue;
    int64_t calls = 0, spent = 0;
    ASSERT_FALSE(item["calls"].get(calls));
    ASSERT_FALSE(item["spent_micro_usd"].get(spent));
    if (id == a.id) {
      ++found;
      EXPECT_EQ(calls, 2);
      EXPECT_EQ(spent, spent_a);
    } else if (id == b.id) {
      ++found;
      EXPECT_EQ(calls, 1);
      EXPECT_EQ(spent, spent_b);
    }
  }
  EXPECT_EQ(found, 2) << by_key.body;

  auto by_function = Do(*account_, "GET", "/api/v1/billing/usage?group_by=function");
  ASSERT_EQ(by_function.status, 200);
  EXPECT_NE(by_function.body.find(R"({"function_id":")" + function_id_ +
                                  R"(","calls":3,)"
                                  R"("spent_micro_usd":)" +
                                  std::to_string(spent_a + spent_b) + "}"),
            std::string::npos)
      << by_function.body;

  auto by_day = Do(*account_, "GET", "/api/v1/billing/usage?group_by=day");
  ASSERT_EQ(by_day.status, 200);
  const std::string today = FormatRfc3339(NowMs()).substr(0, 10);
  EXPECT_NE(by_day.body.find(R"({"day":")" + today + R"(","calls":3,)"), std::string::npos)
      << by_day.body;

  // Another organization sees none of it.
  Account other(*g_system, "Nosy");
  auto theirs = Do(other, "GET", "/api/v1/billing/usage?group_by=function");
  ASSERT_EQ(theirs.status, 200);
  EXPECT_EQ(theirs.body.find(function_id_), std::string::npos) << theirs.body;

  EXPECT_EQ(Do(*account_, "GET", "/api/v1/billing/usage?group_by=week").status, 422);
  EXPECT_EQ(Do(*account_, "GET", "/api/v1/billing/usage?from=yesterday").status, 422);
}

}  // namespace
}  // namespace toolgate::testing
