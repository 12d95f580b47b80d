// Bundles and the sealed runtime through ProcessRuntime: real sandboxed workers, bundles packed
// from testdata/bundles and unpacked as the executor's cache does.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "testing/tar_builder.h"
#include "toolgate/base/json.h"
#include "toolgate/executor/bundle_unpack.h"
#include "toolgate/executor/bundle_views.h"
#include "toolgate/executor/lua_runtime.h"
#include "toolgate/executor/process_runtime.h"

namespace toolgate::executor {
namespace {

using Kind = ExecutionOutcome::Kind;

class BundleRuntimeTest : public ::testing::Test {
 protected:
  BundleRuntimeTest()
      : pool_({.max_workers = 8, .spares_per_shape = 0, .upkeep_interval_ms = 0}),
        python_(Language::kPython, Config(), RuntimeLimits{}, pool_, nullptr),
        node_(Language::kJavaScript, Config(), RuntimeLimits{}, pool_, nullptr),
        lua_(Language::kLua, Config(), RuntimeLimits{}, pool_, nullptr) {}

  void SetUp() override {
    char pattern[] = "/tmp/bundle-runtime-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    ASSERT_EQ(::chmod(pattern, 0711), 0);  // the sandboxes' root passes through to the bundles
    base_ = pattern;
  }
  void TearDown() override { ASSERT_TRUE(RemoveTree(base_).ok()); }

  static ProcessRuntimeConfig Config() {
    ProcessRuntimeConfig config;
    config.runtime_dir = TOOLGATE_RUNTIME_DIR;
    return config;
  }

  // testdata/bundles/<name>, packed and unpacked as the cache does.
  BundleRef Unpack(const std::string& name) {
    std::string archive = testing::TarBuilder()
                              .Tree(std::string(TOOLGATE_EXECUTOR_TESTDATA) + "/bundles/" + name)
                              .Finish();
    std::string dir = base_ + "/" + name;
    EXPECT_EQ(::mkdir(dir.c_str(), 0755), 0);
    auto unpacked = UnpackBundle(archive, dir, BundleLimits{});
    EXPECT_TRUE(unpacked.ok()) << unpacked.status().ToString();
    return std::make_shared<const BundleFiles>(BundleFiles{name, dir});
  }

  ExecutionOutcome Run(Runtime& runtime, const std::string& event, const std::string& code,
                       const BundleRef& bundle = nullptr, const std::string& handler = "") {
    Invocation inv;
    inv.code = code;
    inv.bundle = bundle;
    inv.handler = handler;
    if (bundle) inv.bundle_root = bundle->dir;
    inv.event_json = event;
    inv.execution_id = "exec-1";
    inv.function_id = "fn-" + std::to_string(++calls_);
    inv.version = "1.0";
    inv.caller_org_id = "org-a";
    inv.timeout_ms = 10000;
    inv.memory_mb = 256;
    return runtime.Run(inv);
  }

  static std::string Field(const ExecutionOutcome& out, const char* name) {
    auto doc = ParseJson(out.body);
    std::string value;
    if (doc.ok()) GetString(doc->root.get_object().value(), name, &value);
    return value;
  }

  // A package the host's Python has (Debian's dist-packages) that no tool may import.
  static std::string HostOnlyPythonPackage() {
    DIR* d = ::opendir("/usr/lib/python3/dist-packages");
    if (d == nullptr) return "";
    std::string found;
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      std::string init = "/usr/lib/python3/dist-packages/" + name + "/__init__.py";
      if (name[0] != '_' && name.find('.') == std::string::npos &&
          ::access(init.c_str(), R_OK) == 0 && (found.empty() || name == "yaml")) {
        found = name;
      }
    }
    ::closedir(d);
    return found;
  }

