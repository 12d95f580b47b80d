#include "dev_command.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace toolgate::cli {
namespace {

Manifest ManifestWith(std::string_view extra) {
  std::string text = R"({"name": "t", "description": "d", "category": "c",
    "visibility": "private", "price_micro_usd": 0, "version": "1.0.0", "runtime": "lua",
    "compute_type": "CPU", "handler": "handler.lua")" +
                     std::string(extra) + "}";
  Manifest m;
  auto errors = ParseManifest(text, &m);
  EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors[0].field + errors[0].message);
  return m;
}

TEST(DevCommandTest, EventsComeFromTheFileElseTheExamplesElseEmpty) {
  Manifest with_examples =
      ManifestWith(R"(, "examples": [{"title": "small", "event": {"n": 1}}, {"event": {"n": 2}}])");
  auto events = DevEvents(with_examples, std::nullopt);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].title, "small");
  EXPECT_EQ((*events)[0].event_json, R"({"n":1})");
  EXPECT_EQ((*events)[1].title, "example 2");
  EXPECT_EQ((*events)[1].event_json, R"({"n":2})");

  events = DevEvents(with_examples, std::string(" {\"from\": \"file\"}\n"));
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].event_json, R"({"from":"file"})");

  events = DevEvents(ManifestWith(""), std::nullopt);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].event_json, "{}");

  EXPECT_FALSE(DevEvents(with_examples, std::string("{oops")).ok());
}

TEST(DevCommandTest, ExecutorArgsCarryTheManifestsLimits) {
  auto args =
      DevExecutorArgs("/bin/toolgate-executor", "tools/t",
                      ManifestWith(R"(, "timeout_ms": 5000, "memory_mb": 128)"), R"({"n":1})");
  EXPECT_EQ(args, (std::vector<std::string>{"/bin/toolgate-executor", "--pool", "cpu", "--run-file",
                                            "tools/t/handler.lua", "--run-event", R"({"n":1})",
                                            "--run-timeout-ms", "5000", "--run-memory-mb", "128"}));
  Manifest gpu = ManifestWith("");
  gpu.compute_type = "GPU";
  args = DevExecutorArgs("/x", "d", gpu, "{}");
  EXPECT_EQ(args.size(), 7u);  // the executor's own defaults for the limits
  EXPECT_EQ(args[2], "gpu");
}

TEST(DevCommandTest, ABundleToolRunsItsPackedDirectoryWithItsEgress) {
  Manifest m = ManifestWith(R"(, "bundle": true, "egress": ["api.example.com", "*.x.org:8443"])");
  auto args = DevExecutorArgs("/x", "tools/t", m, "{}", "/tmp/b.tar.gz");
  EXPECT_EQ(args, (std::vector<std::string>{"/x", "--pool", "cpu", "--run-bundle", "/tmp/b.tar.gz",
                                            "--run-runtime", "lua", "--run-handler", "handler.lua",
                                            "--run-event", "{}", "--run-egress", "api.example.com",
                                            "--run-egress", "*.x.org:8443"}));
}

TEST(DevCommandTest, TheKeysValuesGoOnStdinNeverOnTheCommandLine) {
  auto args = DevExecutorArgs("/x", "d", ManifestWith(""), "{}", {}, /*env_on_stdin=*/true);
  ASSERT_GE(args.size(), 2u);
  EXPECT_EQ(args[args.size() - 2], "--run-env-file");
  EXPECT_EQ(args.back(), "/dev/stdin");
}

// A tool directory with a manifest declaring API_KEY and TOKEN, and optionally a .dev.vars.
class DevEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::path(::testing::TempDir()) / ("tg_dev_env_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    manifest_ = ManifestWith(R"(, "declared_keys": ["API_KEY", "TOKEN"])");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  Result<std::vector<DevVar>> EnvOf(std::vector<std::string> words) {
    auto args = ParseArgs(words, {"env-file"}, {"env"});
    EXPECT_TRUE(args.ok());
    return DevEnvOf(dir_, manifest_, *args);
  }
  std::filesystem::path dir_;
  Manifest manifest_;
};

TEST_F(DevEnvTest, TheDirectorysDevVarsThenEnvWords) {
  auto none = EnvOf({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  Write(".dev.vars", "API_KEY=from-file\nTOKEN=from-file\n");
  auto env = EnvOf({"--env", "TOKEN=from-word"});
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_EQ(DevEnvJson(*env), R"({"API_KEY":"from-file","TOKEN":"from-word"})");
  // --env-file replaces the directory's file, and must exist.
  Write("other.vars", "TOKEN=other\n");
  env = EnvOf({"--env-file", (dir_ / "other.vars").string()});
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(DevEnvJson(*env), R"({"TOKEN":"other"})");
  EXPECT_FALSE(EnvOf({"--env-file", (dir_ / "missing.vars").string()}).ok());
}

TEST_F(DevEnvTest, AnUndeclaredNameOrABadLineIsAnErrorNamingIt) {
  auto undeclared = EnvOf({"--env", "NOPE=s3cret"});
  ASSERT_FALSE(undeclared.ok());
  EXPECT_EQ(undeclared.status().message().rfind("NOPE is not a declared key", 0), 0u);
  Write(".dev.vars", "API_KEY=ok\nTOKEN='s3cret\n");
  auto bad = EnvOf({});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            (dir_ / ".dev.vars").string() + ":2: unterminated ' quote (TOKEN)");
  // RunDev refuses before anything runs: a usage error.
  Write("toolgate.json", R"({"name": "t", "description": "d", "category": "c",
    "visibility": "private", "price_micro_usd": 0, "version": "1.0.0", "runtime": "lua",
    "compute_type": "CPU", "handler": "handler.lua", "declared_keys": ["API_KEY"]})");
  Write("handler.lua", "return function(e) return e end");
  Write(".dev.vars", "");
  EXPECT_EQ(RunDev({dir_.string(), "--env", "NOPE=x"}), 2);
  EXPECT_EQ(RunDev({dir_.string(), "--env", "API_KEY"}), 2);
}

TEST(DevCommandTest, UsageErrors) {
  EXPECT_EQ(RunDev({}), 2);
  EXPECT_EQ(RunDev({"dir", "--evnt", "f"}), 2);
  EXPECT_EQ(RunDev({"/nonexistent-dir"}), 1);
}

}  // namespace
}  // namespace toolgate::cli
