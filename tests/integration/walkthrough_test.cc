// The README as a user follows it: its curl walk-through runs as written (only B= pointed at the
// system), twice in a row, and the API reference it points at is served at /docs.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "system.h"
#include "toolgate/base/crypto.h"

namespace fs = std::filesystem;

namespace toolgate::testing {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem());

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The ```sh block under the README's "A walk-through with curl" heading ("" when missing).
std::string WalkThrough() {
  std::string readme = ReadFile(fs::path(TOOLGATE_SOURCE_DIR) / "README.md");
  size_t section = readme.find("\n## A walk-through with curl\n");
  if (section == std::string::npos) return "";
  size_t begin = readme.find("```sh\n", section);
  size_t next_section = readme.find("\n## ", section + 1);
  if (begin == std::string::npos || begin > next_section) return "";
  begin += 6;
  size_t end = readme.find("```", begin);
  return end == std::string::npos ? "" : readme.substr(begin, end - begin);
}

struct CommandRun {
  int status;
  std::string out;
};

// Runs script with bash in dir, stdout and stderr together.
CommandRun Bash(const fs::path& dir, const std::string& script) {
  std::ofstream(dir / "walkthrough.sh") << script;
  std::string cmd = "cd '" + dir.string() + "' && bash walkthrough.sh 2>&1";
  CommandRun r{-1, {}};
  FILE* pipe = ::popen(cmd.c_str(), "r");
  char buf[4096];
  while (pipe && fgets(buf, sizeof buf, pipe)) r.out += buf;
  int status = pipe ? ::pclose(pipe) : -1;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(Readme, TheCurlWalkThroughRunsAsWrittenTwiceInARow) {
  std::string block = WalkThrough();
  ASSERT_FALSE(block.empty()) << "README.md has no ```sh block under \"A walk-through with curl\"";
  const std::string documented_base = "B=http://127.0.0.1:8080/api/v1\n";
  size_t base = block.find(documented_base);
  ASSERT_EQ(base, 0u) << "the walk-through must start with " << documented_base << block;
  block.replace(base, documented_base.size(), "B=" + g_system->url() + "/api/v1\n");
  // As written, except that any answer of 400 or more, and any failing command, fails the run.
  std::string script =
      "set -euo pipefail\ncurl() { command curl --fail-with-body \"$@\"; }\n" + block;

  fs::path dir = fs::path(g_system->data_dir()) / ("readme-" + HexEncode(RandomBytes(4)));
  fs::create_directories(dir);
  for (int run = 1; run <= 2; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    CommandRun r = Bash(dir, script);
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find(R"("body":"{\"hello\":\"Ada\"}")"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(R"("body":"{\"token_length\":6}")"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(R"("version":"1.2.0")"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(R"("price_micro_usd":2000)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(R"("available_micro_usd":4999998)"), std::string::npos) << r.out;
  }
}

TEST(Docs, TheApiReferenceIsServedAtDocs) {
  auto page = g_system->Client()->Get("/docs");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->Header("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(page->body.find("<h1 id=\"toolgate-http-api-v1\">"), std::string::npos) << page->body;
  EXPECT_NE(page->body.find("<code>POST /functions/{function_id}/invoke</code>"),
            std::string::npos);
  EXPECT_NE(page->body.find("<code>insufficient_balance</code>"), std::string::npos);
  auto css = g_system->Client()->Get("/docs/docs.css");
  ASSERT_TRUE(css.ok());
  EXPECT_EQ(css->status, 200);
  EXPECT_EQ(css->Header("Content-Type"), "text/css; charset=utf-8");
  // The web app's own routes still get the app.
  auto app = g_system->Client()->Get("/tools/anything");
  ASSERT_TRUE(app.ok());
  EXPECT_EQ(app->body.find("toolgate-http-api"), std::string::npos);
}

}  // namespace
}  // namespace toolgate::testing