  WorkerPool pool_;
  ProcessRuntime python_;
  ProcessRuntime node_;
  ProcessRuntime lua_;
  std::string base_;
  int calls_ = 0;
};

TEST_F(BundleRuntimeTest, PythonImportsAVendoredPackageAndAModuleBesideTheEntry) {
  BundleRef bundle = Unpack("python-vendored");
  auto out = Run(python_, R"({"title":"Hello, World"})", "", bundle, "src/main.py");
  ASSERT_EQ(out.kind, Kind::kCompleted) << out.failure << out.logs;
  EXPECT_EQ(out.status_code, 200) << out.body << out.logs;
  EXPECT_EQ(Field(out, "slug"), "hello-world");
  EXPECT_EQ(Field(out, "shout"), "HELLO, WORLD!");
  EXPECT_EQ(Field(out, "from"), "/bundle/textkit/slug.py");
  // The idle worker keeps the bundle's files: the cache must not remove them under it.
  EXPECT_GT(bundle.use_count(), 1);
}

TEST_F(BundleRuntimeTest, PythonTracebacksNameTheBundlesFiles) {
  BundleRef bundle = Unpack("python-vendored");
  auto out = Run(python_, R"({"title":7})", "", bundle, "src/main.py");
  ASSERT_EQ(out.kind, Kind::kCompleted) << out.failure;
  EXPECT_EQ(out.status_code, 500);
  EXPECT_EQ(Field(out, "errorType"), "AttributeError");
  EXPECT_NE(out.logs.find("/bundle/textkit/slug.py"), std::string::npos) << out.logs;
}

TEST_F(BundleRuntimeTest, JavaScriptRequiresFromNodeModulesAndBesideTheEntry) {
  auto out =
      Run(node_, R"({"text":"ab","n":21})", "", Unpack("javascript-node-modules"), "handler.js");
  ASSERT_EQ(out.kind, Kind::kCompleted) << out.failure << out.logs;
  EXPECT_EQ(out.status_code, 200) << out.body << out.logs;
  EXPECT_EQ(Field(out, "padded"), "....ab");
  EXPECT_NE(out.body.find(R"("twice":42)"), std::string::npos) << out.body;
  EXPECT_EQ(Field(out, "from"), "/bundle/node_modules/left-pad-lite/index.js");
}

TEST_F(BundleRuntimeTest, LuaRequiresTwoModulesOfTheBundleOnce) {
  auto out = Run(lua_, R"({"name":"ada","n":12})", "", Unpack("lua-modules"), "handler.lua");
  ASSERT_EQ(out.kind, Kind::kCompleted) << out.failure << out.logs;
  EXPECT_EQ(out.status_code, 200) << out.body;
  EXPECT_EQ(Field(out, "greeting"), "hello, ada");
  EXPECT_NE(out.body.find(R"("square":144)"), std::string::npos) << out.body;
  EXPECT_NE(out.body.find(R"("same":true)"), std::string::npos) << out.body;
}

TEST_F(BundleRuntimeTest, InProcessLuaReadsTheBundleFromTheHost) {
  LuaRuntime lua{RuntimeLimits{}};
  auto out = Run(lua, R"({"name":"bo","n":3})", "", Unpack("lua-modules"), "handler.lua");
  ASSERT_EQ(out.kind, Kind::kCompleted) << out.failure;
  EXPECT_EQ(Field(out, "greeting"), "hello, bo") << out.body;
}

TEST_F(BundleRuntimeTest, LuaRequireStaysInsideTheBundleWhateverPackagePathSays) {
  // Each case is a bundle whose entry requires one name; lib/strings.lua is there, so a name
  // that is refused is refused for its form, not for a missing file.
  for (std::string name : {"..lib.strings", "lib/strings", "string.format", "nope"}) {
    LuaRuntime lua{RuntimeLimits{}};
    std::string code =
        "package.path = '/usr/share/lua/5.4/?.lua'\n"
        "function service_handler() return require('" +
        name + "') end\n";
    std::string dir = base_ + "/entry-" + std::to_string(++calls_);
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((dir + "/lib").c_str(), 0755), 0);
    for (const auto& [file, text] : {std::pair<std::string, std::string>{"handler.lua", code},
                                     {"lib/strings.lua", "return {}"}}) {
      FILE* f = std::fopen((dir + "/" + file).c_str(), "w");
      std::fputs(text.c_str(), f);
      std::fclose(f);
    }
    auto out = Run(lua, "{}", "", std::make_shared<const BundleFiles>(BundleFiles{"x", dir}),
                   "handler.lua");
    EXPECT_EQ(out.status_code, 500) << name << " " << out.body;
    EXPECT_NE(Field(out, "errorMessage").find("module '" + name + "' not found"), std::string::npos)
        << out.body;
  }
}

