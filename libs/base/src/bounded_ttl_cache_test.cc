#include "toolgate/base/bounded_ttl_cache.h"

#include <gtest/gtest.h>

#include <string>

namespace toolgate {
namespace {

using Cache = BoundedTtlCache<std::string, int>;

TEST(BoundedTtlCache, ServesUntilExpiry) {
  Cache cache(4);
  ASSERT_TRUE(cache.Put("a", 1, /*expires_at=*/100, cache.generation()));
  EXPECT_EQ(cache.Get("a", 0), 1);
  EXPECT_EQ(cache.Get("a", 99), 1);
  EXPECT_EQ(cache.Get("a", 100), std::nullopt);
  EXPECT_EQ(cache.size(), 0u);  // the expired entry was dropped
  EXPECT_EQ(cache.Get("missing", 0), std::nullopt);
}

TEST(BoundedTtlCache, EvictsTheLeastRecentlyUsedAtCapacity) {
  Cache cache(2);
  cache.Put("a", 1, 1000, cache.generation());
  cache.Put("b", 2, 1000, cache.generation());
  ASSERT_EQ(cache.Get("a", 0), 1);  // b is now the least recently used
  cache.Put("c", 3, 1000, cache.generation());
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.Get("b", 0), std::nullopt);
  EXPECT_EQ(cache.Get("a", 0), 1);
  EXPECT_EQ(cache.Get("c", 0), 3);
}

TEST(BoundedTtlCache, PutReplacesAndRefreshes) {
  Cache cache(2);
  cache.Put("a", 1, 10, cache.generation());
  cache.Put("a", 5, 50, cache.generation());
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.Get("a", 20), 5);
}

TEST(BoundedTtlCache, EraseDropsTheEntryAndLoadsBegunBefore) {
  Cache cache(4);
  cache.Put("a", 1, 1000, cache.generation());
  const uint64_t before = cache.generation();  // a load of "b" starts
  cache.Erase("a");
  EXPECT_EQ(cache.Get("a", 0), std::nullopt);
  EXPECT_FALSE(cache.Put("b", 2, 1000, before));  // it ends after the invalidation: stale
  EXPECT_EQ(cache.Get("b", 0), std::nullopt);
  EXPECT_TRUE(cache.Put("b", 2, 1000, cache.generation()));
  EXPECT_EQ(cache.Get("b", 0), 2);
}

TEST(BoundedTtlCache, EraseIfDropsWhatMatches) {
  Cache cache(8);
  cache.Put("org1/f1", 1, 1000, cache.generation());
  cache.Put("org2/f1", 2, 1000, cache.generation());
  cache.Put("org1/f2", 3, 1000, cache.generation());
  cache.EraseIf([](const std::string& key, const int&) { return key.starts_with("org1/"); });
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.Get("org2/f1", 0), 2);
}

TEST(BoundedTtlCache, ClearDropsEverythingAndLoadsBegunBefore) {
  Cache cache(8);
  cache.Put("a", 1, 1000, cache.generation());
  const uint64_t before = cache.generation();
  cache.Clear();
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_FALSE(cache.Put("a", 1, 1000, before));
}

TEST(BoundedTtlCache, ZeroCapacityKeepsOne) {
  Cache cache(0);
  EXPECT_EQ(cache.capacity(), 1u);
  cache.Put("a", 1, 1000, cache.generation());
  cache.Put("b", 2, 1000, cache.generation());
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.Get("b", 0), 2);
}

}  // namespace
}  // namespace toolgate
