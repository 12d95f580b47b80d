#include "toolgate/auth/key_rules.h"

#include <gtest/gtest.h>

#include "toolgate/base/crypto.h"
#include "toolgate/base/time.h"

namespace toolgate::auth {
namespace {

const int64_t kNow = *ParseRfc3339("2027-01-01T12:00:00.250Z");

class KeyRulesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { InitCrypto(); }
};

TEST_F(KeyRulesTest, GeneratedKeyFormat) {
  GeneratedKey k = GenerateApiKey();
  ASSERT_EQ(k.key.size(), 46u);  // "tg_" + 43 characters of base64url
  EXPECT_EQ(k.key.rfind("tg_", 0), 0u);
  for (char c : k.key.substr(3)) {
    EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') << c;
  }
  EXPECT_EQ(k.prefix, k.key.substr(0, 11));
  EXPECT_EQ(k.sha256, Sha256(k.key));
  EXPECT_EQ(k.sha256.size(), 32u);
  EXPECT_NE(GenerateApiKey().key, k.key);
}

TEST_F(KeyRulesTest, PrefixIsFirstElevenCharacters) {
  EXPECT_EQ(KeyPrefix("tg_abcdefghijklmnop"), "tg_abcdefgh");
  EXPECT_EQ(KeyPrefix("tg_abc"), "tg_abc");
}

TEST_F(KeyRulesTest, StatusAtBoundaries) {
  const int64_t expires = kNow + 30 * kDayMs;
  auto at = [&](int64_t now) { return ComputeKeyStatus(expires, false, now); };
  EXPECT_EQ(at(expires - kExpiringWindowMs - 1), KeyStatus::kActive);
  EXPECT_EQ(at(expires - kExpiringWindowMs), KeyStatus::kExpiring);  // 14 days left exactly
  EXPECT_EQ(at(expires - 1), KeyStatus::kExpiring);
  EXPECT_EQ(at(expires), KeyStatus::kExpired);
  EXPECT_EQ(at(expires + kDayMs), KeyStatus::kExpired);
  // Revocation wins over every other state.
  EXPECT_EQ(ComputeKeyStatus(expires, true, kNow), KeyStatus::kRevoked);
  EXPECT_EQ(ComputeKeyStatus(expires, true, expires + 1), KeyStatus::kRevoked);
}

TEST_F(KeyRulesTest, StatusNames) {
  EXPECT_EQ(KeyStatusName(KeyStatus::kActive), "active");
  EXPECT_EQ(KeyStatusName(KeyStatus::kExpiring), "expiring");
  EXPECT_EQ(KeyStatusName(KeyStatus::kExpired), "expired");
  EXPECT_EQ(KeyStatusName(KeyStatus::kRevoked), "revoked");
}

TEST_F(KeyRulesTest, DefaultExpiryIsNinetyDaysInWholeSeconds) {
  auto e = ResolveKeyExpiry(std::nullopt, kNow);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(*e, kNow - 250 + kDefaultKeyLifetimeMs);
  EXPECT_EQ(FormatRfc3339(*e), "2027-04-01T12:00:00Z");
}

TEST_F(KeyRulesTest, RequestedExpiryWithinTwoYears) {
  auto e = ResolveKeyExpiry("2027-06-30T00:00:00Z", kNow);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(FormatRfc3339(*e), "2027-06-30T00:00:00Z");
  // Two calendar years, 2028 being a leap year: 731 days.
  EXPECT_TRUE(ResolveKeyExpiry("2029-01-01T12:00:00Z", kNow).ok());
  EXPECT_TRUE(ResolveKeyExpiry("2027-01-01T12:00:02Z", kNow).ok());
  auto fraction = ResolveKeyExpiry("2027-06-30T00:00:00.999Z", kNow);
  ASSERT_TRUE(fraction.ok());
  EXPECT_EQ(FormatRfc3339Millis(*fraction), "2027-06-30T00:00:00.000Z");
}

TEST_F(KeyRulesTest, RejectsPastUnparsableAndTooDistantExpiry) {
  for (const char* bad : {"2026-12-31T00:00:00Z", "2027-01-01T12:00:00Z",
                          // in the future by less than a second: truncated, it is not.
                          "2027-01-01T12:00:00.900Z", "next year", "", "2027-02-30T00:00:00Z",
                          // 731 days (two years spanning the leap day of 2028) and a second.
                          "2029-01-01T12:00:01Z"}) {
    auto e = ResolveKeyExpiry(std::string(bad), kNow);
    EXPECT_FALSE(e.ok()) << bad;
    EXPECT_EQ(e.status().code(), Status::Code::kInvalidArgument) << bad;
    EXPECT_FALSE(e.status().message().empty());
  }
}

TEST_F(KeyRulesTest, ScopesDefaultToInvoke) {
  auto s = ResolveScopes(std::nullopt);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, std::vector<std::string>{"invoke"});
}

TEST_F(KeyRulesTest, ScopesAreCanonicalSubset) {
  using V = std::vector<std::string>;
  EXPECT_EQ(*ResolveScopes(V{"manage"}), V{"manage"});
  EXPECT_EQ(*ResolveScopes(V{"manage", "invoke"}), (V{"invoke", "manage"}));
  EXPECT_EQ(*ResolveScopes(V{"invoke", "invoke"}), V{"invoke"});
  EXPECT_FALSE(ResolveScopes(V{}).ok());
  EXPECT_FALSE(ResolveScopes(V{"invoke", "admin"}).ok());
  EXPECT_FALSE(ResolveScopes(V{"Invoke"}).ok());
}

TEST_F(KeyRulesTest, KeyName) {
  EXPECT_EQ(CheckKeyName("ci"), std::nullopt);
  EXPECT_NE(CheckKeyName(""), std::nullopt);
  EXPECT_NE(CheckKeyName("  "), std::nullopt);
  EXPECT_NE(CheckKeyName(std::string(kMaxKeyNameChars + 1, 'n')), std::nullopt);
}

TEST_F(KeyRulesTest, SessionPrincipal) {
  v1::Principal s = PrincipalForSession("u", "o", "Org");
  EXPECT_EQ(s.user_id(), "u");
  EXPECT_EQ(s.org_id(), "o");
  EXPECT_EQ(s.org_name(), "Org");
  EXPECT_TRUE(s.key_id().empty());
  EXPECT_EQ(s.key_expires_at_ms(), 0);
  ASSERT_EQ(s.scopes_size(), 2);
  EXPECT_EQ(s.scopes(0), "invoke");
  EXPECT_EQ(s.scopes(1), "manage");
}

}  // namespace
}  // namespace toolgate::auth
