// Funding by operator grants (docs/operations.md "Funding", "Operators"): a system started with
// --funding grants, where no member can mint credit and every credit has an operator's name and
// reason on it.
#include <gtest/gtest.h>

#include "system.h"
#include "toolgate/base/crypto.h"

namespace toolgate::testing {
namespace {

const auto* const kEnv =
    ::testing::AddGlobalTestEnvironment(new SharedSystem({"--funding", "grants"}));

std::string Bin() {
  return std::string(TOOLGATE_BIN_DIR) + "/toolgate";
}

// `toolgate ARGS` against the system, with a private configuration directory; stderr merged.
std::pair<int, std::string> Toolgate(const std::string& config, const std::string& args) {
  return RunCommand("env -u TOOLGATE_API_KEY -u TOOLGATE_PROFILE XDG_CONFIG_HOME=" + config +
                    " TOOLGATE_URL=" + g_system->url() + " " + Bin() + " " + args + " 2>&1");
}

Result<http::HttpResponse> Grant(http::HttpClient& client, const std::string& org_id,
                                 const std::string& body, const std::string& key = "") {
  http::HeaderList headers;
  if (!key.empty()) headers.emplace_back("Idempotency-Key", key);
  return client.Post("/api/v1/admin/organizations/" + org_id + "/credits", body, headers);
}

TEST(FundingTest, AMemberCannotTopUpThroughTheApiOrTheCli) {
  Account member(*g_system, "Members");
  auto r = member.session().Post("/api/v1/billing/top-ups", R"({"amount_micro_usd":5000000})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 403) << r->body;
  EXPECT_EQ(StringField(r->body, "code"), "funding_by_grant_only") << r->body;
  EXPECT_EQ(member.Balance(), 0);

  auto balance = member.session().Get("/api/v1/billing/balance");
  ASSERT_TRUE(balance.ok());
  EXPECT_EQ(StringField(balance->body, "funding"), "grants") << balance->body;

  std::string key = member.CreateKey(R"(["manage"])");
  std::string config = g_system->data_dir() + "/cli-member";
  auto [status, out] = RunCommand("env -u TOOLGATE_PROFILE XDG_CONFIG_HOME=" + config +
                                  " TOOLGATE_URL=" + g_system->url() + " TOOLGATE_API_KEY=" + key +
                                  " " + Bin() + " topup --amount 5000000 2>&1");
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find("Credit comes from the operator"), std::string::npos) << out;
  EXPECT_NE(out.find("toolgate admin grant"), std::string::npos) << out;
  EXPECT_EQ(member.Balance(), 0);
}

TEST(FundingTest, AnOperatorsGrantCreditsOnceAndTheLedgerSaysWhoAndWhy) {
  Account member(*g_system, "Granted");
  Operator op = CreateOperator(*g_system);
  ASSERT_NE(op.session, nullptr);
  const std::string body = R"({"amount_micro_usd":2000000,"reason":"pilot customer"})";
  auto first = Grant(*op.session, member.org_id(), body, "grant-pilot-1");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->status, 201) << first->body;
  EXPECT_EQ(StringField(first->body, "organization_id"), member.org_id());
  EXPECT_EQ(IntField(first->body, "balance_micro_usd"), 2'000'000);
  auto again = Grant(*op.session, member.org_id(), body, "grant-pilot-1");
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->status, 201) << again->body;
  EXPECT_EQ(StringField(again->body, "grant_id"), StringField(first->body, "grant_id"));
  // The same key for another amount is not the same grant.
  auto other = Grant(*op.session, member.org_id(),
                     R"({"amount_micro_usd":3000000,"reason":"pilot customer"})", "grant-pilot-1");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->status, 422) << other->body;
  EXPECT_EQ(member.Balance(), 2'000'000);

  auto ledger = member.session().Get("/api/v1/billing/ledger");
  ASSERT_TRUE(ledger.ok() && ledger->status == 200);
  auto doc = Json(ledger->body);
  simdjson::dom::array items;
  ASSERT_EQ(doc.root["items"].get_array().get(items), simdjson::SUCCESS) << ledger->body;
  ASSERT_EQ(items.size(), 1u) << ledger->body;
  std::string_view type, reason, email, user_id;
  int64_t amount = 0;
  ASSERT_EQ(items.at(0)["type"].get_string().get(type), simdjson::SUCCESS);
  EXPECT_EQ(type, "grant");
  ASSERT_EQ(items.at(0)["amount_micro_usd"].get_int64().get(amount), simdjson::SUCCESS);
  EXPECT_EQ(amount, 2'000'000);
  ASSERT_EQ(items.at(0)["reason"].get_string().get(reason), simdjson::SUCCESS);
  EXPECT_EQ(reason, "pilot customer");
  ASSERT_EQ(items.at(0)["granted_by"]["email"].get_string().get(email), simdjson::SUCCESS);
  EXPECT_EQ(email, op.email);
  ASSERT_EQ(items.at(0)["granted_by"]["user_id"].get_string().get(user_id), simdjson::SUCCESS);
  EXPECT_EQ(user_id, op.user_id);

  // The CLI: an operator signed in with `toolgate login` grants in USD.
  std::string config = g_system->data_dir() + "/cli-operator";
  auto [login_status, login_out] =
      Toolgate(config, "login --email " + op.email + " --password " + op.password);
  ASSERT_EQ(login_status, 0) << login_out;
  auto [status, out] = Toolgate(config, "admin grant --organization " + member.org_id() +
                                            " --amount-usd 1.5 --reason 'conference credit'");
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(member.Balance(), 3'500'000);
}

