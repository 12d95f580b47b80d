#include "toolgate/webhook/signature.h"

#include <gtest/gtest.h>

#include "toolgate/base/crypto.h"

namespace toolgate::webhook {
namespace {

class SignatureTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { InitCrypto(); }
};

// The example of the Standard Webhooks reference libraries' tests.
constexpr std::string_view kSpecSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
constexpr std::string_view kSpecId = "msg_p5jXN8AQM9LWM0D4loKWxJek";
constexpr int64_t kSpecTimestamp = 1614265330;
constexpr std::string_view kSpecBody = R"({"test": 2432232314})";
constexpr std::string_view kSpecSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

TEST_F(SignatureTest, SignsThePublishedExampleAsTheSpecificationDoes) {
  auto key = SigningKey(kSpecSecret);
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(Sign(*key, kSpecId, kSpecTimestamp, kSpecBody), kSpecSignature);
  EXPECT_TRUE(Verify(*key, kSpecId, kSpecTimestamp, kSpecBody, kSpecSignature));
}

TEST_F(SignatureTest, VerifyAcceptsAnyMatchingEntryOfAList) {
  auto key = SigningKey(kSpecSecret);
  ASSERT_TRUE(key.has_value());
  const std::string list =
      "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= " + std::string(kSpecSignature) + " v2,abc";
  EXPECT_TRUE(Verify(*key, kSpecId, kSpecTimestamp, kSpecBody, list));
}

TEST_F(SignatureTest, VerifyRefusesAnyChangeOfIdTimestampBodyOrKey) {
  auto key = SigningKey(kSpecSecret);
  ASSERT_TRUE(key.has_value());
  EXPECT_FALSE(Verify(*key, "msg_other", kSpecTimestamp, kSpecBody, kSpecSignature));
  EXPECT_FALSE(Verify(*key, kSpecId, kSpecTimestamp + 1, kSpecBody, kSpecSignature));
  EXPECT_FALSE(Verify(*key, kSpecId, kSpecTimestamp, R"({"test": 2432232315})", kSpecSignature));
  auto other = SigningKey(NewSecret());
  ASSERT_TRUE(other.has_value());
  EXPECT_FALSE(Verify(*other, kSpecId, kSpecTimestamp, kSpecBody, kSpecSignature));
  EXPECT_FALSE(Verify(*key, kSpecId, kSpecTimestamp, kSpecBody, ""));
  // The base64 alone, without the version, is not a v1 signature.
  EXPECT_FALSE(
      Verify(*key, kSpecId, kSpecTimestamp, kSpecBody, std::string(kSpecSignature.substr(3))));
}

TEST_F(SignatureTest, NewSecretsArePrefixedBase64OfEnoughRandomBytes) {
  const std::string a = NewSecret();
  const std::string b = NewSecret();
  EXPECT_NE(a, b);
  ASSERT_TRUE(a.starts_with("whsec_")) << a;
  auto key = SigningKey(a);
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(key->size(), kSecretBytes);
  // A round trip with a fresh secret.
  const std::string signature = Sign(*key, "msg_1", 1700000000, "{}");
  EXPECT_TRUE(Verify(*key, "msg_1", 1700000000, "{}", signature));
}

TEST_F(SignatureTest, SigningKeyRefusesWhatIsNotBase64OfEnoughBytes) {
  EXPECT_FALSE(SigningKey("whsec_not base64!").has_value());
  EXPECT_FALSE(SigningKey("whsec_" + Base64Encode(std::string(16, 'x'))).has_value());
  EXPECT_FALSE(SigningKey("whsec_" + Base64Encode(std::string(65, 'x'))).has_value());
  // The prefix is optional, as in the reference libraries.
  EXPECT_TRUE(SigningKey(kSpecSecret.substr(6)).has_value());
}

TEST_F(SignatureTest, MessageIdsAreUniqueAndPrefixed) {
  const std::string a = NewMessageId();
  EXPECT_TRUE(a.starts_with("msg_")) << a;
  EXPECT_EQ(a.size(), 4u + 32u);
  EXPECT_NE(a, NewMessageId());
}

}  // namespace
}  // namespace toolgate::webhook
