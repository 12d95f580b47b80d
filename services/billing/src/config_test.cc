#include "toolgate/billing/config.h"

#include <gtest/gtest.h>

#include <map>

namespace toolgate::billing {
namespace {

Result<Config> Parse(const std::map<std::string, std::string>& values) {
  Flags flags("toolgate-billing", "test");
  DefineBillingFlags(flags);
  std::vector<std::string> args = {"toolgate-billing"};
  for (const auto& [name, value] : values) args.push_back("--" + name + "=" + value);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  flags.Parse(static_cast<int>(argv.size()), argv.data());
  return ConfigFromFlags(flags);
}

TEST(ConfigTest, DefaultsAreTheContracts) {
  auto config = Parse({});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const core::Rates defaults;
  EXPECT_EQ(config->rates.cpu_nano_per_gb_ms, defaults.cpu_nano_per_gb_ms);
  EXPECT_EQ(config->rates.gpu_nano_per_ms, defaults.gpu_nano_per_ms);
  EXPECT_EQ(config->rates.commission_bp, 2000);
  EXPECT_EQ(config->limits.rate_per_key_per_s, 1000);
  EXPECT_EQ(config->limits.rate_burst, 2000);
  EXPECT_EQ(config->limits.concurrency_per_org, 100);
  EXPECT_EQ(config->limits.uncharged_timeout_s_per_hour, 3600);
}

TEST(ConfigTest, FundingIsByGrantUnlessToldOtherwise) {
  auto config = Parse({});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->funding, FundingMode::kGrants);
  for (auto [name, mode] :
       std::vector<std::pair<std::string, FundingMode>>{{"grants", FundingMode::kGrants},
                                                        {"checkout", FundingMode::kCheckout},
                                                        {"demo", FundingMode::kDemo}}) {
    auto parsed = Parse({{"funding", name}});
    ASSERT_TRUE(parsed.ok()) << name << ": " << parsed.status().ToString();
    EXPECT_EQ(parsed->funding, mode) << name;
    EXPECT_EQ(FundingModeName(mode), name);
  }
  EXPECT_FALSE(MembersMayTopUp(FundingMode::kGrants));
  EXPECT_FALSE(MembersMayTopUp(FundingMode::kCheckout));
  EXPECT_TRUE(MembersMayTopUp(FundingMode::kDemo));
}

TEST(ConfigTest, UnknownFundingIsRefusedByName) {
  for (std::string value : {"", "Demo", "free", "grants "}) {
    auto config = Parse({{"funding", value}});
    ASSERT_FALSE(config.ok()) << "'" << value << "'";
    EXPECT_NE(config.status().message().find("--funding"), std::string::npos)
        << config.status().message();
  }
}

TEST(ConfigTest, RatesAreDecimals) {
  auto config = Parse({{"cpu-rate", "0.5"}, {"gpu-rate", "2"}, {"commission-percent", "12.5"}});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->rates.cpu_nano_per_gb_ms, 500'000'000);
  EXPECT_EQ(config->rates.gpu_nano_per_ms, 2'000'000'000);
  EXPECT_EQ(config->rates.commission_bp, 1250);
}

TEST(ConfigTest, ZeroTurnsLimitsOff) {
  auto config = Parse({{"rate-limit-per-key", "0"},
                       {"rate-limit-burst", "0"},
                       {"concurrency-per-org", "0"},
                       {"uncharged-timeout-s-per-hour", "0"}});
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->limits.rate_per_key_per_s, 0);
  EXPECT_EQ(config->limits.concurrency_per_org, 0);
  EXPECT_EQ(config->limits.uncharged_timeout_s_per_hour, 0);
}

TEST(ConfigTest, BadValuesNameTheFlag) {
  for (auto [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"cpu-rate", "-1"},
           {"cpu-rate", "0.0000000001"},
           {"gpu-rate", "fast"},
           {"commission-percent", "101"},
           {"commission-percent", "20.555"},
           {"rate-limit-per-key", "-3"},
           {"rate-limit-burst", "0"},
           {"concurrency-per-org", "many"},
           {"uncharged-timeout-s-per-hour", "-1"},
           {"uncharged-timeout-s-per-hour", "1e9"},
           {"uncharged-timeout-s-per-hour", "1000000001"},
           {"settle-batch", "0"},
           {"settle-ack-linger-ms", "1001"},
           {"settle-ack-linger-ms", "-1"}}) {
    auto config = Parse({{flag, value}});
    ASSERT_FALSE(config.ok()) << flag << "=" << value;
    EXPECT_NE(config.status().message().find("--" + flag), std::string::npos)
        << config.status().message();
  }
}

}  // namespace
}  // namespace toolgate::billing
