// Prices an agent can read through the real system (docs/api.md "Invoking a tool", "Estimating a
// call"; docs/mcp.md "Prices and costs"): an estimate is the hold of the call that follows it and
// changes nothing; a refused estimate is the call's own refusal; the cost and balance headers are
// the ledger's figures; MCP tools/list entries carry the price and tools/call results the cost.
#include <gtest/gtest.h>

#include <string>

#include "mcp_client.h"
#include "system.h"

namespace toolgate::testing {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem());

constexpr const char* kEcho = "function service_handler(event, context) return event end";
constexpr int kTimeoutMs = 10'000;
constexpr int kMemoryMb = 128;
constexpr int64_t kPrice = 2500;

// The contract's CPU formula restated independently of the implementation, at the timeout.
int64_t ComputeAtTimeout() {
  __int128 num = static_cast<__int128>(kTimeoutMs) * kMemoryMb * 166667;
  __int128 den = static_cast<__int128>(1024) * 10'000'000;
  return static_cast<int64_t>((num + den - 1) / den);
}

struct Key {
  std::string id;
  std::string secret;
};

class PricesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    publisher_ = std::make_unique<Account>(*g_system, "Price Publisher");
    agent_ = std::make_unique<Account>(*g_system, "Price Agent");
    publisher_->TopUp(1'000'000);
    agent_->TopUp(1'000'000);
    function_ = publisher_->CreateFunction(
        "weather", R"("visibility":"public","price_micro_usd":)" + std::to_string(kPrice));
    ASSERT_EQ(publisher_
                  ->PublishLua(function_, "1.0", kEcho,
                               R"("timeout_ms":)" + std::to_string(kTimeoutMs) +
                                   R"(,"memory_mb":)" + std::to_string(kMemoryMb))
                  .status,
              201);
    agent_->AddToWorkspace(function_);
    key_ = NewKey();
  }

  Key NewKey() {
    auto r = agent_->session().Post("/api/v1/api-keys", R"({"name":"agent"})");
    EXPECT_TRUE(r.ok() && r->status == 201) << (r.ok() ? r->body : r.status().ToString());
    if (!r.ok()) return {};
    return {StringField(r->body, "id"), StringField(r->body, "key")};
  }

  http::HttpResponse Estimate(const std::string& key, const std::string& function,
                              const std::string& body = R"({"event":{"city":"Paris"}})",
                              http::HeaderList headers = {}) {
    if (!key.empty()) headers.emplace_back("Authorization", key);
    auto r =
        g_system->Client()->Post("/api/v1/functions/" + function + "/1.0/estimate", body, headers);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : http::HttpResponse{};
  }

  http::HttpResponse Call(const http::HeaderList& headers = {}) {
    return Invoke(*g_system, key_.secret, function_, "1.0", R"({"event":{"city":"Paris"}})",
                  headers);
  }

  void SetDailyLimit(int64_t micro_usd) {
    auto r = agent_->session().Send("PUT", "/api/v1/api-keys/" + key_.id + "/budget",
                                    R"({"daily_micro_usd":)" + std::to_string(micro_usd) + "}");
    ASSERT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : r.status().ToString());
  }

  // The ledger's charge of an execution, as the organization's ledger lists it.
  int64_t LedgerCharge(const std::string& execution_id) {
    for (auto& row : agent_->Ledger()) {
      if (row["execution_id"] == execution_id && row["type"] == "charge") {
        return -std::stoll(row["amount_micro_usd"]);
      }
    }
    ADD_FAILURE() << "no charge for " << execution_id;
    return -1;
  }

  std::unique_ptr<Account> publisher_, agent_;
  std::string function_;
  Key key_;
};

TEST_F(PricesTest, TheEstimateIsTheHoldOfTheCallThatFollowsAndChangesNothing) {
  const int64_t available = agent_->Available();
  auto estimate = Estimate(key_.secret, function_);
  ASSERT_EQ(estimate.status, 200) << estimate.body;
  const int64_t hold = IntField(estimate.body, "max_hold_micro_usd");
  EXPECT_EQ(IntField(estimate.body, "function_micro_usd"), kPrice);
  EXPECT_EQ(IntField(estimate.body, "max_compute_micro_usd"), ComputeAtTimeout());
  EXPECT_EQ(hold, kPrice + ComputeAtTimeout());
  EXPECT_EQ(IntField(estimate.body, "available_micro_usd"), available);
  EXPECT_NE(estimate.body.find(R"("budget_remaining_micro_usd":null,"budget_limit":null)"),
            std::string::npos)
      << estimate.body;
  EXPECT_EQ(estimate.headers.count("x-toolgate-cost"), 0u);
  // Nothing was held, charged or recorded.
  EXPECT_EQ(agent_->Available(), available);
  EXPECT_EQ(agent_->Balance(), 1'000'000);

  // The call's hold is exactly the estimate: a ceiling one below refuses it unrun, the estimate
  // itself lets it through.
  auto below = Call({{"X-Toolgate-Max-Cost", std::to_string(hold - 1)}});
  ASSERT_EQ(below.status, 402) << below.body;
  EXPECT_EQ(StringField(below.body, "code"), "max_cost_exceeded");
  auto at = Call({{"X-Toolgate-Max-Cost", std::to_string(hold)}});
  ASSERT_EQ(at.status, 200) << at.body;
  // With the same ceiling the estimate answers the same.
  EXPECT_EQ(StringField(Estimate(key_.secret, function_, R"({"event":{}})",
                                 {{"X-Toolgate-Max-Cost", std::to_string(hold - 1)}})
                            .body,
                        "code"),
            "max_cost_exceeded");
}

