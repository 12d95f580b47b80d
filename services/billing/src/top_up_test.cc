#include "toolgate/billing/top_up.h"

#include <gtest/gtest.h>

namespace toolgate::billing {
namespace {

v1::HttpRequest Request(const std::string& body, const std::string* key = nullptr) {
  v1::HttpRequest r;
  r.set_method("POST");
  r.set_path("/billing/top-ups");
  r.set_body(body);
  if (key) (*r.mutable_headers())["idempotency-key"] = *key;
  return r;
}

v1::Problem ProblemOf(const std::variant<TopUpRequest, v1::Problem>& parsed) {
  EXPECT_TRUE(std::holds_alternative<v1::Problem>(parsed));
  return std::holds_alternative<v1::Problem>(parsed) ? std::get<v1::Problem>(parsed)
                                                     : v1::Problem();
}

TEST(TopUpTest, AcceptsAnAmountAndAKey) {
  std::string key = "order-2027-01-31-0001";
  auto parsed = ParseTopUp(Request(R"({"amount_micro_usd": 5000000})", &key));
  ASSERT_TRUE(std::holds_alternative<TopUpRequest>(parsed));
  EXPECT_EQ(std::get<TopUpRequest>(parsed).amount_micro_usd, 5'000'000);
  EXPECT_EQ(std::get<TopUpRequest>(parsed).idempotency_key, key);
}

TEST(TopUpTest, KeyIsOptional) {
  auto parsed = ParseTopUp(Request(R"({"amount_micro_usd": 1})"));
  ASSERT_TRUE(std::holds_alternative<TopUpRequest>(parsed));
  EXPECT_EQ(std::get<TopUpRequest>(parsed).idempotency_key, "");
}

TEST(TopUpTest, AmountBoundsAreInclusive) {
  EXPECT_TRUE(std::holds_alternative<TopUpRequest>(
      ParseTopUp(Request(R"({"amount_micro_usd": 1000000000000})"))));
  for (const char* body : {R"({"amount_micro_usd": 0})", R"({"amount_micro_usd": -5})",
                           R"({"amount_micro_usd": 1000000000001})", R"({"amount_micro_usd": 1.5})",
                           R"({"amount_micro_usd": "100"})", R"({"amount_micro_usd": 1e30})",
                           R"({})", R"({"amount_micro_usd": null})"}) {
    v1::Problem p = ProblemOf(ParseTopUp(Request(body)));
    EXPECT_EQ(p.status(), 422) << body;
    EXPECT_EQ(p.code(), "validation_failed") << body;
    ASSERT_EQ(p.errors_size(), 1) << body;
    EXPECT_EQ(p.errors(0).field(), "amount_micro_usd") << body;
  }
}

TEST(TopUpTest, BodyMustBeAJsonObject) {
  for (const char* body : {"", "not json", "[1]", "5000"}) {
    v1::Problem p = ProblemOf(ParseTopUp(Request(body)));
    EXPECT_EQ(p.status(), 400) << body;
    EXPECT_EQ(p.code(), "invalid_json") << body;
  }
}

TEST(TopUpTest, IdempotencyKeyRules) {
  EXPECT_EQ(IdempotencyKeyError("a"), std::nullopt);
  EXPECT_EQ(IdempotencyKeyError(std::string(255, 'k')), std::nullopt);
  EXPECT_EQ(IdempotencyKeyError("550e8400-e29b-41d4-a716-446655440000"), std::nullopt);
  EXPECT_NE(IdempotencyKeyError(""), std::nullopt);
  EXPECT_NE(IdempotencyKeyError(std::string(256, 'k')), std::nullopt);
  EXPECT_NE(IdempotencyKeyError("tab\there"), std::nullopt);
  EXPECT_NE(IdempotencyKeyError("caf\xC3\xA9"), std::nullopt);
}

TEST(TopUpTest, EveryBadFieldIsListed) {
  std::string key(256, 'k');
  v1::Problem p = ProblemOf(ParseTopUp(Request(R"({"amount_micro_usd": 0})", &key)));
  EXPECT_EQ(p.status(), 422);
  ASSERT_EQ(p.errors_size(), 2);
  EXPECT_EQ(p.errors(0).field(), "amount_micro_usd");
  EXPECT_EQ(p.errors(1).field(), "Idempotency-Key");
}

}  // namespace
}  // namespace toolgate::billing
