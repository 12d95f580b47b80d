// Bundle versions through the whole system, published with `toolgate publish DIR`: a Python tool
// importing a package it vendors, a JavaScript tool requiring a module from its node_modules, a
// Lua tool with two modules, and a JavaScript tool whose node_modules npm installed while the
// CLI packed it (Ajv, from the npm registry); then the sealed runtime: what the host has
// installed is not a tool's to import.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "system.h"
#include "toolgate/base/crypto.h"

namespace fs = std::filesystem;

namespace toolgate::testing {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem());

const fs::path kSourceDir = TOOLGATE_SOURCE_DIR;

struct CliRun {
  int status;
  std::string out;
};

// A publisher driving the CLI with its own config directory, and a funded key to invoke with.
class Publisher {
 public:
  Publisher() : dir_(fs::path(g_system->data_dir()) / ("bundles-" + HexEncode(RandomBytes(4)))) {
    fs::create_directories(dir_);
    std::string email = "bundles" + HexEncode(RandomBytes(4)) + "@example.com";
    Expect(Run("signup --email " + email +
               " --password 'long enough secret' --organization 'Bundle Org'"));
    CliRun key = Run("keys create --name bundles --scopes invoke");
    size_t at = key.out.find("tg_");
    key_ =
        at == std::string::npos ? "" : key.out.substr(at, key.out.find_first_of("\"\n ", at) - at);
    Expect(Run("topup --amount 1000000 --idempotency-key bundles-1"));
  }

  // Runs `toolgate ARGS` (stdout and stderr together).
  CliRun Run(const std::string& args) const {
    std::string cmd = "TOOLGATE_URL=" + g_system->url() +
                      " XDG_CONFIG_HOME=" + (dir_ / "config").string() + " " + TOOLGATE_BIN_DIR +
                      "/toolgate " + args + " 2>&1";
    CliRun r{-1, {}};
    FILE* pipe = ::popen(cmd.c_str(), "r");
    char buf[4096];
    while (pipe && fgets(buf, sizeof buf, pipe)) r.out += buf;
    int status = pipe ? ::pclose(pipe) : -1;
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
  }

  // Copies source (a tool's files) into a directory of its own, with a manifest of a bundle
  // version of runtime whose entry is handler (unless source has its own toolgate.json), and
  // publishes it; the function's id.
  std::string Publish(const fs::path& source, const std::string& runtime,
                      const std::string& handler) {
    fs::path tool = dir_ / ("tool-" + HexEncode(RandomBytes(4)));
    fs::copy(source, tool, fs::copy_options::recursive);
    if (!fs::exists(tool / "toolgate.json")) {
      std::ofstream(tool / "toolgate.json")
          << R"({"name": "bundle tool", "description": "a bundle", "category": "Testing",
"visibility": "private", "price_micro_usd": 0, "version": "1.0.0", "runtime": ")"
          << runtime << R"(", "compute_type": "CPU", "bundle": true, "handler": ")" << handler
          << R"("})";
    }
    last_ = Run("publish " + tool.string());
    EXPECT_EQ(last_.status, 0) << last_.out;
    std::ifstream manifest(tool / "toolgate.json");
    std::string text((std::istreambuf_iterator<char>(manifest)), std::istreambuf_iterator<char>());
    return StringField(text, "function_id");
  }

  http::HttpResponse Invoke(const std::string& function_id, const std::string& event) const {
    return testing::Invoke(*g_system, key_, function_id, "", R"({"event":)" + event + "}");
  }

  const CliRun& last() const { return last_; }
  const fs::path& dir() const { return dir_; }

 private:
  static void Expect(const CliRun& r) { EXPECT_EQ(r.status, 0) << r.out; }
  fs::path dir_;
  std::string key_;
  CliRun last_;
};

Publisher& SharedPublisher() {
  static Publisher* publisher = new Publisher();
  return *publisher;
}

std::string Body(const http::HttpResponse& r) {
  return StringField(r.body, "body");
}

const fs::path kBundles = kSourceDir / "services/executor/testdata/bundles";

