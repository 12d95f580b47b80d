// The edge decides warm calls from its caches of auth's and the registry's answers; every change
// that matters must reach a warm edge within a second (the owners' broadcasts), with the whole
// system running. Each case warms the edge first, changes the data through the API, then polls
// until the edge's answer changes, for at most 1 s.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "system.h"
#include "toolgate/base/time.h"

namespace toolgate::testing {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem());

constexpr const char* kVersionOf =
    "function service_handler(event, context) return {version = context.version} end";
constexpr int64_t kPropagationMs = 1000;  // the bound the product promises

std::string Code(const http::HttpResponse& r) {
  return StringField(r.body, "code");
}

// Calls call until its answer's status is want_status, for at most kPropagationMs after the
// change; returns the last answer, whose status the caller asserts.
http::HttpResponse AnswerWithin(const std::function<http::HttpResponse()>& call, int want_status) {
  http::HttpResponse r;
  EXPECT_TRUE(WaitUntil(
      [&] {
        r = call();
        return r.status == want_status;
      },
      kPropagationMs, "a " + std::to_string(want_status) + " answer", 0));
  return r;
}

class EdgeCacheTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    owner_ = new Account(*g_system, "Cache Owner");
    caller_ = new Account(*g_system, "Cache Caller");
    owner_->TopUp(100'000'000);
    caller_->TopUp(100'000'000);
    owner_key_ = owner_->CreateKey();
    caller_key_ = caller_->CreateKey();
  }
  static void TearDownTestSuite() {
    delete owner_;
    delete caller_;
  }
  // Calls the edge a few times so that key and function are cached.
  static void Warm(const std::string& key, const std::string& fn, const std::string& version) {
    for (int i = 0; i < 3; ++i) {
      auto r = Invoke(*g_system, key, fn, version, R"({"event": {}})");
      ASSERT_EQ(r.status, 200) << r.body;
    }
  }
  static Account* owner_;
  static Account* caller_;
  static std::string owner_key_, caller_key_;
};
Account* EdgeCacheTest::owner_ = nullptr;
Account* EdgeCacheTest::caller_ = nullptr;
std::string EdgeCacheTest::owner_key_, EdgeCacheTest::caller_key_;

TEST_F(EdgeCacheTest, AWarmKeyRevokedIsRefusedWithinASecond) {
  std::string fn = owner_->CreateFunction("revoke");
  ASSERT_EQ(owner_->PublishLua(fn, "1", kVersionOf).status, 201);
  auto created = owner_->session().Post("/api/v1/api-keys", R"({"name":"warm then revoked"})");
  ASSERT_TRUE(created.ok());
  ASSERT_EQ(created->status, 201);
  const std::string key = StringField(created->body, "key");
  Warm(key, fn, "1");
  auto revoked = owner_->session().Delete("/api/v1/api-keys/" + StringField(created->body, "id"));
  ASSERT_TRUE(revoked.ok());
  ASSERT_EQ(revoked->status, 204);
  auto r = AnswerWithin([&] { return Invoke(*g_system, key, fn, "1", R"({"event": {}})"); }, 401);
  EXPECT_EQ(r.status, 401) << r.body;
  EXPECT_EQ(Code(r), "api_key_revoked");
}

// A change made through an edge is seen by the very next call on that edge, without waiting for
// the owners' broadcast: read your writes.
TEST_F(EdgeCacheTest, AChangeThroughThisEdgeHoldsForTheNextCallAtOnce) {
  std::string fn = owner_->CreateFunction("read your writes", R"("visibility":"public")");
  ASSERT_EQ(owner_->PublishLua(fn, "1", kVersionOf).status, 201);
  auto before = Invoke(*g_system, caller_key_, fn, "1", R"({"event": {}})");
  ASSERT_EQ(before.status, 403) << before.body;  // cached: not added
  caller_->AddToWorkspace(fn);
  auto added = Invoke(*g_system, caller_key_, fn, "1", R"({"event": {}})");
  EXPECT_EQ(added.status, 200) << added.body;

  auto created = caller_->session().Post("/api/v1/api-keys", R"({"name":"revoked at once"})");
  ASSERT_TRUE(created.ok());
  ASSERT_EQ(created->status, 201);
  const std::string key = StringField(created->body, "key");
  Warm(key, fn, "1");
  auto revoked = caller_->session().Delete("/api/v1/api-keys/" + StringField(created->body, "id"));
  ASSERT_TRUE(revoked.ok());
  ASSERT_EQ(revoked->status, 204);
  auto refused = Invoke(*g_system, key, fn, "1", R"({"event": {}})");
  EXPECT_EQ(refused.status, 401) << refused.body;
  EXPECT_EQ(Code(refused), "api_key_revoked");
}

TEST_F(EdgeCacheTest, AnUnpublishedVersionReachesAWarmEdge) {
  std::string fn = owner_->CreateFunction("unpublish");
  ASSERT_EQ(owner_->PublishLua(fn, "1", kVersionOf).status, 201);
  ASSERT_EQ(owner_->PublishLua(fn, "2", kVersionOf).status, 201);
  Warm(owner_key_, fn, "2");
  Warm(owner_key_, fn, "");
  auto gone = owner_->session().Delete("/api/v1/functions/" + fn + "/versions/2");
  ASSERT_TRUE(gone.ok());
  ASSERT_EQ(gone->status, 204);
  auto pinned =
      AnswerWithin([&] { return Invoke(*g_system, owner_key_, fn, "2", R"({"event": {}})"); }, 404);
  EXPECT_EQ(pinned.status, 404) << pinned.body;
  EXPECT_EQ(Code(pinned), "version_not_found");
  // "latest" is the next highest at once too.
  auto latest = Invoke(*g_system, owner_key_, fn, "", R"({"event": {}})");
  ASSERT_EQ(latest.status, 200) << latest.body;
  EXPECT_EQ(StringField(StringField(latest.body, "body"), "version"), "1");
}

