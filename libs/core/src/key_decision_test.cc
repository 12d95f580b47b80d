#include "toolgate/core/key_decision.h"

#include <gtest/gtest.h>

#include "toolgate/base/time.h"

namespace toolgate::core {
namespace {

const int64_t kNow = *ParseRfc3339("2027-01-01T12:00:00.250Z");
constexpr int64_t kDayMs = 24LL * 3600 * 1000;

KeyRecord Record(std::vector<std::string> scopes) {
  return KeyRecord{"key-1", "org-1", "Acme", "user-1", std::move(scopes), kNow + kDayMs, false};
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
