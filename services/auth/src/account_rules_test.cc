#include "toolgate/auth/account_rules.h"

#include <gtest/gtest.h>

#include "toolgate/base/crypto.h"

namespace toolgate::auth {
namespace {

class AccountRulesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { InitCrypto(); }
};

TEST_F(AccountRulesTest, AcceptsOrdinaryEmails) {
  for (const char* email : {"a@b.co", "alice@example.com", "Alice.Smith+tag@mail.example.org",
                            "x_y-z@sub-domain.example.io", "o'brien@example.ie"}) {
    EXPECT_EQ(CheckEmail(email), std::nullopt) << email;
  }
}

TEST_F(AccountRulesTest, RejectsMalformedEmails) {
  for (const char* email : {"",
                            "plain",
                            "@example.com",
                            "alice@",
                            "alice@example",
                            "alice@@example.com",
                            "a@b@example.com",
                            "alice @example.com",
                            "alice@exa mple.com",
                            ".alice@example.com",
                            "alice.@example.com",
                            "al..ice@example.com",
                            "alice@-example.com",
                            "alice@example-.com",
                            "alice@example..com",
                            "alice@.example.com",
                            "alice@example.com.",
                            "al(ice@example.com",
                            "\"alice\"@example.com",
                            "alice@exam_ple.com",
                            "al\xc3\xa9@example.com"}) {
    EXPECT_NE(CheckEmail(email), std::nullopt) << email;
  }
}

TEST_F(AccountRulesTest, EmailLengthLimits) {
  std::string local64(64, 'a'), local65(65, 'a');
  EXPECT_EQ(CheckEmail(local64 + "@example.com"), std::nullopt);
  EXPECT_NE(CheckEmail(local65 + "@example.com"), std::nullopt);
  // 254 bytes in all is the most an address may have.
  std::string domain = std::string(63, 'd') + "." + std::string(63, 'd') + "." +
                       std::string(63, 'd') + ".com";  // 195 bytes
  std::string at_limit = std::string(58, 'a') + "@" + domain;
  ASSERT_EQ(at_limit.size(), 254u);
  EXPECT_EQ(CheckEmail(at_limit), std::nullopt);
  EXPECT_NE(CheckEmail("a" + at_limit), std::nullopt);
}

TEST_F(AccountRulesTest, PasswordNeedsTenCharacters) {
  EXPECT_NE(CheckPassword(""), std::nullopt);
  EXPECT_NE(CheckPassword("123456789"), std::nullopt);
  EXPECT_EQ(CheckPassword("1234567890"), std::nullopt);
  // Characters, not bytes: nine two-byte characters are still too short.
  std::string nine_e_acute;
  for (int i = 0; i < 9; ++i) nine_e_acute += "\xc3\xa9";
  EXPECT_NE(CheckPassword(nine_e_acute), std::nullopt);
  EXPECT_EQ(CheckPassword(nine_e_acute + "x"), std::nullopt);
  EXPECT_EQ(CheckPassword(std::string(kMaxPasswordChars, 'p')), std::nullopt);
  EXPECT_NE(CheckPassword(std::string(kMaxPasswordChars + 1, 'p')), std::nullopt);
}

TEST_F(AccountRulesTest, OrganizationNameMustNotBeBlank) {
  EXPECT_NE(CheckOrganizationName(""), std::nullopt);
  EXPECT_NE(CheckOrganizationName("   \t"), std::nullopt);
  EXPECT_NE(CheckOrganizationName("Acme\nInc"), std::nullopt);
  EXPECT_EQ(CheckOrganizationName("Acme Inc"), std::nullopt);
  EXPECT_EQ(CheckOrganizationName(std::string(kMaxOrganizationNameChars, 'o')), std::nullopt);
  EXPECT_NE(CheckOrganizationName(std::string(kMaxOrganizationNameChars + 1, 'o')), std::nullopt);
}

TEST_F(AccountRulesTest, SessionTokenIs32RandomBytesBase64Url) {
  std::string a = NewSessionToken(), b = NewSessionToken();
  EXPECT_EQ(a.size(), 43u);  // ceil(32 * 4 / 3), unpadded
  EXPECT_NE(a, b);
  for (char c : a) {
    EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') << c;
  }
}

TEST_F(AccountRulesTest, SessionCookieStrings) {
  EXPECT_EQ(SessionCookie("tok", kSessionLifetimeS),
            "tg_session=tok; Path=/; HttpOnly; SameSite=Lax; Max-Age=2592000");
  EXPECT_EQ(ClearedSessionCookie(), "tg_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0");
}

TEST_F(AccountRulesTest, PasswordHashVerifiesOnlyTheSamePassword) {
  auto hash = HashPassword("correct horse battery");
  ASSERT_TRUE(hash.ok());
  EXPECT_EQ(hash->rfind("$argon2id$", 0), 0u);
  EXPECT_EQ(hash->find("correct horse"), std::string::npos);
  EXPECT_TRUE(VerifyPassword(*hash, "correct horse battery"));
  EXPECT_FALSE(VerifyPassword(*hash, "correct horse battery "));
  EXPECT_FALSE(VerifyPassword("not a hash", "correct horse battery"));
}

}  // namespace
}  // namespace toolgate::auth