TEST_F(EdgeCacheTest, ADeprecatedVersionStillRunsOnAWarmEdge) {
  std::string fn = owner_->CreateFunction("deprecate");
  ASSERT_EQ(owner_->PublishLua(fn, "1", kVersionOf).status, 201);
  Warm(owner_key_, fn, "1");
  auto patched =
      owner_->session().Patch("/api/v1/functions/" + fn + "/versions/1", R"({"deprecated": true})");
  ASSERT_TRUE(patched.ok());
  ASSERT_EQ(patched->status, 200) << patched->body;
  // A deprecated version still runs (docs/api.md): the edge's fresh view agrees.
  auto r = Invoke(*g_system, owner_key_, fn, "1", R"({"event": {}})");
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(EdgeCacheTest, AFunctionMadePrivateReachesAWarmEdge) {
  std::string fn = owner_->CreateFunction("private soon", R"("visibility":"public")");
  ASSERT_EQ(owner_->PublishLua(fn, "1", kVersionOf).status, 201);
  caller_->AddToWorkspace(fn);
  Warm(caller_key_, fn, "1");
  auto patched = owner_->session().Patch("/api/v1/functions/" + fn, R"({"visibility": "private"})");
  ASSERT_TRUE(patched.ok());
  ASSERT_EQ(patched->status, 200) << patched->body;
  auto r = AnswerWithin([&] { return Invoke(*g_system, caller_key_, fn, "1", R"({"event": {}})"); },
                        404);
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(Code(r), "function_not_found");
}

TEST_F(EdgeCacheTest, AFunctionRemovedFromTheWorkspaceReachesAWarmEdge) {
  std::string fn = owner_->CreateFunction("removed", R"("visibility":"public")");
  ASSERT_EQ(owner_->PublishLua(fn, "1", kVersionOf).status, 201);
  caller_->AddToWorkspace(fn);
  Warm(caller_key_, fn, "1");
  auto removed = caller_->session().Delete("/api/v1/workspace/tools/" + fn);
  ASSERT_TRUE(removed.ok());
  ASSERT_EQ(removed->status, 204);
  auto r = AnswerWithin([&] { return Invoke(*g_system, caller_key_, fn, "1", R"({"event": {}})"); },
                        403);
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(Code(r), "function_not_added");
}

TEST_F(EdgeCacheTest, ADeletedFunctionReachesAWarmEdge) {
  std::string fn = owner_->CreateFunction("deleted");
  ASSERT_EQ(owner_->PublishLua(fn, "1", kVersionOf).status, 201);
  Warm(owner_key_, fn, "1");
  auto deleted = owner_->session().Delete("/api/v1/functions/" + fn);
  ASSERT_TRUE(deleted.ok());
  ASSERT_EQ(deleted->status, 204);
  auto r =
      AnswerWithin([&] { return Invoke(*g_system, owner_key_, fn, "1", R"({"event": {}})"); }, 404);
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(Code(r), "function_not_found");
}

TEST_F(EdgeCacheTest, AVersionPublishedAfterARefusalIsAccepted) {
  std::string fn = owner_->CreateFunction("late");
  auto r = Invoke(*g_system, owner_key_, fn, "", R"({"event": {}})");
  ASSERT_EQ(r.status, 404) << r.body;
  ASSERT_EQ(Code(r), "version_not_found");
  ASSERT_EQ(owner_->PublishLua(fn, "1", kVersionOf).status, 201);
  r = AnswerWithin([&] { return Invoke(*g_system, owner_key_, fn, "", R"({"event": {}})"); }, 200);
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(EdgeCacheTest, WarmCallsStillRecordTheKeysLastUse) {
  auto created = caller_->session().Post("/api/v1/api-keys", R"({"name":"used"})");
  ASSERT_TRUE(created.ok());
  ASSERT_EQ(created->status, 201);
  const std::string key = StringField(created->body, "key");
  const std::string id = StringField(created->body, "id");
  std::string fn = caller_->CreateFunction("uses");
  ASSERT_EQ(caller_->PublishLua(fn, "1", kVersionOf).status, 201);
  Warm(key, fn, "1");
  // The edge reports uses once a second and auth writes them once a second: poll the list.
  std::string last_used;
  auto used_at = [&] {
    auto list = caller_->session().Get("/api/v1/api-keys");
    if (!list.ok()) {
      ADD_FAILURE() << list.status().ToString();
      return true;  // no use polling a list that cannot be read
    }
    auto doc = Json(list->body);
    for (auto item : doc.root["items"].get_array()) {
      std::string_view item_id, used;
      if (item["id"].get_string().get(item_id) || item_id != id) continue;
      if (!item["last_used_at"].get_string().get(used)) last_used = std::string(used);
    }
    return !last_used.empty();
  };
  EXPECT_TRUE(WaitUntil(used_at, 10000, "the key's last use to reach auth", 100));
}

}  // namespace
}  // namespace toolgate::testing
