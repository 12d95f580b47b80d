#include "toolgate/billing/stripe_signature.h"

#include <gtest/gtest.h>

#include "toolgate/base/crypto.h"

namespace toolgate::billing {
namespace {

constexpr const char* kSecret = "whsec_test_secret";
constexpr const char* kPayload = R"({"id":"evt_1","type":"charge.refunded"})";
constexpr int64_t kNow = 1'700'000'000;

std::string Header(int64_t t, const std::string& payload = kPayload,
                   const std::string& secret = kSecret) {
  return "t=" + std::to_string(t) + ",v1=" + StripeSignature(t, payload, secret);
}

class StripeSignatureTest : public ::testing::Test {
 protected:
  void SetUp() override { InitCrypto(); }
};

TEST_F(StripeSignatureTest, SignsAsStripeDoes) {
  // HMAC-SHA256 of "<t>.<payload>" under the secret, lower-case hex (computed independently).
  EXPECT_EQ(StripeSignature(kNow, kPayload, kSecret),
            "02307e179dec7c16e9af12b9e961a270c4edcffa3996212c55c8a2952d49612f");
}

TEST_F(StripeSignatureTest, AcceptsAValidSignature) {
  EXPECT_EQ(VerifyStripeSignature(Header(kNow), kPayload, kSecret, kNow), SignatureCheck::kValid);
  // Stripe's header also carries a v0 scheme, and spaces are tolerated.
  EXPECT_EQ(
      VerifyStripeSignature(Header(kNow) + ", v0=6ffbb59b2300aae63f27240", kPayload, kSecret, kNow),
      SignatureCheck::kValid);
}

TEST_F(StripeSignatureTest, RefusesAnotherSecret) {
  EXPECT_EQ(VerifyStripeSignature(Header(kNow, kPayload, "whsec_other"), kPayload, kSecret, kNow),
            SignatureCheck::kMismatch);
}

TEST_F(StripeSignatureTest, RefusesATamperedBody) {
  std::string tampered = R"({"id":"evt_1","type":"charge.refunded" })";
  EXPECT_EQ(VerifyStripeSignature(Header(kNow), tampered, kSecret, kNow),
            SignatureCheck::kMismatch);
  // The signed timestamp is part of what is signed: moving it breaks the signature.
  std::string moved =
      "t=" + std::to_string(kNow + 1) + ",v1=" + StripeSignature(kNow, kPayload, kSecret);
  EXPECT_EQ(VerifyStripeSignature(moved, kPayload, kSecret, kNow), SignatureCheck::kMismatch);
}

TEST_F(StripeSignatureTest, AcceptsOneValidAmongSeveralSignatures) {
  // While a secret is rolled, Stripe signs with the old and the new one.
  std::string header = "t=" + std::to_string(kNow) +
                       ",v1=" + StripeSignature(kNow, kPayload, "whsec_old") +
                       ",v1=" + StripeSignature(kNow, kPayload, kSecret) + ",v1=deadbeef";
  EXPECT_EQ(VerifyStripeSignature(header, kPayload, kSecret, kNow), SignatureCheck::kValid);
  std::string none = "t=" + std::to_string(kNow) +
                     ",v1=" + StripeSignature(kNow, kPayload, "whsec_old") + ",v1=deadbeef";
  EXPECT_EQ(VerifyStripeSignature(none, kPayload, kSecret, kNow), SignatureCheck::kMismatch);
}

TEST_F(StripeSignatureTest, RefusesStaleAndFutureTimestamps) {
  EXPECT_EQ(VerifyStripeSignature(Header(kNow - 300), kPayload, kSecret, kNow),
            SignatureCheck::kValid);
  EXPECT_EQ(VerifyStripeSignature(Header(kNow - 301), kPayload, kSecret, kNow),
            SignatureCheck::kOutsideTolerance);
  EXPECT_EQ(VerifyStripeSignature(Header(kNow + 300), kPayload, kSecret, kNow),
            SignatureCheck::kValid);
  EXPECT_EQ(VerifyStripeSignature(Header(kNow + 301), kPayload, kSecret, kNow),
            SignatureCheck::kOutsideTolerance);
  // A replay a day later, with the signature Stripe made then.
  EXPECT_EQ(VerifyStripeSignature(Header(kNow), kPayload, kSecret, kNow + 86'400),
            SignatureCheck::kOutsideTolerance);
}

TEST_F(StripeSignatureTest, RefusesMissingAndMalformedHeaders) {
  const std::string v1 = StripeSignature(kNow, kPayload, kSecret);
  EXPECT_EQ(VerifyStripeSignature("", kPayload, kSecret, kNow), SignatureCheck::kMissing);
  EXPECT_EQ(VerifyStripeSignature("  ", kPayload, kSecret, kNow), SignatureCheck::kMissing);
  for (const std::string& header :
       {"v1=" + v1, "t=" + std::to_string(kNow), "t=" + std::to_string(kNow) + ",v0=" + v1,
        "t=abc,v1=" + v1, "t=,v1=" + v1, "t=" + std::to_string(kNow) + "x,v1=" + v1,
        "t=" + std::to_string(kNow) + ",t=" + std::to_string(kNow) + ",v1=" + v1,
        std::string("garbage")}) {
    EXPECT_EQ(VerifyStripeSignature(header, kPayload, kSecret, kNow), SignatureCheck::kMalformed)
        << header;
  }
  // An empty v1 is a signature that matches nothing.
  EXPECT_EQ(VerifyStripeSignature("t=" + std::to_string(kNow) + ",v1=", kPayload, kSecret, kNow),
            SignatureCheck::kMismatch);
}

TEST_F(StripeSignatureTest, MessagesNeverQuoteTheSecretOrASignature) {
  const std::string v1 = StripeSignature(kNow, kPayload, kSecret);
  for (SignatureCheck check : {SignatureCheck::kMissing, SignatureCheck::kMalformed,
                               SignatureCheck::kOutsideTolerance, SignatureCheck::kMismatch}) {
    std::string message(SignatureCheckMessage(check));
    EXPECT_FALSE(message.empty());
    EXPECT_EQ(message.find(kSecret), std::string::npos);
    EXPECT_EQ(message.find(v1), std::string::npos);
  }
}

}  // namespace
}  // namespace toolgate::billing
