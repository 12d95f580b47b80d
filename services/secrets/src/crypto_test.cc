#include "toolgate/secrets/crypto.h"

#include <gtest/gtest.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "toolgate/base/crypto.h"

namespace toolgate::secrets {
namespace {

class CryptoTest : public testing::Test {
 protected:
  void SetUp() override {
    InitCrypto();
    char tmpl[] = "/tmp/secrets-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

  std::string dir_;
};

TEST_F(CryptoTest, RoundTrip) {
  SecretBox box(RandomBytes(kKeyBytes));
  auto sealed = box.Encrypt("org-1", "id-1", "s3cr3t value");
  EXPECT_EQ(sealed.nonce.size(), 24u);
  EXPECT_EQ(sealed.ciphertext.find("s3cr3t"), std::string::npos);
  auto opened = box.Decrypt("org-1", "id-1", sealed.nonce, sealed.ciphertext);
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(*opened, "s3cr3t value");
}

TEST_F(CryptoTest, FreshNonceEachTime) {
  SecretBox box(RandomBytes(kKeyBytes));
  auto a = box.Encrypt("org", "id", "same");
  auto b = box.Encrypt("org", "id", "same");
  EXPECT_NE(a.nonce, b.nonce);
  EXPECT_NE(a.ciphertext, b.ciphertext);
}

TEST_F(CryptoTest, WrongAdditionalDataFails) {
  SecretBox box(RandomBytes(kKeyBytes));
  auto sealed = box.Encrypt("org-1", "id-1", "value");
  EXPECT_FALSE(box.Decrypt("org-2", "id-1", sealed.nonce, sealed.ciphertext).ok());
  EXPECT_FALSE(box.Decrypt("org-1", "id-2", sealed.nonce, sealed.ciphertext).ok());
  // The separator matters: "org-1:" + "id" differs from "org-1:i" + "d" only if it is there.
  EXPECT_FALSE(box.Decrypt("org-1:id-1", "", sealed.nonce, sealed.ciphertext).ok());
}

TEST_F(CryptoTest, TamperingOrAnotherKeyFails) {
  SecretBox box(RandomBytes(kKeyBytes));
  auto sealed = box.Encrypt("org", "id", "value");
  std::string flipped = sealed.ciphertext;
  flipped[0] ^= 1;
  EXPECT_FALSE(box.Decrypt("org", "id", sealed.nonce, flipped).ok());
  EXPECT_FALSE(box.Decrypt("org", "id", sealed.nonce, "short").ok());
  EXPECT_FALSE(box.Decrypt("org", "id", "bad nonce", sealed.ciphertext).ok());
  SecretBox other(RandomBytes(kKeyBytes));
  EXPECT_FALSE(other.Decrypt("org", "id", sealed.nonce, sealed.ciphertext).ok());
}

TEST_F(CryptoTest, SealedForTheExecutorOpensWithItsKeyPair) {
  unsigned char pk[crypto_box_PUBLICKEYBYTES], sk[crypto_box_SECRETKEYBYTES];
  crypto_box_keypair(pk, sk);
  std::string sealed = SealTo(std::string(reinterpret_cast<char*>(pk), sizeof pk), "env bytes");
  ASSERT_EQ(sealed.size(), 9 + crypto_box_SEALBYTES);
  std::string opened(9, '\0');
  ASSERT_EQ(crypto_box_seal_open(reinterpret_cast<unsigned char*>(opened.data()),
                                 reinterpret_cast<const unsigned char*>(sealed.data()),
                                 sealed.size(), pk, sk),
            0);
  EXPECT_EQ(opened, "env bytes");
  unsigned char pk2[crypto_box_PUBLICKEYBYTES], sk2[crypto_box_SECRETKEYBYTES];
  crypto_box_keypair(pk2, sk2);
  EXPECT_NE(crypto_box_seal_open(reinterpret_cast<unsigned char*>(opened.data()),
                                 reinterpret_cast<const unsigned char*>(sealed.data()),
                                 sealed.size(), pk2, sk2),
            0);
}

TEST_F(CryptoTest, MasterKeyFromTheFlag) {
  std::string raw = RandomBytes(kKeyBytes);
  auto key = LoadMasterKey(Base64Encode(raw), dir_ + "/unused");
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(*key, raw);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/unused"));

  auto bad = LoadMasterKey(Base64Encode(RandomBytes(16)), "");
  EXPECT_EQ(bad.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("--master-key"), std::string::npos);
  EXPECT_FALSE(LoadMasterKey("not base64!", "").ok());
}

TEST_F(CryptoTest, MasterKeyFileIsCreatedPrivateAndThenReused) {
  const std::string path = dir_ + "/keys/master.key";
  auto first = LoadMasterKey("", path);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->size(), kKeyBytes);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat((dir_ + "/keys").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto second = LoadMasterKey("", path);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, *first);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_ + "/keys"),
                          std::filesystem::directory_iterator()),
            1);  // no temporary left behind
}

TEST_F(CryptoTest, MasterKeyFileWithBadContentIsAClearError) {
  const std::string path = dir_ + "/master.key";
  WriteFile(path, Base64Encode(RandomBytes(31)));
  auto key = LoadMasterKey("", path);
  EXPECT_EQ(key.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(key.status().message().find(path), std::string::npos);
}

TEST_F(CryptoTest, ExecutorPublicKey) {
  const std::string path = dir_ + "/executor.pub";
  auto missing = LoadExecutorPublicKey(path);
  EXPECT_EQ(missing.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(missing.status().message().find(path), std::string::npos);
  std::string raw = RandomBytes(kKeyBytes);
  WriteFile(path, "  " + Base64Encode(raw) + "\n");
  auto key = LoadExecutorPublicKey(path);
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(*key, raw);
}

TEST_F(CryptoTest, WipeZeroes) {
  std::string s = "secret";
  Wipe(s);
  EXPECT_EQ(s, std::string(6, '\0'));
}

}  // namespace
}  // namespace toolgate::secrets
