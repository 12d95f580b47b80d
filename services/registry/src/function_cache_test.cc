#include "toolgate/registry/function_cache.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "toolgate/registry/stages.h"

namespace toolgate::registry {
namespace {

constexpr const char* kId = "6f1c2b9e-3d4a-4b5c-8d7e-9f0a1b2c3d4e";

// An in-memory source that counts loads and can run a hook in the middle of one.
class FakeSource : public FunctionSource {
 public:
  std::map<std::string, CachedFunction> functions;
  std::map<std::string, std::unordered_set<std::string>> added;
  int function_loads = 0;
  int added_loads = 0;
  bool down = false;
  std::function<void()> during_load;  // runs inside the next load, then is cleared

  Result<std::optional<CachedFunction>> LoadFunction(const std::string& id) override {
    ++function_loads;
    RunHook();
    if (down) return Status::Unavailable("down");
    auto it = functions.find(id);
    if (it == functions.end()) return std::optional<CachedFunction>();
    return std::optional<CachedFunction>(it->second);
  }
  Result<std::unordered_set<std::string>> LoadAdded(const std::string& org) override {
    ++added_loads;
    RunHook();
    if (down) return Status::Unavailable("down");
    return added[org];
  }

 private:
  void RunHook() {
    if (during_load) {
      auto hook = std::move(during_load);
      during_load = nullptr;
      hook();
    }
  }
};

CachedFunction Fn(int64_t price) {
  CachedFunction f;
  f.function_id = kId;
  f.org_id = "org";
  f.price_micro_usd = price;
  return f;
}

struct CacheTest : testing::Test {
  FakeSource source;
  int64_t now = 1000;
  FunctionCache cache{source, FunctionCache::Options{60'000, 100, [this] { return now; }}};
};

TEST_F(CacheTest, WarmCallsDoNotLoad) {
  source.functions[kId] = Fn(5);
  for (int i = 0; i < 3; ++i) {
    auto f = cache.Function(kId);
    ASSERT_TRUE(f.ok());
    ASSERT_NE(*f, nullptr);
    EXPECT_EQ((*f)->price_micro_usd, 5);
  }
  EXPECT_EQ(source.function_loads, 1);
}

TEST_F(CacheTest, UnknownIdsAreCachedAsAbsent) {
  EXPECT_EQ(*cache.Function(kId), nullptr);
  EXPECT_EQ(*cache.Function(kId), nullptr);
  EXPECT_EQ(source.function_loads, 1);
  // Creating the function announces it, which drops the "absent" entry.
  source.functions[kId] = Fn(1);
  cache.DropFunction(kId);
  EXPECT_NE(*cache.Function(kId), nullptr);
}

TEST_F(CacheTest, DropReloads) {
  source.functions[kId] = Fn(5);
  cache.Function(kId);
  source.functions[kId] = Fn(7);
  cache.DropFunction(kId);
  EXPECT_EQ((*cache.Function(kId))->price_micro_usd, 7);
  EXPECT_EQ(source.function_loads, 2);
}

TEST_F(CacheTest, LoadOverlappingADropIsNotKept) {
  source.functions[kId] = Fn(5);
  // The change lands (and is announced) while the load is reading the old row.
  source.during_load = [this] { cache.DropFunction(kId); };
  EXPECT_EQ((*cache.Function(kId))->price_micro_usd, 5);
  source.functions[kId] = Fn(7);
  EXPECT_EQ((*cache.Function(kId))->price_micro_usd, 7);
}

TEST_F(CacheTest, EntriesExpire) {
  source.functions[kId] = Fn(5);
  cache.Function(kId);
  now += 59'999;
  cache.Function(kId);
  EXPECT_EQ(source.function_loads, 1);
  now += 1;
  cache.Function(kId);
  EXPECT_EQ(source.function_loads, 2);
}

TEST_F(CacheTest, ErrorsAreReturnedAndNotCached) {
  source.down = true;
  EXPECT_EQ(cache.Function(kId).status().code(), Status::Code::kUnavailable);
  EXPECT_EQ(cache.IsAdded("org", kId).status().code(), Status::Code::kUnavailable);
  source.down = false;
  source.functions[kId] = Fn(5);
  EXPECT_NE(*cache.Function(kId), nullptr);
}

TEST_F(CacheTest, WorkspaceAddsPerOrganization) {
  source.added["a"] = {kId};
  EXPECT_TRUE(*cache.IsAdded("a", kId));
  EXPECT_FALSE(*cache.IsAdded("b", kId));
  EXPECT_FALSE(*cache.IsAdded("a", "other"));
  EXPECT_EQ(source.added_loads, 2);  // one per organization
  source.added["a"].clear();
  EXPECT_TRUE(*cache.IsAdded("a", kId));  // still cached
  cache.DropWorkspace("a");
  EXPECT_FALSE(*cache.IsAdded("a", kId));
}

TEST_F(CacheTest, SizeIsBounded) {
  for (int i = 0; i < 250; ++i) cache.Function("id-" + std::to_string(i));
  int loads = source.function_loads;
  cache.Function("id-249");  // the most recent survives a clear
  EXPECT_EQ(source.function_loads, loads);
  cache.Function("id-0");  // went in a clear
  EXPECT_EQ(source.function_loads, loads + 1);
}

}  // namespace
}  // namespace toolgate::registry

namespace toolgate::registry {
namespace {

// The edge's view (tg.registry.function_view) of the cache's function, for one caller.
TEST_F(CacheTest, FunctionViewForTheEdge) {
  CachedFunction f = Fn(5);
  f.is_public = true;
  f.mcp = true;
  PublishedVersion v;
  v.version = "1.2";
  v.parsed = *core::ParseVersion("1.2");
  v.runtime = "lua";
  v.compute_type = "CPU";
  v.timeout_ms = 100;
  v.declared_keys = {"K"};
  v.price_micro_usd = 7;
  v.egress = {"api.example.com"};
  v.input_schema_json = R"({"type":"object"})";
  f.versions.push_back(v);
  source.functions[kId] = f;
  source.added["caller"] = {kId};

  v1::FunctionViewReply reply =
      ViewFunction(cache, "6F1C2B9E-3D4A-4B5C-8D7E-9F0A1B2C3D4E", "caller");
  ASSERT_TRUE(reply.found());
  EXPECT_FALSE(reply.has_problem());
  EXPECT_TRUE(reply.added());
  const v1::FunctionView& view = reply.function();
  EXPECT_EQ(view.function_id(), kId);
  EXPECT_EQ(view.org_id(), "org");
  EXPECT_TRUE(view.is_public());
  EXPECT_TRUE(view.mcp());
  ASSERT_EQ(view.versions_size(), 1);
  EXPECT_EQ(view.versions(0).version(), "1.2");
  EXPECT_EQ(view.versions(0).declared_keys(0), "K");
  EXPECT_EQ(view.versions(0).price_micro_usd(), 7);
  EXPECT_EQ(view.versions(0).egress(0), "api.example.com");
  EXPECT_EQ(view.versions(0).input_schema_json(), R"({"type":"object"})");
  // The owner has nothing to add; another caller has not added it.
  EXPECT_FALSE(ViewFunction(cache, kId, "org").added());
  EXPECT_FALSE(ViewFunction(cache, kId, "stranger").added());
}

TEST_F(CacheTest, FunctionViewOfNothingAndOfADownStore) {
  EXPECT_FALSE(ViewFunction(cache, kId, "caller").found());
  EXPECT_FALSE(ViewFunction(cache, "not-a-uuid", "caller").found());
  EXPECT_EQ(source.function_loads, 1);  // no store read for an id that cannot exist
  source.down = true;
  cache.DropFunction(kId);
  v1::FunctionViewReply reply = ViewFunction(cache, kId, "caller");
  EXPECT_FALSE(reply.found());
  EXPECT_EQ(reply.problem().code(), "service_unavailable");
}

}  // namespace
}  // namespace toolgate::registry
