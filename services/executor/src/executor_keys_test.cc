#include "toolgate/executor/executor_keys.h"

#include <gtest/gtest.h>
#include <sodium.h>

#include <cstdio>
#include <fstream>

#include "toolgate/base/crypto.h"

namespace toolgate::executor {
namespace {

std::string Seal(const v1::EnvMap& env, const std::string& public_key) {
  std::string plain = env.SerializeAsString();
  std::string sealed(plain.size() + crypto_box_SEALBYTES, '\0');
  crypto_box_seal(reinterpret_cast<unsigned char*>(sealed.data()),
                  reinterpret_cast<const unsigned char*>(plain.data()), plain.size(),
                  reinterpret_cast<const unsigned char*>(public_key.data()));
  return sealed;
}

class ExecutorKeysTest : public ::testing::Test {
 protected:
  void SetUp() override {
    InitCrypto();
    std::string pk(crypto_box_PUBLICKEYBYTES, '\0');
    secret_.assign(crypto_box_SECRETKEYBYTES, '\0');
    crypto_box_keypair(reinterpret_cast<unsigned char*>(pk.data()),
                       reinterpret_cast<unsigned char*>(secret_.data()));
    public_ = pk;
  }
  std::string WriteFile(const std::string& text) {
    std::string path = ::testing::TempDir() + "executor_keys_test.key";
    std::ofstream(path) << text;
    return path;
  }
  std::string secret_, public_;
};

TEST_F(ExecutorKeysTest, DerivesThePublicKey) {
  auto keys = ExecutorKeys::FromSecretKey(secret_);
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ((*keys)->public_key(), public_);
}

TEST_F(ExecutorKeysTest, OpensWhatWasSealedToIt) {
  auto keys = ExecutorKeys::FromSecretKey(secret_);
  ASSERT_TRUE(keys.ok());
  v1::EnvMap env;
  (*env.mutable_values())["API_KEY"] = "s3cret";
  (*env.mutable_values())["OTHER"] = "v";
  auto opened = (*keys)->Open(Seal(env, public_));
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::map<std::string, std::string> got;
  for (const EnvVar& var : (*opened)->vars()) got[std::string(var.name)] = var.value;
  EXPECT_EQ(got, (std::map<std::string, std::string>{{"API_KEY", "s3cret"}, {"OTHER", "v"}}));
}

TEST_F(ExecutorKeysTest, EmptyMeansNoSecrets) {
  auto keys = ExecutorKeys::FromSecretKey(secret_);
  auto opened = (*keys)->Open("");
  ASSERT_TRUE(opened.ok());
  EXPECT_TRUE((*opened)->vars().empty());
}

TEST_F(ExecutorKeysTest, RefusesWhatItCannotOpen) {
  auto keys = ExecutorKeys::FromSecretKey(secret_);
  std::string other_pk(crypto_box_PUBLICKEYBYTES, '\0'), other_sk(crypto_box_SECRETKEYBYTES, '\0');
  crypto_box_keypair(reinterpret_cast<unsigned char*>(other_pk.data()),
                     reinterpret_cast<unsigned char*>(other_sk.data()));
  v1::EnvMap env;
  (*env.mutable_values())["K"] = "v";
  EXPECT_FALSE((*keys)->Open(Seal(env, other_pk)).ok());
  EXPECT_FALSE((*keys)->Open("short").ok());
  std::string tampered = Seal(env, public_);
  tampered.back() ^= 1;
  EXPECT_FALSE((*keys)->Open(tampered).ok());
}

TEST_F(ExecutorKeysTest, LoadsTheBase64KeyFile) {
  auto keys = ExecutorKeys::LoadFile(WriteFile(Base64Encode(secret_) + "\n"));
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  EXPECT_EQ((*keys)->public_key(), public_);
}

TEST_F(ExecutorKeysTest, RefusesAMissingOrBadKeyFile) {
  auto missing = ExecutorKeys::LoadFile(::testing::TempDir() + "no-such-executor.key");
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  EXPECT_EQ(ExecutorKeys::LoadFile(WriteFile("not base64!")).status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(ExecutorKeys::LoadFile(WriteFile(Base64Encode("too short"))).status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(ExecutorKeys::LoadFile(WriteFile("")).status().code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace toolgate::executor