TEST_F(BundleRuntimeTest, SingleFileLuaStillHasNoRequire) {
  auto out = Run(lua_, "{}",
                 "function service_handler() return type(require) .. ' ' .. type(package) end");
  EXPECT_EQ(out.body, R"("nil nil")");
}

TEST_F(BundleRuntimeTest, PythonCannotImportAHostOnlyPackage) {
  const std::string package = HostOnlyPythonPackage();
  ASSERT_FALSE(package.empty())
      << "this test needs a Debian Python package on the host (apt-get install python3-yaml)";
  // The host's own interpreter imports it...
  std::string probe = "/usr/bin/python3 -c 'import " + package + "' 2>/dev/null";
  ASSERT_EQ(std::system(probe.c_str()), 0) << package;
  // ...a handler does not, by name nor by its path.
  std::string code =
      "import os, sys\n"
      "def service_handler(event, context):\n"
      "    try:\n"
      "        import " +
      package +
      "\n"
      "        imported = 'yes'\n"
      "    except ImportError as e:\n"
      "        imported = type(e).__name__\n"
      "    return {'imported': imported, 'no_site': sys.flags.no_site,\n"
      "            'listing': os.listdir('/usr/lib/python3/dist-packages'),\n"
      "            'path': [p for p in sys.path if 'packages' in p]}\n";
  auto out = Run(python_, "{}", code);
  ASSERT_EQ(out.kind, Kind::kCompleted) << out.failure << out.logs;
  EXPECT_EQ(out.body, R"({"imported":"ModuleNotFoundError","no_site":1,"listing":[],"path":[]})")
      << out.logs;
}

TEST_F(BundleRuntimeTest, NodeSeesNoGlobalModules) {
  // HOME is /tmp in the sandbox, so /tmp/.node_modules is one of node's global paths: a module
  // put there is found by an unsealed node, and must not be by a handler.
  std::string code = R"(
const fs = require('fs');
const Module = require('module');
exports.service_handler = () => {
  fs.mkdirSync('/tmp/.node_modules/probe', {recursive: true});
  fs.writeFileSync('/tmp/.node_modules/probe/index.js', 'module.exports = 1;');
  const tryRequire = (name) => { try { require(name); return 'found'; } catch (e) { return e.code; } };
  return {
    global: tryRequire('probe'),
    globalPaths: Module.globalPaths.length,
    debian: fs.existsSync('/usr/share/nodejs') ? fs.readdirSync('/usr/share/nodejs').length : 0,
  };
};)";
  auto out = Run(node_, "{}", code);
  ASSERT_EQ(out.kind, Kind::kCompleted) << out.failure << out.logs;
  EXPECT_EQ(out.body, R"({"global":"MODULE_NOT_FOUND","globalPaths":0,"debian":0})") << out.logs;
}

}  // namespace
}  // namespace toolgate::executor

