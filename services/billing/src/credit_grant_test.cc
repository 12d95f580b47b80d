#include "toolgate/billing/credit_grant.h"

#include <gtest/gtest.h>

#include "toolgate/billing/funding.h"

namespace toolgate::billing {
namespace {

constexpr char kOrg[] = "0b6c5b1e-4c1f-4f5e-9d33-2a7e0c6f9a11";

v1::HttpRequest Request(const std::string& body, const std::string* key = nullptr) {
  v1::HttpRequest r;
  r.set_method("POST");
  r.set_path(std::string("/admin/organizations/") + kOrg + "/credits");
  r.set_body(body);
  if (key) (*r.mutable_headers())["idempotency-key"] = *key;
  return r;
}

v1::Problem ProblemOf(const std::variant<CreditGrantRequest, v1::Problem>& parsed) {
  EXPECT_TRUE(std::holds_alternative<v1::Problem>(parsed));
  return std::holds_alternative<v1::Problem>(parsed) ? std::get<v1::Problem>(parsed)
                                                     : v1::Problem();
}

v1::Principal Operator() {
  v1::Principal p;
  p.set_org_id(kOrg);
  p.set_user_id("5d1c0f8e-2b7a-4a53-8f0e-6c2d9b4e7a10");
  p.set_is_operator(true);
  return p;
}

TEST(CreditGrantTest, AcceptsAnAmountAReasonAndAKey) {
  std::string key = "grant-1";
  auto parsed = ParseCreditGrant(
      Request(R"({"amount_micro_usd": 5000000, "reason": "  pilot customer  "})", &key),
      "0B6C5B1E-4C1F-4F5E-9D33-2A7E0C6F9A11");
  ASSERT_TRUE(std::holds_alternative<CreditGrantRequest>(parsed));
  const auto& grant = std::get<CreditGrantRequest>(parsed);
  EXPECT_EQ(grant.org_id, kOrg);  // lower case: the ledger's key
  EXPECT_EQ(grant.amount_micro_usd, 5'000'000);
  EXPECT_EQ(grant.reason, "pilot customer");
  EXPECT_EQ(grant.idempotency_key, "grant-1");
}

TEST(CreditGrantTest, AnOrganizationIdThatIsNotAUuidIsNotFound) {
  auto problem =
      ProblemOf(ParseCreditGrant(Request(R"({"amount_micro_usd": 1, "reason": "x"})"), "acme"));
  EXPECT_EQ(problem.code(), "not_found");
  EXPECT_EQ(problem.status(), 404);
}

TEST(CreditGrantTest, ABodyThatIsNotAnObjectIsInvalidJson) {
  EXPECT_EQ(ProblemOf(ParseCreditGrant(Request("[1]"), kOrg)).code(), "invalid_json");
  EXPECT_EQ(ProblemOf(ParseCreditGrant(Request("{"), kOrg)).code(), "invalid_json");
}

TEST(CreditGrantTest, EveryBadFieldIsNamed) {
  std::string bad_key(256, 'k');
  auto problem = ProblemOf(
      ParseCreditGrant(Request(R"({"amount_micro_usd": 0, "reason": "   "})", &bad_key), kOrg));
  EXPECT_EQ(problem.code(), "validation_failed");
  EXPECT_EQ(problem.status(), 422);
  ASSERT_EQ(problem.errors_size(), 3);
  EXPECT_EQ(problem.errors(0).field(), "amount_micro_usd");
  EXPECT_EQ(problem.errors(1).field(), "reason");
  EXPECT_EQ(problem.errors(2).field(), "Idempotency-Key");
}

TEST(CreditGrantTest, AReasonIsRequiredShortAndPrintable) {
  for (const char* body : {
           R"({"amount_micro_usd": 1})",
           R"({"amount_micro_usd": 1, "reason": 7})",
           R"({"amount_micro_usd": 1, "reason": ""})",
           R"({"amount_micro_usd": 1, "reason": "line\nbreak"})",
       }) {
    auto problem = ProblemOf(ParseCreditGrant(Request(body), kOrg));
    ASSERT_EQ(problem.errors_size(), 1) << body;
    EXPECT_EQ(problem.errors(0).field(), "reason") << body;
  }
  std::string long_reason(kMaxGrantReasonLength + 1, 'r');
  auto problem = ProblemOf(ParseCreditGrant(
      Request(R"({"amount_micro_usd": 1, "reason": ")" + long_reason + "\"}"), kOrg));
  ASSERT_EQ(problem.errors_size(), 1);
  EXPECT_EQ(problem.errors(0).field(), "reason");
}

TEST(CreditGrantTest, AmountsOutsideTheTopUpRangeAreRefused) {
  for (const char* amount : {"-5", "1.5", "\"5\"", "1000000000001"}) {
    auto problem = ProblemOf(ParseCreditGrant(
        Request(std::string(R"({"reason": "r", "amount_micro_usd": )") + amount + "}"), kOrg));
    ASSERT_EQ(problem.errors_size(), 1) << amount;
    EXPECT_EQ(problem.errors(0).field(), "amount_micro_usd") << amount;
  }
}

TEST(CreditGrantTest, OnlyASignedInOperatorMayGrant) {
  EXPECT_FALSE(GrantRefusal(Operator()).has_value());

  v1::Principal member = Operator();
  member.set_is_operator(false);
  v1::Principal key = Operator();
  key.set_key_id("9f0d7c1e-0000-4000-8000-000000000001");
  v1::Principal token = Operator();
  token.set_grant_id("9f0d7c1e-0000-4000-8000-000000000002");
  v1::Principal no_user = Operator();
  no_user.clear_user_id();
  for (const v1::Principal& p : {member, key, token, no_user}) {
    auto refusal = GrantRefusal(p);
    ASSERT_TRUE(refusal.has_value()) << p.ShortDebugString();
    EXPECT_EQ(refusal->code(), "forbidden");
    EXPECT_EQ(refusal->status(), 403);
  }
}

TEST(FundingTest, MembersTopUpOnlyWithPlayMoney) {
  EXPECT_FALSE(TopUpRefusal(FundingMode::kDemo).has_value());
  for (FundingMode mode : {FundingMode::kGrants, FundingMode::kCheckout}) {
    auto refusal = TopUpRefusal(mode);
    ASSERT_TRUE(refusal.has_value()) << FundingModeName(mode);
    EXPECT_EQ(refusal->code(), "funding_by_grant_only");
    EXPECT_EQ(refusal->status(), 403);
    EXPECT_NE(refusal->detail().find("operator"), std::string::npos) << refusal->detail();
  }
}

}  // namespace
}  // namespace toolgate::billing
