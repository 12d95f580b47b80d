#include "templates.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "bundle_pack.h"
#include "commands.h"
#include "mcp_conformance.h"

namespace toolgate::cli {
namespace {

namespace fs = std::filesystem;

class TemplatesTest : public ::testing::TestWithParam<std::tuple<std::string, bool>> {};

TEST_P(TemplatesTest, ManifestThatPublishReadsAndAHandler) {
  const auto& [runtime, mcp] = GetParam();
  auto files = ToolTemplate(runtime, mcp, "My \"weather\" tool");
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].path, "toolgate.json");

  Manifest manifest;
  std::vector<FieldError> errors = ParseManifest((*files)[0].text, &manifest);
  for (const auto& e : errors) ADD_FAILURE() << e.field << ": " << e.message;
  EXPECT_EQ(manifest.name, "My \"weather\" tool");
  EXPECT_EQ(manifest.runtime, runtime);
  EXPECT_EQ(manifest.mcp.value_or(false), mcp);
  EXPECT_EQ(manifest.handler, (*files)[1].path);
  EXPECT_EQ(manifest.compute_type, "CPU");
  EXPECT_TRUE(manifest.function_id.empty());

  const std::string& code = (*files)[1].text;
  EXPECT_NE(code.find("service_handler"), std::string::npos);
  EXPECT_EQ(code.find("{{"), std::string::npos) << "a placeholder was left in";
  if (mcp) {
    EXPECT_NE(code.find("My -weather- tool"), std::string::npos);  // serverInfo.name
  }
}

INSTANTIATE_TEST_SUITE_P(Runtimes, TemplatesTest,
                         ::testing::Combine(::testing::Values("python", "javascript", "lua"),
                                            ::testing::Bool()));

TEST(TemplatesTest, UnknownRuntime) {
  EXPECT_EQ(ToolTemplate("ruby", false, "x").status().code(), Status::Code::kInvalidArgument);
}

TEST(TemplatesTest, WritesIntoANewDirectoryAndNeverOverwrites) {
  fs::path dir = fs::path(::testing::TempDir()) / ("tg_new_" + std::to_string(getpid())) / "t";
  fs::remove_all(dir.parent_path());
  auto files = ToolTemplate("lua", true, "t");
  ASSERT_TRUE(files.ok());
  ASSERT_TRUE(WriteToolTemplate(dir, *files).ok());
  std::ifstream in(dir / "handler.lua");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), (*files)[1].text);

  std::ofstream(dir / "handler.lua") << "-- mine";
  auto again = ToolTemplate("lua", false, "t");
  EXPECT_EQ(WriteToolTemplate(dir, *again).code(), Status::Code::kConflict);
  std::ifstream mine(dir / "handler.lua");
  std::stringstream kept;
  kept << mine.rdbuf();
  EXPECT_EQ(kept.str(), "-- mine");
  fs::remove_all(dir.parent_path());
}

// Runs the MCP template of a runtime directly: one event per input line, the JSON of the
// handler's return value per output line (what the runtime would encode as the body).
class DirectRunTest : public ::testing::TestWithParam<std::string> {
 protected:
  struct Interpreter {
    const char* binary;
    const char* driver;
  };

  static Interpreter For(const std::string& runtime) {
    if (runtime == "python") {
      return {"/usr/bin/python3",
              "import importlib.util, json, sys\n"
              "spec = importlib.util.spec_from_file_location('handler', sys.argv[1])\n"
              "handler = importlib.util.module_from_spec(spec)\n"
              "spec.loader.exec_module(handler)\n"
              "for line in sys.stdin:\n"
              "    print(json.dumps(handler.service_handler(json.loads(line), {})))\n"};
    }
    return {"/usr/bin/node",
            "const handler = require(process.argv[2]);\n"
            "const lines = require('fs').readFileSync(0, 'utf8').split('\\n');\n"
            "for (const line of lines.filter((l) => l.length > 0)) {\n"
            "  console.log(JSON.stringify(handler.service_handler(JSON.parse(line), {})));\n"
            "}\n"};
  }
};

