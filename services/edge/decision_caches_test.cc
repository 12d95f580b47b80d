#include "decision_caches.h"

#include <gtest/gtest.h>

#include "toolgate/metrics/metrics.h"

namespace toolgate::edge {
namespace {

class DecisionCachesTest : public ::testing::Test {
 protected:
  DecisionCacheOptions Options(size_t entries = 10) {
    DecisionCacheOptions o;
    o.max_keys = entries;
    o.max_functions = entries;
    o.positive_ttl_ms = 30'000;
    o.negative_ttl_ms = 5'000;
    return o;
  }
  static CachedKey Known(const std::string& key_id) {
    CachedKey k;
    k.record.emplace();
    k.record->key_id = key_id;
    return k;
  }
  static CachedFunctionView Function(const std::string& id) {
    CachedFunctionView v;
    v.function_id = id;
    auto f = std::make_shared<core::CachedFunction>();
    f->function_id = id;
    v.function = std::move(f);
    return v;
  }
  static CachedFunctionView Absent(const std::string& id) {
    CachedFunctionView v;
    v.function_id = id;
    return v;
  }
  int64_t now_ = 1'000'000;
  std::function<int64_t()> clock_ = [this] { return now_; };
};

TEST_F(DecisionCachesTest, KnownKeysLiveForThePositiveTtlUnknownOnesForTheNegative) {
  DecisionCaches caches(Options(), clock_);
  caches.PutKey("known", Known("k1"), caches.key_generation());
  caches.PutKey("unknown", CachedKey{}, caches.key_generation());
  ASSERT_TRUE(caches.Key("unknown"));
  EXPECT_FALSE(caches.Key("unknown")->record);  // a negative entry, not a miss
  now_ += 5'000;
  EXPECT_FALSE(caches.Key("unknown"));
  ASSERT_TRUE(caches.Key("known"));
  EXPECT_EQ(caches.Key("known")->record->key_id, "k1");
  now_ += 25'000;
  EXPECT_FALSE(caches.Key("known"));
}

TEST_F(DecisionCachesTest, FunctionsLiveForTheirTtl) {
  DecisionCaches caches(Options(), clock_);
  caches.PutFunction("org", Function("f1"), caches.function_generation());
  caches.PutFunction("org", Absent("f2"), caches.function_generation());
  ASSERT_TRUE(caches.Function("org", "f2"));
  EXPECT_EQ(caches.Function("org", "f2")->function, nullptr);
  EXPECT_FALSE(caches.Function("other", "f1"));  // per caller: "added" is the caller's
  now_ += 5'000;
  EXPECT_FALSE(caches.Function("org", "f2"));
  EXPECT_TRUE(caches.Function("org", "f1"));
  now_ += 25'000;
  EXPECT_FALSE(caches.Function("org", "f1"));
}

TEST_F(DecisionCachesTest, BoundedByEntryCount) {
  DecisionCaches caches(Options(3), clock_);
  for (int i = 0; i < 10; ++i) {
    caches.PutKey("key" + std::to_string(i), Known("k"), caches.key_generation());
    caches.PutFunction("org", Function("f" + std::to_string(i)), caches.function_generation());
  }
  EXPECT_EQ(caches.keys_size(), 3u);
  EXPECT_EQ(caches.functions_size(), 3u);
  EXPECT_TRUE(caches.Key("key9"));
  EXPECT_FALSE(caches.Key("key0"));
  EXPECT_TRUE(caches.Function("org", "f9"));
  EXPECT_FALSE(caches.Function("org", "f0"));
}

TEST_F(DecisionCachesTest, RevocationDropsTheKeyAndAnAnswerItOvertook) {
  DecisionCaches caches(Options(), clock_);
  caches.PutKey("k", Known("k1"), caches.key_generation());
  const uint64_t asked = caches.key_generation();  // a lookup of "k" is on its way
  caches.KeyRevoked("k");
  EXPECT_FALSE(caches.Key("k"));
  caches.PutKey("k", Known("k1"), asked);  // the answer read the row before the revocation
  EXPECT_FALSE(caches.Key("k"));
}

TEST_F(DecisionCachesTest, FunctionChangedDropsItForEveryCaller) {
  DecisionCaches caches(Options(), clock_);
  caches.PutFunction("a", Function("f1"), caches.function_generation());
  caches.PutFunction("b", Function("f1"), caches.function_generation());
  caches.PutFunction("b", Absent("f2"), caches.function_generation());
  caches.PutFunction("a", Function("f3"), caches.function_generation());
  caches.FunctionChanged("f1");
  caches.FunctionChanged("f2");  // e.g. created after a call to its id was refused
  EXPECT_FALSE(caches.Function("a", "f1"));
  EXPECT_FALSE(caches.Function("b", "f1"));
  EXPECT_FALSE(caches.Function("b", "f2"));
  EXPECT_TRUE(caches.Function("a", "f3"));
}

TEST_F(DecisionCachesTest, WorkspaceChangedDropsTheCallersEntries) {
  DecisionCaches caches(Options(), clock_);
  caches.PutFunction("a", Function("f1"), caches.function_generation());
  caches.PutFunction("a", Function("f2"), caches.function_generation());
  caches.PutFunction("b", Function("f1"), caches.function_generation());
  caches.WorkspaceChanged("a", "f1");
  EXPECT_FALSE(caches.Function("a", "f1"));
  EXPECT_TRUE(caches.Function("a", "f2"));
  EXPECT_TRUE(caches.Function("b", "f1"));
  caches.WorkspaceChanged("a", "");
  EXPECT_FALSE(caches.Function("a", "f2"));
  EXPECT_TRUE(caches.Function("b", "f1"));
}

TEST_F(DecisionCachesTest, DropAllForgetsEverything) {
  DecisionCaches caches(Options(), clock_);
  caches.PutKey("k", Known("k1"), caches.key_generation());
  caches.PutFunction("a", Function("f1"), caches.function_generation());
  const uint64_t asked = caches.function_generation();
  caches.DropAll();
  EXPECT_EQ(caches.keys_size(), 0u);
  EXPECT_EQ(caches.functions_size(), 0u);
  caches.PutFunction("a", Function("f1"), asked);
  EXPECT_FALSE(caches.Function("a", "f1"));
}

TEST_F(DecisionCachesTest, AnswersRightAfterAnInvalidationLiveOnlyUntilItSettles) {
  DecisionCaches caches(Options(), clock_);  // settle_ms 500
  const int64_t revoked_at = now_;
  caches.KeyRevoked("other");  // another replica of auth may not have heard it yet
  now_ += 10;
  caches.PutKey("k", Known("k1"), caches.key_generation());
  caches.PutFunction("org", Function("f1"), caches.function_generation());
  now_ = revoked_at + 499;
  EXPECT_TRUE(caches.Key("k"));
  EXPECT_TRUE(caches.Function("org", "f1"));
  now_ = revoked_at + 500;
  EXPECT_FALSE(caches.Key("k"));
  EXPECT_FALSE(caches.Function("org", "f1"));
  // Once settled, answers live their whole TTL again.
  caches.PutKey("k", Known("k1"), caches.key_generation());
  now_ += 29'999;
  EXPECT_TRUE(caches.Key("k"));
}

TEST_F(DecisionCachesTest, LookupsAreCountedByCacheAndResult) {
  auto& family = metrics::Registry::Global().Counter(
      "toolgate_edge_decision_cache_lookups_total",
      "Lookups in the edge's key and function decision caches, by cache and result.",
      {"cache", "result"});
  const uint64_t key_hits = family.With({"keys", "hit"}).value();
  const uint64_t key_misses = family.With({"keys", "miss"}).value();
  const uint64_t fn_misses = family.With({"functions", "miss"}).value();
  DecisionCaches caches(Options(), clock_);
  caches.Key("k");
  caches.PutKey("k", Known("k1"), caches.key_generation());
  caches.Key("k");
  caches.Function("org", "f");
  EXPECT_EQ(family.With({"keys", "hit"}).value(), key_hits + 1);
  EXPECT_EQ(family.With({"keys", "miss"}).value(), key_misses + 1);
  EXPECT_EQ(family.With({"functions", "miss"}).value(), fn_misses + 1);
}

// Read your writes: a change made through this edge drops what it made stale, nothing else.
TEST_F(DecisionCachesTest, AManagementChangeForgetsWhatItChanged) {
  DecisionCaches caches(Options(), clock_);
  auto fill = [&] {
    caches.PutKey("key", Known("k1"), caches.key_generation());
    caches.PutFunction("org", Function("f1"), caches.function_generation());
    caches.PutFunction("org", Function("f2"), caches.function_generation());
    caches.PutFunction("other", Function("f2"), caches.function_generation());
  };
  now_ += 1'000;  // past the settle window of the puts above
  fill();
  caches.ForgetChangedBy("registry", "GET", {"functions", "f1"}, "org");
  caches.ForgetChangedBy("auth", "POST", {"auth", "login"}, "org");
  EXPECT_TRUE(caches.Function("org", "f1"));
  EXPECT_TRUE(caches.Key("key"));

  caches.ForgetChangedBy("registry", "DELETE", {"functions", "F1", "versions", "2"}, "org");
  EXPECT_FALSE(caches.Function("org", "f1"));  // ids are compared normalized
  EXPECT_TRUE(caches.Function("org", "f2"));

  caches.ForgetChangedBy("registry", "POST", {"workspace", "tools"}, "org");
  EXPECT_FALSE(caches.Function("org", "f2"));
  EXPECT_TRUE(caches.Function("other", "f2"));
  EXPECT_TRUE(caches.Key("key"));

  caches.ForgetChangedBy("auth", "DELETE", {"api-keys", "k1"}, "org");
  EXPECT_FALSE(caches.Key("key"));
  EXPECT_TRUE(caches.Function("other", "f2"));

  // A connected app revoked: its tokens' hashes are not in the route either.
  now_ += 1'000;
  caches.PutKey("token", Known("k2"), caches.key_generation());
  caches.ForgetChangedBy("auth", "POST", {"oauth", "requests", "r1", "approve"}, "org");
  EXPECT_TRUE(caches.Key("token"));
  caches.ForgetChangedBy("auth", "DELETE", {"oauth", "grants", "g1"}, "org");
  EXPECT_FALSE(caches.Key("token"));
}

// A token's revocation must reach the edge within 5 s even when its broadcast is lost: its entry
// lives no longer than oauth_token_ttl_ms, whatever the key TTL.
TEST_F(DecisionCachesTest, AnOAuthTokensEntryOutlivesNoMoreThanItsBound) {
  DecisionCacheOptions options = Options();
  options.positive_ttl_ms = 30'000;
  options.oauth_token_ttl_ms = 4'000;
  DecisionCaches caches(options, clock_);
  now_ += 1'000;
  CachedKey token = Known("unused");
  token.record->key_id.clear();
  token.record->grant_id = "g1";
  caches.PutKey("token", token, caches.key_generation());
  caches.PutKey("key", Known("k1"), caches.key_generation());
  now_ += 3'999;
  EXPECT_TRUE(caches.Key("token"));
  now_ += 1;
  EXPECT_FALSE(caches.Key("token"));
  EXPECT_TRUE(caches.Key("key"));
}

}  // namespace
}  // namespace toolgate::edge
