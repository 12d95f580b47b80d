#include "toolgate/executor/ca_bundle.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace toolgate::executor {
namespace {

class CaBundleTest : public ::testing::Test {
 protected:
  CaBundleTest() {
    char dir[] = "/tmp/ca-bundle-test-XXXXXX";
    dir_ = ::mkdtemp(dir);
  }
  ~CaBundleTest() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
    return dir_ + "/" + name;
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  std::string dir_;
};

constexpr const char* kCert = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

TEST_F(CaBundleTest, TheBundleIsTheSystemsFollowedByTheOperatorsReadableByAll) {
  std::string system = Write("system.crt", "SYSTEM");
  std::string ca = Write("operator.pem", kCert);
  auto bundle = WriteCaBundle(ca, system, dir_);
  ASSERT_TRUE(bundle.ok()) << bundle.status().ToString();
  EXPECT_EQ(Read(*bundle), std::string("SYSTEM\n") + kCert);
  struct stat st;
  ASSERT_EQ(::stat(bundle->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST_F(CaBundleTest, AHostWithoutASystemBundleTrustsTheOperatorsCaOnly) {
  auto bundle = WriteCaBundle(Write("operator.pem", kCert), dir_ + "/absent.crt", dir_);
  ASSERT_TRUE(bundle.ok());
  EXPECT_EQ(Read(*bundle), kCert);
}

TEST_F(CaBundleTest, AFileWithoutACertificateIsRefusedAndNothingIsWritten) {
  std::string system = Write("system.crt", "SYSTEM");
  for (const char* text : {"", "not a certificate", "-----BEGIN CERTIFICATE-----\nMIIB\n",
                           "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n"}) {
    auto bundle = WriteCaBundle(Write("operator.pem", text), system, dir_);
    EXPECT_FALSE(bundle.ok()) << text;
    EXPECT_EQ(bundle.status().code(), Status::Code::kInvalidArgument);
  }
  EXPECT_FALSE(WriteCaBundle(dir_ + "/missing.pem", system, dir_).ok());
  EXPECT_NE(::access((dir_ + "/ca-certificates.crt").c_str(), F_OK), 0);
}

}  // namespace
}  // namespace toolgate::executor
