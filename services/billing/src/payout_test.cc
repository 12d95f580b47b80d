#include "toolgate/billing/payout.h"

#include <gtest/gtest.h>

#include "toolgate/billing/credit_grant.h"

namespace toolgate::billing {
namespace {

constexpr char kOrg[] = "0b6c5b1e-4c1f-4f5e-9d33-2a7e0c6f9a11";

v1::HttpRequest Request(const std::string& body, const std::string* key = nullptr) {
  v1::HttpRequest r;
  r.set_method("POST");
  r.set_body(body);
  if (key) (*r.mutable_headers())["idempotency-key"] = *key;
  return r;
}

v1::Problem ProblemOf(const std::variant<PayoutRequest, v1::Problem>& parsed) {
  EXPECT_TRUE(std::holds_alternative<v1::Problem>(parsed));
  return std::holds_alternative<v1::Problem>(parsed) ? std::get<v1::Problem>(parsed)
                                                     : v1::Problem();
}

TEST(PayoutRequestTest, AcceptsAnAmountAReferenceAndAKey) {
  std::string key = "payout-2026-12";
  auto parsed = ParsePayout(
      Request(R"({"amount_micro_usd": 2500000, "reference": "  SEPA 2026-12-01 #4711 "})", &key),
      "0B6C5B1E-4C1F-4F5E-9D33-2A7E0C6F9A11");
  ASSERT_TRUE(std::holds_alternative<PayoutRequest>(parsed));
  const auto& payout = std::get<PayoutRequest>(parsed);
  EXPECT_EQ(payout.org_id, kOrg);
  EXPECT_EQ(payout.amount_micro_usd, 2'500'000);
  EXPECT_EQ(payout.reference, "SEPA 2026-12-01 #4711");
  EXPECT_EQ(payout.idempotency_key, key);
}

TEST(PayoutRequestTest, RefusesEachBadFieldAndRecordsNothing) {
  EXPECT_EQ(ProblemOf(ParsePayout(Request("[]"), kOrg)).code(), "invalid_json");
  EXPECT_EQ(ProblemOf(ParsePayout(Request("{}"), "not-a-uuid")).code(), "not_found");
  v1::Problem missing = ProblemOf(ParsePayout(Request("{}"), kOrg));
  EXPECT_EQ(missing.status(), 422);
  ASSERT_EQ(missing.errors_size(), 2);
  EXPECT_EQ(missing.errors(0).field(), "amount_micro_usd");
  EXPECT_EQ(missing.errors(1).field(), "reference");
  for (const char* body : {R"({"amount_micro_usd": 0, "reference": "r"})",
                           R"({"amount_micro_usd": -5, "reference": "r"})",
                           R"({"amount_micro_usd": 1.5, "reference": "r"})",
                           R"({"amount_micro_usd": "100", "reference": "r"})",
                           R"({"amount_micro_usd": 1000000000001, "reference": "r"})"}) {
    v1::Problem p = ProblemOf(ParsePayout(Request(body), kOrg));
    ASSERT_EQ(p.errors_size(), 1) << body;
    EXPECT_EQ(p.errors(0).field(), "amount_micro_usd") << body;
  }
  for (std::string reference :
       {std::string("\"   \""), std::string("7"), "\"" + std::string(201, 'r') + "\"",
        std::string("\"a\\u0007b\"")}) {
    v1::Problem p = ProblemOf(
        ParsePayout(Request(R"({"amount_micro_usd": 5, "reference": )" + reference + "}"), kOrg));
    ASSERT_EQ(p.errors_size(), 1) << reference;
    EXPECT_EQ(p.errors(0).field(), "reference") << reference;
  }
  std::string bad_key(256, 'k');
  v1::Problem key = ProblemOf(
      ParsePayout(Request(R"({"amount_micro_usd": 5, "reference": "r"})", &bad_key), kOrg));
  EXPECT_EQ(key.errors(0).field(), "Idempotency-Key");
}

TEST(PayoutRuleTest, PaysAtMostTheUnpaidEarningsTheBalanceStillHolds) {
  const Payable payable{10'000, 4'000, 8'000};  // 6,000 unpaid, all of it in the balance
  EXPECT_FALSE(PayoutRefusal(6'000, payable));
  EXPECT_FALSE(PayoutRefusal(1, payable));
  auto refused = PayoutRefusal(6'001, payable);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->code(), "payout_exceeds_payable");
  EXPECT_EQ(refused->status(), 409);
  EXPECT_NE(refused->detail().find("at most 6000 micro-USD"), std::string::npos)
      << refused->detail();
  // Spent on its own calls: only what is left may go.
  const Payable spent{10'000, 4'000, 2'500};
  EXPECT_FALSE(PayoutRefusal(2'500, spent));
  EXPECT_TRUE(PayoutRefusal(2'501, spent));
  // Granted credit alone is never paid out.
  EXPECT_TRUE(PayoutRefusal(1, Payable{0, 0, 1'000'000}));
  // Paid out already: nothing twice.
  EXPECT_TRUE(PayoutRefusal(1, Payable{10'000, 10'000, 50'000}));

  v1::Problem held = PayoutExceedsAvailable(6'000, 1'200);
  EXPECT_EQ(held.code(), "payout_exceeds_available");
  EXPECT_EQ(held.status(), 409);
}

TEST(PayoutRuleTest, OnlyASignedInOperatorMayRecordOne) {
  v1::Principal op;
  op.set_org_id(kOrg);
  op.set_user_id("5d1c0f8e-2b7a-4a53-8f0e-6c2d9b4e7a10");
  op.set_is_operator(true);
  EXPECT_FALSE(OperatorRefusal(op, "record a payout"));
  v1::Principal with_key = op;
  with_key.set_key_id("key-1");
  auto refused = OperatorRefusal(with_key, "record a payout");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status(), 403);
  EXPECT_NE(refused->detail().find("record a payout"), std::string::npos);
  v1::Principal member = op;
  member.set_is_operator(false);
  EXPECT_TRUE(OperatorRefusal(member, "record a payout"));
  v1::Principal app = op;
  app.set_grant_id("9d1c0f8e-2b7a-4a53-8f0e-6c2d9b4e7a10");
  EXPECT_TRUE(OperatorRefusal(app, "record a payout"));
}

}  // namespace
}  // namespace toolgate::billing
