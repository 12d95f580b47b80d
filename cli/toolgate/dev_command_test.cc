#include "dev_command.h"

#include <gtest/gtest.h>

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

TEST(DevCommandTest, UsageErrors) {
  EXPECT_EQ(RunDev({}), 2);
  EXPECT_EQ(RunDev({"dir", "--evnt", "f"}), 2);
  EXPECT_EQ(RunDev({"/nonexistent-dir"}), 1);
}

}  // namespace
}  // namespace toolgate::cli
