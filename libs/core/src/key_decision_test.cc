#include "toolgate/core/key_decision.h"

#include <gtest/gtest.h>

#include "toolgate/base/time.h"

namespace toolgate::core {
namespace {

const int64_t kNow = *ParseRfc3339("2027-01-01T12:00:00.250Z");
constexpr int64_t kDayMs = 24LL * 3600 * 1000;

KeyRecord Record(std::vector<std::string> scopes) {
  KeyRecord r;
  r.key_id = "key-1";
  r.org_id = "org-1";
  r.org_name = "Acme";
  r.user_id = "user-1";
  r.scopes = std::move(scopes);
  r.expires_at_ms = kNow + kDayMs;
  return r;
}

KeyRecord Token(std::string resource_path, std::vector<std::string> scopes) {
  KeyRecord r = Record(std::move(scopes));
  r.key_id.clear();
  r.grant_id = "grant-1";
  r.client_name = "Claude";
  r.resource_path = std::move(resource_path);
  return r;
}

TEST(KeyDecision, ATokenServesOnlyTheEndpointItIsBoundTo) {
  const std::string a = "/mcp/functions/0f8fad5b-d9cb-469f-a165-70867728950e";
  KeyRecord t = Token(a, {"mcp:read", "mcp:invoke"});
  EXPECT_EQ(CheckKeyForInvoke(&t, kNow, a), std::nullopt);
  EXPECT_EQ(CheckKeyForInvoke(&t, kNow, a + "/1.0.0"), std::nullopt);
  EXPECT_EQ(CheckKeyForInvoke(&t, kNow, "/mcp")->code(), "invalid_token");
  EXPECT_EQ(
      CheckKeyForInvoke(&t, kNow, "/mcp/functions/1f8fad5b-d9cb-469f-a165-70867728950e")->code(),
      "invalid_token");
  EXPECT_EQ(CheckKeyForInvoke(&t, kNow, "")->code(), "invalid_token");  // the REST route
  EXPECT_EQ(CheckKeyForInvoke(&t, kNow, a + "x")->code(), "invalid_token");
  EXPECT_EQ(CheckKeyForInvoke(&t, kNow, a + "/1.0.0/x")->code(), "invalid_token");
  KeyRecord versioned = Token(a + "/1.0.0", {"mcp:invoke"});
  EXPECT_EQ(CheckKeyForInvoke(&versioned, kNow, a)->code(), "invalid_token");
  KeyRecord workspace = Token("/mcp", {"mcp:invoke"});
  EXPECT_EQ(CheckKeyForInvoke(&workspace, kNow, "/mcp"), std::nullopt);
  EXPECT_EQ(CheckKeyForInvoke(&workspace, kNow, a)->code(), "invalid_token");
  KeyRecord revoked = Token(a, {"mcp:invoke"});
  revoked.revoked = true;
  EXPECT_EQ(CheckKey(&revoked, kNow)->code(), "invalid_token");
  KeyRecord none = Token(a, {"invoke"});
  EXPECT_EQ(CheckKeyForInvoke(&none, kNow, a)->code(), "insufficient_scope");
  EXPECT_EQ(McpScopeFor("tools/call"), "mcp:invoke");
  EXPECT_EQ(McpScopeFor("tools/list"), "mcp:read");
  EXPECT_TRUE(IsOAuthAccessToken("tgo_abc"));
  EXPECT_FALSE(IsOAuthAccessToken("tg_abc"));
}

TEST(KeyDecision, CheckKeyVerdicts) {
  EXPECT_EQ(CheckKey(nullptr, kNow)->code(), "invalid_api_key");
  KeyRecord r = Record({"invoke"});
  EXPECT_EQ(CheckKey(&r, kNow), std::nullopt);
  EXPECT_EQ(CheckKey(&r, r.expires_at_ms - 1), std::nullopt);
  auto expired = CheckKey(&r, r.expires_at_ms);
  ASSERT_TRUE(expired);
  EXPECT_EQ(expired->code(), "api_key_expired");
  EXPECT_EQ(expired->status(), 401);
  r.revoked = true;
  EXPECT_EQ(CheckKey(&r, kNow)->code(), "api_key_revoked");
  EXPECT_EQ(CheckKey(&r, r.expires_at_ms)->code(), "api_key_revoked");
}

TEST(KeyDecision, InvokeNeedsInvokeScope) {
  KeyRecord manage_only = Record({"manage"});
  auto p = CheckKeyForInvoke(&manage_only, kNow);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->code(), "insufficient_scope");
  EXPECT_EQ(p->status(), 403);
  // A manage-only key still authenticates management requests.
  EXPECT_EQ(CheckKey(&manage_only, kNow), std::nullopt);
  KeyRecord both = Record({"invoke", "manage"});
  EXPECT_EQ(CheckKeyForInvoke(&both, kNow), std::nullopt);
  EXPECT_EQ(CheckKeyForInvoke(nullptr, kNow)->code(), "invalid_api_key");
}

TEST(KeyDecision, PrincipalRoundTrip) {
  v1::Principal k = PrincipalForKey(Record({"invoke"}));
  EXPECT_EQ(k.org_id(), "org-1");
  EXPECT_EQ(k.org_name(), "Acme");
  EXPECT_EQ(k.user_id(), "user-1");
  EXPECT_EQ(k.key_id(), "key-1");
  ASSERT_EQ(k.scopes_size(), 1);
  EXPECT_EQ(k.scopes(0), "invoke");
  EXPECT_EQ(k.key_expires_at_ms(), kNow + kDayMs);

  KeyRecord back = KeyRecordFromPrincipal(k, true);
  EXPECT_EQ(back.key_id, "key-1");
  EXPECT_EQ(back.org_name, "Acme");
  EXPECT_EQ(back.scopes, std::vector<std::string>{"invoke"});
  EXPECT_EQ(back.expires_at_ms, kNow + kDayMs);
  EXPECT_TRUE(back.revoked);
}

}  // namespace
}  // namespace toolgate::core