TEST_F(PricesTest, CostAndBalanceHeadersAreTheLedgersFigures) {
  constexpr int64_t kDaily = 100'000;
  SetDailyLimit(kDaily);
  const int64_t available = agent_->Available();
  auto r = Call();
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string execution_id = Member(r.body, "/summary/execution_id");
  const int64_t cost = std::stoll(r.Header("x-toolgate-cost"));
  EXPECT_EQ(cost, LedgerCharge(execution_id.substr(1, execution_id.size() - 2)));
  EXPECT_EQ(cost, kPrice + std::stoll(Member(r.body, "/summary/cost/compute_micro_usd")));
  EXPECT_EQ(std::stoll(r.Header("x-toolgate-balance")), available - cost);
  EXPECT_EQ(std::stoll(r.Header("x-toolgate-balance")), agent_->Available());
  EXPECT_EQ(r.Header("x-toolgate-budget-remaining"),
            std::to_string(kDaily - cost) + "; limit=key_daily");
  auto budget = agent_->session().Get("/api/v1/api-keys/" + key_.id + "/budget");
  ASSERT_TRUE(budget.ok());
  EXPECT_EQ(IntField(budget->body, "spent_today_micro_usd"), cost);

  // A second call: the figures move by exactly its charge.
  auto second = Call();
  ASSERT_EQ(second.status, 200) << second.body;
  const int64_t second_cost = std::stoll(second.Header("x-toolgate-cost"));
  EXPECT_EQ(std::stoll(second.Header("x-toolgate-balance")), available - cost - second_cost);
  EXPECT_EQ(second.Header("x-toolgate-budget-remaining"),
            std::to_string(kDaily - cost - second_cost) + "; limit=key_daily");
  // The estimate now sees the limit's remainder.
  auto estimate = Estimate(key_.secret, function_);
  EXPECT_EQ(IntField(estimate.body, "budget_remaining_micro_usd"), kDaily - cost - second_cost);
  EXPECT_EQ(StringField(estimate.body, "budget_limit"), "key_daily");
}

TEST_F(PricesTest, ARefusedEstimateIsTheRefusalTheCallWouldGet) {
  auto estimate = Estimate(key_.secret, function_);
  const int64_t hold = IntField(estimate.body, "max_hold_micro_usd");
  SetDailyLimit(hold - 1);
  auto over = Estimate(key_.secret, function_);
  ASSERT_EQ(over.status, 402) << over.body;
  EXPECT_EQ(StringField(over.body, "code"), "budget_exceeded");
  EXPECT_FALSE(over.Header("retry-after").empty());
  auto call = Call();
  EXPECT_EQ(call.status, 402);
  EXPECT_EQ(StringField(call.body, "code"), "budget_exceeded");

  EXPECT_EQ(StringField(Estimate(key_.secret, "0b6f8e84-2a53-4d7e-9a70-5e6c61f3d2a1").body, "code"),
            "function_not_found");
  EXPECT_EQ(StringField(Estimate(key_.secret, function_, R"({"nothing":1})").body, "code"),
            "missing_event");
  auto anonymous = Estimate("", function_);
  EXPECT_EQ(anonymous.status, 401);
  EXPECT_EQ(StringField(anonymous.body, "code"), "missing_api_key");

  // An organization that cannot pay hears so before it calls.
  Account poor(*g_system, "Price Poor");
  poor.AddToWorkspace(function_);
  auto broke = Estimate(poor.CreateKey(), function_);
  ASSERT_EQ(broke.status, 402) << broke.body;
  EXPECT_EQ(StringField(broke.body, "code"), "insufficient_balance");
}

TEST_F(PricesTest, McpListsThePriceAndACallsResultItsCost) {
  McpHttp mcp("/mcp", key_.secret);
  ASSERT_EQ(mcp.Initialize("2025-11-25").status, 200);
  auto list = mcp.Request("2", "tools/list");
  ASSERT_EQ(list.status, 200) << list.body;
  const std::string price = "/result/tools/0/_meta/io.toolgate~1price";
  EXPECT_EQ(Member(list.body, price + "/function_micro_usd"), std::to_string(kPrice));
  EXPECT_EQ(Member(list.body, price + "/max_compute_micro_usd"),
            std::to_string(ComputeAtTimeout()));
  EXPECT_EQ(Member(list.body, price + "/max_hold_micro_usd"),
            std::to_string(kPrice + ComputeAtTimeout()));

  auto call = mcp.CallTool("weather", R"({"city":"Paris"})");
  ASSERT_EQ(call.status, 200) << call.body;
  const std::string cost = "/result/_meta/io.toolgate~1cost";
  const std::string execution_id = Member(call.body, cost + "/execution_id");
  ASSERT_GT(execution_id.size(), 2u) << call.body;
  const int64_t total = std::stoll(Member(call.body, cost + "/total_micro_usd"));
  EXPECT_EQ(total, LedgerCharge(execution_id.substr(1, execution_id.size() - 2)));
  EXPECT_EQ(Member(call.body, cost + "/function_micro_usd"), std::to_string(kPrice));
  EXPECT_EQ(std::stoll(Member(call.body, cost + "/available_micro_usd")), agent_->Available());
  EXPECT_EQ(Member(call.body, cost + "/budget_remaining_micro_usd"), "null");

  // Once calls have been made, the list expects what they cost in compute.
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto again = mcp.Request("3", "tools/list");
        return Member(again.body, price + "/expected_compute_micro_usd") != "null";
      },
      30'000, "an expected compute in tools/list"));
  auto again = mcp.Request("4", "tools/list");
  EXPECT_EQ(Member(again.body, price + "/expected_compute_micro_usd"),
            Member(call.body, cost + "/compute_micro_usd"));
}

}  // namespace
}  // namespace toolgate::testing