TEST(BundlesTest, PythonToolImportsTheVendoredPackage) {
  Publisher& p = SharedPublisher();
  std::string id = p.Publish(kBundles / "python-vendored", "python", "src/main.py");
  ASSERT_FALSE(id.empty()) << p.last().out;
  EXPECT_NE(p.last().out.find("packed "), std::string::npos) << p.last().out;
  auto r = p.Invoke(id, R"({"title":"Bundles Work"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(StringField(Body(r), "slug"), "bundles-work") << r.body;
  EXPECT_EQ(StringField(Body(r), "from"), "/bundle/textkit/slug.py");
  // Warm: the same answer from the worker that holds the bundle.
  auto again = p.Invoke(id, R"({"title":"Twice Over"})");
  EXPECT_EQ(StringField(Body(again), "slug"), "twice-over") << again.body;
}

TEST(BundlesTest, JavaScriptToolRequiresFromItsNodeModules) {
  Publisher& p = SharedPublisher();
  std::string id = p.Publish(kBundles / "javascript-node-modules", "javascript", "handler.js");
  ASSERT_FALSE(id.empty()) << p.last().out;
  auto r = p.Invoke(id, R"({"text":"ab","n":4})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(StringField(Body(r), "padded"), "....ab") << r.body;
  EXPECT_EQ(StringField(Body(r), "from"), "/bundle/node_modules/left-pad-lite/index.js");
}

TEST(BundlesTest, LuaToolRequiresTwoModules) {
  Publisher& p = SharedPublisher();
  std::string id = p.Publish(kBundles / "lua-modules", "lua", "handler.lua");
  ASSERT_FALSE(id.empty()) << p.last().out;
  auto r = p.Invoke(id, R"({"name":"grace","n":9})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(StringField(Body(r), "greeting"), "hello, grace") << r.body;
  EXPECT_NE(Body(r).find(R"("square":81)"), std::string::npos) << r.body;
}

TEST(BundlesTest, NpmDependencyInstalledByPublishValidatesEvents) {
  Publisher& p = SharedPublisher();
  // The demo's tool as its author has it: package.json and package-lock.json, no node_modules.
  fs::path source = kSourceDir / "cli/toolgate/demo/tools/order-validator";
  ASSERT_FALSE(fs::exists(source / "node_modules"));
  std::string id = p.Publish(source, "", "");
  ASSERT_FALSE(id.empty()) << p.last().out;
  EXPECT_NE(p.last().out.find("npm ci --omit=dev"), std::string::npos) << p.last().out;

  auto valid =
      p.Invoke(id, R"({"id":"A-1","currency":"EUR","items":[{"sku":"TEA","quantity":2}]})");
  ASSERT_EQ(valid.status, 200) << valid.body;
  EXPECT_EQ(Body(valid), R"({"valid":true})");

  auto invalid = p.Invoke(id, R"({"id":"","currency":"euro","items":[]})");
  ASSERT_EQ(invalid.status, 200) << invalid.body;
  EXPECT_NE(Body(invalid).find(R"("valid":false)"), std::string::npos) << invalid.body;
  EXPECT_NE(Body(invalid).find("/currency must match pattern"), std::string::npos) << invalid.body;
  EXPECT_NE(Body(invalid).find("/items must NOT have fewer than 1 items"), std::string::npos)
      << invalid.body;
}

TEST(BundlesTest, AHostOnlyPythonPackageIsNotImportable) {
  // The host's Python has PyYAML (Debian's python3-yaml, an install-deps test package).
  ASSERT_EQ(std::system("/usr/bin/python3 -c 'import yaml' 2>/dev/null"), 0);
  Publisher& p = SharedPublisher();
  fs::path source = p.dir() / "host-only";
  fs::create_directories(source);
  std::ofstream(source / "handler.py") << "def service_handler(event, context):\n"
                                          "    import yaml\n"
                                          "    return {'imported': yaml.__file__}\n";
  std::string id = p.Publish(source, "python", "handler.py");
  ASSERT_FALSE(id.empty()) << p.last().out;
  auto r = p.Invoke(id, "{}");
  EXPECT_EQ(r.status, 500) << r.body;
  EXPECT_EQ(StringField(Body(r), "errorType"), "ModuleNotFoundError") << r.body;
}

}  // namespace
}  // namespace toolgate::testing
