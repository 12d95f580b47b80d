#include "launcher.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace toolgate::cli {
namespace {

// Parses `toolgate up` words as RunUp does.
Flags UpFlags(std::vector<std::string> words) {
  Flags flags("toolgate up", "test");
  DefineUpFlags(flags);
  std::vector<char*> argv = {const_cast<char*>("toolgate up")};
  for (auto& w : words) argv.push_back(w.data());
  flags.Parse(static_cast<int>(argv.size()), argv.data());
  return flags;
}

TEST(LauncherFlagsTest, EgressAndOtlpFlagsArePassedOn) {
  Flags flags =
      UpFlags({"--no-egress", "--egress-allow-cidr", "10.1.0.0/16", "--egress-allow-cidr=fd00::/8",
               "--egress-deny-cidr", "10.1.2.0/24", "--otlp-endpoint", "http://127.0.0.1:4318"});
  auto passed = PassOnFlags(flags);
  ASSERT_TRUE(passed.ok()) << passed.status().ToString();
  EXPECT_EQ(passed->every_service,
            (std::vector<std::string>{"--otlp-endpoint", "http://127.0.0.1:4318"}));
  EXPECT_EQ(passed->executor,
            (std::vector<std::string>{"--no-egress", "--egress-allow-cidr", "10.1.0.0/16",
                                      "--egress-allow-cidr", "fd00::/8", "--egress-deny-cidr",
                                      "10.1.2.0/24"}));
}

TEST(LauncherFlagsTest, FundingIsByGrantUnlessPlayMoneyIsAskedFor) {
  auto funding = [](std::vector<std::string> words) { return FundingFor(UpFlags(words)); };
  EXPECT_EQ(funding({}).value(), "grants");
  EXPECT_EQ(funding({"--funding", "checkout"}).value(), "checkout");
  EXPECT_EQ(funding({"--dev-funding"}).value(), "demo");
  EXPECT_EQ(funding({"--demo"}).value(), "demo");
  EXPECT_EQ(funding({"--funding", "demo", "--dev-funding"}).value(), "demo");
  // Play money is never a mode named alone, nor mixed with a payment set-up.
  for (auto words : std::vector<std::vector<std::string>>{
           {"--funding", "demo"}, {"--funding", "checkout", "--demo"}, {"--funding", "free"}}) {
    auto refused = funding(words);
    ASSERT_FALSE(refused.ok()) << words[1];
    EXPECT_NE(refused.status().message().find("--"), std::string::npos);
  }
}

TEST(LauncherFlagsTest, NothingIsPassedOnByDefault) {
  auto passed = PassOnFlags(UpFlags({}));
  ASSERT_TRUE(passed.ok());
  EXPECT_TRUE(passed->every_service.empty());
  EXPECT_TRUE(passed->executor.empty());
  EXPECT_TRUE(passed->billing.empty());
}

TEST(LauncherFlagsTest, CheckoutFlagsAreHandedToBillingAndTheSecretsRequired) {
  auto passed =
      PassOnFlags(UpFlags({"--funding", "checkout", "--stripe-secret-key-file", "/keys/sk",
                           "--stripe-webhook-secret-file", "/keys/whsec", "--stripe-api-base",
                           "http://127.0.0.1:9", "--public-url", "https://tg.example.com"}));
  ASSERT_TRUE(passed.ok()) << passed.status().ToString();
  EXPECT_EQ(passed->billing, (std::vector<std::string>{
                                 "--stripe-secret-key-file", "/keys/sk",
                                 "--stripe-webhook-secret-file", "/keys/whsec", "--stripe-api-base",
                                 "http://127.0.0.1:9", "--public-url", "https://tg.example.com"}));
  auto missing =
      PassOnFlags(UpFlags({"--funding", "checkout", "--stripe-secret-key-file", "/keys/sk"}));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "--funding checkout needs --stripe-webhook-secret-file");
}

TEST(LauncherFlagsTest, TheEnvironmentVariablesCountLikeTheFlags) {
  setenv("TOOLGATE_EGRESS_DENY_CIDR", "192.168.0.0/16,10.0.0.0/8", 1);
  setenv("TOOLGATE_NO_EGRESS", "true", 1);
  auto passed = PassOnFlags(UpFlags({}));
  unsetenv("TOOLGATE_EGRESS_DENY_CIDR");
  unsetenv("TOOLGATE_NO_EGRESS");
  ASSERT_TRUE(passed.ok());
  EXPECT_EQ(passed->executor,
            (std::vector<std::string>{"--no-egress", "--egress-deny-cidr", "192.168.0.0/16",
                                      "--egress-deny-cidr", "10.0.0.0/8"}));
}

TEST(LauncherFlagsTest, MalformedValuesAreRefusedNamingTheFlag) {
  auto cidr = PassOnFlags(UpFlags({"--egress-allow-cidr", "10.0.0.1/8"}));
  ASSERT_FALSE(cidr.ok());
  EXPECT_EQ(cidr.status().message().rfind("--egress-allow-cidr 10.0.0.1/8: ", 0), 0u)
      << cidr.status().message();
  auto endpoint = PassOnFlags(UpFlags({"--otlp-endpoint", "ftp://collector"}));
  ASSERT_FALSE(endpoint.ok());
  EXPECT_EQ(endpoint.status().message().rfind("--otlp-endpoint: ", 0), 0u)
      << endpoint.status().message();
}

}  // namespace
}  // namespace toolgate::cli