TEST(FundingTest, OnlyAnOperatorMayGrantAndOnlyToAnOrganizationThatExists) {
  Account member(*g_system, "Self-granting");
  const std::string body = R"({"amount_micro_usd":1000000,"reason":"because"})";
  auto own = Grant(member.session(), member.org_id(), body);
  ASSERT_TRUE(own.ok());
  EXPECT_EQ(own->status, 403) << own->body;
  EXPECT_EQ(StringField(own->body, "code"), "forbidden");

  Operator op = CreateOperator(*g_system);
  ASSERT_NE(op.session, nullptr);
  // An operator's API key is not the operator: a grant is a signed-in person's decision.
  auto created = op.session->Post("/api/v1/api-keys", R"({"name":"ops","scopes":["manage"]})");
  ASSERT_TRUE(created.ok() && created->status == 201) << (created.ok() ? created->body : "");
  auto key_client = g_system->Client();
  key_client->SetDefaultHeader("Authorization", "Bearer " + StringField(created->body, "key"));
  auto by_key = Grant(*key_client, member.org_id(), body);
  ASSERT_TRUE(by_key.ok());
  EXPECT_EQ(by_key->status, 403) << by_key->body;

  auto unknown = Grant(*op.session, NewUuid(), body);
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->status, 404) << unknown->body;
  auto no_reason = Grant(*op.session, member.org_id(), R"({"amount_micro_usd":1000000})");
  ASSERT_TRUE(no_reason.ok());
  EXPECT_EQ(no_reason->status, 422) << no_reason->body;
  auto bad_amount = Grant(*op.session, member.org_id(), R"({"amount_micro_usd":0,"reason":"r"})");
  ASSERT_TRUE(bad_amount.ok());
  EXPECT_EQ(bad_amount->status, 422) << bad_amount->body;
  EXPECT_EQ(member.Balance(), 0);
}

TEST(FundingTest, SigningUpCannotMakeAnOperator) {
  auto client = g_system->Client();
  client->SetDefaultHeader("X-Toolgate-CSRF", "1");
  std::string email = "claims-" + HexEncode(RandomBytes(4)) + "@example.com";
  auto r = client->Post("/api/v1/auth/signup",
                        R"({"email":")" + email +
                            R"(","password":"correct horse battery","organization":"Claims",)"
                            R"("is_operator":true,"operator":true,"role":"operator"})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string org_id;
  if (r->status == 201) {
    auto doc = Json(r->body);
    std::string_view id;
    if (doc.root["organization"]["id"].get(id) == simdjson::SUCCESS) org_id = std::string(id);
  }
  // Whether the extra members are refused or ignored, the account is no operator.
  if (!org_id.empty()) {
    auto grant = Grant(*client, org_id, R"({"amount_micro_usd":1000000,"reason":"mine"})");
    ASSERT_TRUE(grant.ok());
    EXPECT_EQ(grant->status, 403) << grant->body;
  } else {
    EXPECT_EQ(r->status, 422) << r->body;
  }
  // And creating an operator twice with one email is refused.
  Operator op = CreateOperator(*g_system);
  auto [status, out] = RunCommand(Bin() + " admin create --email " + op.email + " --data-dir " +
                                  g_system->data_dir() + " 2>&1");
  EXPECT_EQ(status, 1) << out;
}

}  // namespace
}  // namespace toolgate::testing
