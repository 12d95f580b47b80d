#include "toolgate/base/crypto.h"

#include <gtest/gtest.h>

#include <set>

namespace toolgate {
namespace {

class CryptoTest : public ::testing::Test {
 protected:
  void SetUp() override { InitCrypto(); }
};

TEST_F(CryptoTest, Sha256KnownVectors) {
  // FIPS 180-2 appendix B.1 and the empty message.
  EXPECT_EQ(HexEncode(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(HexEncode(Sha256("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256("abc").size(), 32u);
}

TEST_F(CryptoTest, HexEncodeIsLowerCaseAndKeepsZeroBytes) {
  EXPECT_EQ(HexEncode(std::string_view("\x00\xff\x10\xab", 4)), "00ff10ab");
  EXPECT_EQ(HexEncode(""), "");
}

TEST_F(CryptoTest, Base64EncodeRfc4648Vectors) {
  const std::pair<const char*, const char*> kVectors[] = {{"", ""},
                                                          {"f", "Zg=="},
                                                          {"fo", "Zm8="},
                                                          {"foo", "Zm9v"},
                                                          {"foob", "Zm9vYg=="},
                                                          {"fooba", "Zm9vYmE="},
                                                          {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : kVectors) {
    EXPECT_EQ(Base64Encode(plain), encoded) << plain;
    std::string decoded;
    ASSERT_TRUE(Base64Decode(encoded, &decoded)) << encoded;
    EXPECT_EQ(decoded, plain);
  }
}

TEST_F(CryptoTest, Base64DecodeAcceptsUnpadded) {
  std::string decoded;
  ASSERT_TRUE(Base64Decode("Zm9vYg", &decoded));
  EXPECT_EQ(decoded, "foob");
}

TEST_F(CryptoTest, Base64DecodeRejectsGarbage) {
  std::string decoded = "stale";
  EXPECT_FALSE(Base64Decode("Zm9v!", &decoded));
  EXPECT_EQ(decoded, "");
  EXPECT_FALSE(Base64Decode("-_8", &decoded));  // URL-safe alphabet is not standard base64
  EXPECT_FALSE(Base64Decode("Zm9vYg=x", &decoded));
}

TEST_F(CryptoTest, Base64UrlEncodeIsUnpaddedUrlSafe) {
  EXPECT_EQ(Base64UrlEncode(std::string_view("\xfb\xff", 2)), "-_8");
  EXPECT_EQ(Base64Encode(std::string_view("\xfb\xff", 2)), "+/8=");
  EXPECT_EQ(Base64UrlEncode("f"), "Zg");
}

TEST_F(CryptoTest, Base64RoundTripOfRandomBinary) {
  for (size_t n : {1u, 2u, 3u, 31u, 32u, 33u, 1000u}) {
    std::string bytes = RandomBytes(n);
    ASSERT_EQ(bytes.size(), n);
    std::string decoded;
    ASSERT_TRUE(Base64Decode(Base64Encode(bytes), &decoded));
    EXPECT_EQ(decoded, bytes);
  }
}

TEST_F(CryptoTest, NewUuidIsVersion4Variant1LowerCase) {
  for (int i = 0; i < 100; ++i) {
    std::string id = NewUuid();
    ASSERT_EQ(id.size(), 36u);
    EXPECT_TRUE(IsUuid(id)) << id;
    EXPECT_EQ(id[14], '4') << id;
    EXPECT_NE(std::string("89ab").find(id[19]), std::string::npos) << id;
    for (char c : id) EXPECT_FALSE(c >= 'A' && c <= 'Z') << id;
  }
}

TEST_F(CryptoTest, NewUuidIsUnique) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(NewUuid());
  EXPECT_EQ(seen.size(), 1000u);
}

TEST_F(CryptoTest, IsUuid) {
  EXPECT_TRUE(IsUuid("123e4567-e89b-42d3-a456-426614174000"));
  EXPECT_TRUE(IsUuid("123E4567-E89B-42D3-A456-426614174000"));
  EXPECT_FALSE(IsUuid(""));
  EXPECT_FALSE(IsUuid("123e4567e89b42d3a456426614174000"));       // no dashes
  EXPECT_FALSE(IsUuid("123e4567-e89b-42d3-a456-42661417400"));    // short
  EXPECT_FALSE(IsUuid("123e4567-e89b-42d3-a456-4266141740000"));  // long
  EXPECT_FALSE(IsUuid("123e4567-e89b-42d3-a456_426614174000"));   // wrong separator
  EXPECT_FALSE(IsUuid("123e4567-e89b-42d3-a456-42661417400g"));   // not hex
  EXPECT_FALSE(IsUuid("123e4567-e89b42-d3-a456-426614174000"));   // dash misplaced
}

TEST_F(CryptoTest, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals("secret", "secret"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "secreT"));
  EXPECT_FALSE(ConstantTimeEquals("secret", "secret1"));
  EXPECT_FALSE(ConstantTimeEquals("secret", ""));
}

TEST_F(CryptoTest, RandomBytesDiffer) {
  EXPECT_EQ(RandomBytes(0), "");
  EXPECT_NE(RandomBytes(32), RandomBytes(32));
}

// RFC 4231's test cases 2 (a short key) and 6 (a key longer than the block, hashed first).
TEST_F(CryptoTest, HmacSha256MatchesRfc4231) {
  EXPECT_EQ(HexEncode(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(HexEncode(HmacSha256(std::string(131, '\xaa'),
                                 "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

}  // namespace
}  // namespace toolgate
