#include "toolgate/base/secret_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "toolgate/base/crypto.h"

namespace fs = std::filesystem;

namespace toolgate {
namespace {

class SecretFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    InitCrypto();
    char tmpl[] = "/tmp/secret-file-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(SecretFileTest, CreatesOwnerOnlyHexSecretOnce) {
  auto first = EnsureSecretFile(dir_ / "redis.password");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(first->created);
  EXPECT_EQ(first->value.size(), 48u);
  EXPECT_EQ(first->value.find_first_not_of("0123456789abcdef"), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "redis.password").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(fs::exists(dir_ / "redis.password.tmp"));

  auto second = EnsureSecretFile(dir_ / "redis.password");
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->created);
  EXPECT_EQ(second->value, first->value);
}

TEST_F(SecretFileTest, TwoFilesGetDifferentSecrets) {
  auto a = EnsureSecretFile(dir_ / "a");
  auto b = EnsureSecretFile(dir_ / "b");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->value, b->value);
}

TEST_F(SecretFileTest, ReadDropsTrailingNewlinesOnly) {
  std::ofstream(dir_ / "k") << "s3cr et\r\n\n";
  auto v = ReadSecretFile(dir_ / "k");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, "s3cr et");
}

TEST_F(SecretFileTest, MissingAndEmptyFilesAreErrors) {
  EXPECT_EQ(ReadSecretFile(dir_ / "none").status().code(), Status::Code::kNotFound);
  std::ofstream(dir_ / "empty") << "\n";
  EXPECT_EQ(ReadSecretFile(dir_ / "empty").status().code(), Status::Code::kInvalidArgument);
  EXPECT_FALSE(EnsureSecretFile(dir_ / "empty").ok());
}

TEST_F(SecretFileTest, UnwritableDirectoryIsInternal) {
  auto r = EnsureSecretFile(dir_ / "missing-dir" / "x");
  EXPECT_EQ(r.status().code(), Status::Code::kInternal);
}

}  // namespace
}  // namespace toolgate
