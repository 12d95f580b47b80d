#include "cli_config.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>

#include "toolgate/base/crypto.h"

namespace toolgate::cli {
namespace {
namespace fs = std::filesystem;

TEST(CliConfigTest, ProfilesRoundTrip) {
  CliConfig config;
  config.profiles["default"] = {"http://127.0.0.1:8080", "tok1"};
  config.profiles["staging"] = {"https://staging.example.com", ""};
  auto parsed = ParseCliConfig(CliConfigJson(config));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->profiles.size(), 2u);
  EXPECT_EQ(parsed->profiles["default"].url, "http://127.0.0.1:8080");
  EXPECT_EQ(parsed->profiles["default"].session, "tok1");
  EXPECT_EQ(parsed->profiles["staging"].url, "https://staging.example.com");
  EXPECT_EQ(parsed->profiles["staging"].session, "");
  // An empty session is left out of the file rather than written as "".
  EXPECT_EQ(CliConfigJson(config).find("\"session\":\"\""), std::string::npos);
}

TEST(CliConfigTest, EmptyAndMissingProfilesAreEmpty) {
  auto parsed = ParseCliConfig("{}");
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->profiles.empty());
}

TEST(CliConfigTest, RefusesWrongShapes) {
  EXPECT_FALSE(ParseCliConfig("not json").ok());
  EXPECT_FALSE(ParseCliConfig("[]").ok());
  EXPECT_FALSE(ParseCliConfig(R"({"profiles": []})").ok());
  EXPECT_FALSE(ParseCliConfig(R"({"profiles": {"a": 1}})").ok());
  EXPECT_FALSE(ParseCliConfig(R"({"profiles": {"a": {"url": 1}}})").ok());
  EXPECT_FALSE(ParseCliConfig(R"({"profiles": {"a b": {}}})").ok());
}

TEST(CliConfigTest, ProfileNames) {
  EXPECT_TRUE(IsValidProfileName("default"));
  EXPECT_TRUE(IsValidProfileName("prod-eu.2_b"));
  EXPECT_FALSE(IsValidProfileName(""));
  EXPECT_FALSE(IsValidProfileName("a/b"));
  EXPECT_FALSE(IsValidProfileName("a b"));
  EXPECT_FALSE(IsValidProfileName(std::string(65, 'a')));
}

TEST(CliConfigTest, PathFollowsXdgConfigHome) {
  setenv("XDG_CONFIG_HOME", "/tmp/xdg-test", 1);
  EXPECT_EQ(CliConfigPath(), fs::path("/tmp/xdg-test/toolgate/config.json"));
  unsetenv("XDG_CONFIG_HOME");
  setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(CliConfigPath(), fs::path("/home/someone/.config/toolgate/config.json"));
}

TEST(CliConfigTest, SavedFileIsPrivateAndLoadsBack) {
  fs::path dir = fs::temp_directory_path() / ("tg-config-" + HexEncode(RandomBytes(4)));
  fs::path path = dir / "toolgate" / "config.json";
  EXPECT_TRUE(LoadCliConfig(path)->profiles.empty());  // no file yet
  CliConfig config;
  config.profiles["default"] = {"http://h:1", "secret-token"};
  ASSERT_TRUE(SaveCliConfig(path, config).ok());
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(fs::status(path.parent_path()).permissions() & fs::perms::all, fs::perms::owner_all);
  auto loaded = LoadCliConfig(path);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->profiles["default"].session, "secret-token");
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));

  std::ofstream(path) << "{broken";
  auto broken = LoadCliConfig(path);
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find(path.string()), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace toolgate::cli