namespace toolgate::executor {
namespace {

// Bundles shown to workers after they started (bundle_views.h): spares serve bundle versions.
class BundleViewsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/bundle-views-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    ASSERT_EQ(::chmod(pattern, 0711), 0);
    base_ = pattern;
    auto views = BundleViews::Open(base_ + "/views");
    ASSERT_TRUE(views.ok()) << views.status().ToString();
    views_ = std::move(*views);
  }
  void TearDown() override {
    python_.reset();
    pool_.reset();
    views_.reset();
    ASSERT_TRUE(RemoveTree(base_).ok());
  }
  void Start(size_t max_workers, size_t spares) {
    pool_ = std::make_unique<WorkerPool>(WorkerPoolOptions{
        .max_workers = max_workers, .spares_per_shape = spares, .upkeep_interval_ms = 0});
    ProcessRuntimeConfig config;
    config.runtime_dir = TOOLGATE_RUNTIME_DIR;
    config.bundle_views = views_.get();
    python_ = std::make_unique<ProcessRuntime>(Language::kPython, config, RuntimeLimits{}, *pool_,
                                               nullptr);
  }
  // A bundle holding handler.py with code, unpacked as the cache does.
  BundleRef Bundle(const std::string& name, const std::string& code) {
    std::string dir = base_ + "/" + name;
    EXPECT_EQ(::mkdir(dir.c_str(), 0755), 0);
    auto unpacked = UnpackBundle(testing::TarBuilder().File("handler.py", code).Finish(), dir, {});
    EXPECT_TRUE(unpacked.ok()) << unpacked.status().ToString();
    return std::make_shared<const BundleFiles>(BundleFiles{name, dir});
  }
  ExecutionOutcome Run(const std::string& function_id, const std::string& code,
                       const BundleRef& bundle) {
    Invocation inv;
    inv.code = code;
    inv.bundle = bundle;
    inv.handler = "handler.py";
    if (bundle) inv.bundle_root = bundle->dir;
    inv.event_json = "{}";
    inv.execution_id = "exec-1";
    inv.function_id = function_id;
    inv.version = "1.0";
    inv.caller_org_id = "org-a";
    inv.timeout_ms = 10000;
    inv.memory_mb = 256;
    return python_->Run(inv);
  }

  std::string base_;
  std::unique_ptr<BundleViews> views_;
  std::unique_ptr<WorkerPool> pool_;
  std::unique_ptr<ProcessRuntime> python_;
};

TEST_F(BundleViewsTest, ABundleVersionTakesASpareAndSeesItsBundleReadOnly) {
  Start(/*max_workers=*/4, /*spares=*/1);
  ASSERT_EQ(pool_->StartSpares(), 1u);
  BundleRef bundle = Bundle("b1", R"(import os
def service_handler(event, context):
    try:
        open('/bundle/new.py', 'w')
        wrote = 'yes'
    except OSError as e:
        wrote = type(e).__name__
    return {'files': sorted(os.listdir('/bundle')), 'wrote': wrote,
            'read_only': bool(os.statvfs('/bundle').f_flag & os.ST_RDONLY),
            'no_exec': bool(os.statvfs('/bundle').f_flag & os.ST_NOEXEC)}
)");
  auto out = Run("fn-b", "", bundle);
  ASSERT_EQ(out.kind, ExecutionOutcome::Kind::kCompleted) << out.failure << out.logs;
  EXPECT_EQ(out.body,
            R"({"files":["handler.py"],"wrote":"OSError","read_only":true,"no_exec":true})")
      << out.logs;
  EXPECT_EQ(pool_->stats().spares_taken, 1u);
  EXPECT_GT(bundle.use_count(), 1);  // the idle worker holds the files
}

TEST_F(BundleViewsTest, AWorkerStartedInASlotABundleWorkerLeftSeesNoBundle) {
  Start(/*max_workers=*/1, /*spares=*/0);
  BundleRef bundle = Bundle("secret", "SECRET = 'org-a'\ndef service_handler(e, c):\n  return 1\n");
  auto first = Run("fn-a", "", bundle);
  ASSERT_EQ(first.status_code, 200) << first.body << first.logs;
  // Another tool: the only slot's idle worker is stopped for it, and its sandbox is new.
  auto second = Run(
      "fn-b", "import os\ndef service_handler(e, c):\n  return os.listdir('/bundle')\n", nullptr);
  ASSERT_EQ(second.kind, ExecutionOutcome::Kind::kCompleted) << second.failure;
  EXPECT_EQ(second.body, "[]") << second.logs;
  EXPECT_EQ(pool_->stats().evicted, 1u);
  EXPECT_EQ(bundle.use_count(), 1);  // the stopped worker let the files go
}

}  // namespace
}  // namespace toolgate::executor
