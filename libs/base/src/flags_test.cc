#include "toolgate/base/flags.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace toolgate {
namespace {

std::vector<std::string> ParseArgs(Flags& flags, std::vector<std::string> args) {
  std::vector<char*> argv;
  static std::string program = "test";
  argv.push_back(program.data());
  for (auto& a : args) argv.push_back(a.data());
  return flags.Parse(static_cast<int>(argv.size()), argv.data());
}

TEST(FlagsTest, RepeatedFlagCollectsEveryOccurrence) {
  Flags flags("test", "");
  flags.DefineRepeated("allow", "networks");
  ParseArgs(flags, {"--allow", "10.0.0.0/8", "--allow=192.168.0.0/16"});
  EXPECT_EQ(flags.GetList("allow"), (std::vector<std::string>{"10.0.0.0/8", "192.168.0.0/16"}));
}

TEST(FlagsTest, RepeatedFlagFromTheEnvironmentIsReplacedByTheCommandLine) {
  ::setenv("TOOLGATE_DENY_LIST", "1.2.3.4,5.6.7.8", 1);
  Flags from_env("test", "");
  from_env.DefineRepeated("deny-list", "networks");
  ParseArgs(from_env, {});
  EXPECT_EQ(from_env.GetList("deny-list"), (std::vector<std::string>{"1.2.3.4", "5.6.7.8"}));
  Flags both("test", "");
  both.DefineRepeated("deny-list", "networks");
  ParseArgs(both, {"--deny-list", "9.9.9.9"});
  EXPECT_EQ(both.GetList("deny-list"), (std::vector<std::string>{"9.9.9.9"}));
  ::unsetenv("TOOLGATE_DENY_LIST");
}

TEST(FlagsTest, PlainFlagKeepsTheLastOccurrence) {
  Flags flags("test", "");
  flags.Define("port", "1", "");
  ParseArgs(flags, {"--port", "2", "--port", "3"});
  EXPECT_EQ(flags.GetInt("port"), 3);
}

TEST(FlagsTest, BooleanFlagMayStandAlone) {
  Flags flags("test", "");
  flags.Define("no-egress", "false", "");
  flags.Define("verbose", "false", "");
  flags.Define("name", "", "");
  auto positional = ParseArgs(flags, {"--no-egress", "--name", "x", "--verbose"});
  EXPECT_TRUE(flags.GetBool("no-egress"));
  EXPECT_TRUE(flags.GetBool("verbose"));
  EXPECT_EQ(flags.Get("name"), "x");
  EXPECT_TRUE(positional.empty());
  Flags explicit_value("test", "");
  explicit_value.Define("no-egress", "true", "");
  ParseArgs(explicit_value, {"--no-egress", "false"});
  EXPECT_FALSE(explicit_value.GetBool("no-egress"));
}

}  // namespace
}  // namespace toolgate