TEST_P(DirectRunTest, McpTemplatePassesTheConformanceCases) {
  const std::string runtime = GetParam();
  Interpreter interpreter = For(runtime);
  // Both interpreters are the tools' runtimes (scripts/install-deps.sh): neither may be missing.
  ASSERT_TRUE(fs::exists(interpreter.binary)) << interpreter.binary << " is not installed";

  fs::path dir = fs::path(::testing::TempDir()) / ("tg_run_" + runtime + std::to_string(getpid()));
  fs::remove_all(dir);
  auto files = ToolTemplate(runtime, true, "conformance");
  ASSERT_TRUE(files.ok());
  ASSERT_TRUE(WriteToolTemplate(dir, *files).ok());
  std::ofstream(dir / "driver") << interpreter.driver;
  auto cases = testing::McpConformanceCases();
  {
    std::ofstream events(dir / "events");
    for (const auto& c : cases) events << c.event << "\n";
  }
  std::string command = std::string(interpreter.binary) + " " + (dir / "driver").string() + " " +
                        (dir / (*files)[1].path).string() + " < " + (dir / "events").string();
  FILE* out = popen(command.c_str(), "r");
  ASSERT_NE(out, nullptr);
  std::string text;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, out)) > 0;) text.append(buffer, n);
  ASSERT_EQ(pclose(out), 0) << text;

  std::istringstream lines(text);
  std::string line;
  for (const auto& c : cases) {
    ASSERT_TRUE(std::getline(lines, line)) << "no answer for " << c.name;
    testing::CheckMcpAnswer(c, line);
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, DirectRunTest, ::testing::Values("python", "javascript"));

}  // namespace
}  // namespace toolgate::cli

namespace toolgate::cli {
namespace {

class BundleTemplateTest : public ::testing::TestWithParam<std::string> {};

// Runs command in dir; its stdout.
std::string RunIn(const fs::path& dir, const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(("cd " + dir.string() + " && " + command + " 2>&1").c_str(), "r");
  char buf[1024];
  while (pipe && fgets(buf, sizeof buf, pipe)) out += buf;
  if (pipe) ::pclose(pipe);
  return out;
}

TEST_P(BundleTemplateTest, ABundleLayoutWhoseHandlerUsesItsOwnModule) {
  const std::string runtime = GetParam();
  auto files = ToolTemplate(runtime, false, "Greeter Bundle", /*bundle=*/true);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  Manifest manifest;
  std::vector<FieldError> errors = ParseManifest((*files)[0].text, &manifest);
  for (const auto& e : errors) ADD_FAILURE() << e.field << ": " << e.message;
  EXPECT_TRUE(manifest.bundle);
  std::set<std::string> paths;
  for (const auto& f : *files) {
    paths.insert(f.path);
    EXPECT_EQ(f.text.find("{{"), std::string::npos) << f.path << ": a placeholder was left in";
  }
  EXPECT_EQ(paths.count(manifest.handler), 1u);
  EXPECT_EQ(paths.count(".toolgateignore"), 1u);
  for (const auto& f : *files) {
    // The values of `toolgate dev` stay out of the bundle.
    if (f.path == ".toolgateignore") {
      EXPECT_TRUE(IgnoreRules::Parse(f.text).Excluded(".dev.vars", false)) << f.text;
    }
  }
  EXPECT_GE(paths.size(), 4u) << "a module of its own beside the handler";

  fs::path dir =
      fs::path(::testing::TempDir()) / ("tg_bundle_" + runtime + std::to_string(getpid()));
  fs::remove_all(dir);
  ASSERT_TRUE(WriteToolTemplate(dir, *files).ok());
  // The handler runs from the directory as the bundle's root, as in the sandbox.
  std::string out;
  if (runtime == "python") {
    out = RunIn(dir,
                "/usr/bin/python3 -I -S -c \"import sys; sys.path.insert(0, '.'); "
                "import handler; print(handler.service_handler({'name': 'Ada'}, {}))\"");
  } else if (runtime == "javascript") {
    out = RunIn(dir,
                "node -e \"console.log(JSON.stringify(require('./handler.js')"
                ".service_handler({name: 'Ada'})))\"");
    EXPECT_NE((*files)[0].text.find("\"runtime\": \"javascript\""), std::string::npos);
  } else {
    // No standalone Lua on the machine: the executor's runtime tests run Lua bundles; here the
    // module the handler requires must be where require looks.
    EXPECT_EQ(paths.count("lib/greet.lua"), 1u);
    out = "Hello, Ada!";
  }
  EXPECT_NE(out.find("Hello, Ada!"), std::string::npos) << out;
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Runtimes, BundleTemplateTest,
                         ::testing::Values("python", "javascript", "lua"));

TEST(BundleTemplateTest, NotWithMcp) {
  EXPECT_EQ(ToolTemplate("python", true, "x", true).status().code(),
            Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace toolgate::cli
