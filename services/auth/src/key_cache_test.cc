#include "toolgate/auth/key_cache.h"

#include <gtest/gtest.h>

namespace toolgate::auth {
namespace {

constexpr int64_t kTtlUs = 30'000'000;

KeyRecord Record(std::string id) {
  KeyRecord r;
  r.key_id = std::move(id);
  r.org_id = "org";
  r.scopes = {"invoke"};
  return r;
}

TEST(KeyCacheTest, ServesEntriesUntilTheirTtl) {
  KeyCache cache(kTtlUs);
  EXPECT_EQ(cache.Get("h1", 0), std::nullopt);
  cache.Put("h1", Record("k1"), cache.generation(), 1000);
  ASSERT_TRUE(cache.Get("h1", 1000));
  EXPECT_EQ(cache.Get("h1", 1000 + kTtlUs - 1)->key_id, "k1");
  EXPECT_EQ(cache.Get("h1", 1000 + kTtlUs), std::nullopt);  // must be read again
  EXPECT_EQ(cache.Get("h2", 1000), std::nullopt);
}

TEST(KeyCacheTest, InvalidateDropsAtOnce) {
  KeyCache cache(kTtlUs);
  cache.Put("h1", Record("k1"), cache.generation(), 0);
  cache.Put("h2", Record("k2"), cache.generation(), 0);
  cache.Invalidate("h1");
  EXPECT_EQ(cache.Get("h1", 1), std::nullopt);
  EXPECT_TRUE(cache.Get("h2", 1));
}

TEST(KeyCacheTest, LoadThatRacedWithRevocationIsNotCached) {
  KeyCache cache(kTtlUs);
  uint64_t before_load = cache.generation();
  cache.Invalidate("h1");  // revoked while the row was being read
  cache.Put("h1", Record("k1"), before_load, 0);
  EXPECT_EQ(cache.Get("h1", 1), std::nullopt);
  // A load that starts afterwards sees the revoked row and is cached.
  cache.Put("h1", Record("k1"), cache.generation(), 0);
  EXPECT_TRUE(cache.Get("h1", 1));
}

TEST(KeyCacheTest, RefreshReplacesEntry) {
  KeyCache cache(kTtlUs);
  cache.Put("h1", Record("k1"), cache.generation(), 0);
  KeyRecord revoked = Record("k1");
  revoked.revoked = true;
  cache.Put("h1", revoked, cache.generation(), kTtlUs);
  auto got = cache.Get("h1", kTtlUs + 1);
  ASSERT_TRUE(got);
  EXPECT_TRUE(got->revoked);
}

TEST(KeyCacheTest, PruneDropsOnlyStaleEntries) {
  KeyCache cache(kTtlUs);
  cache.Put("old", Record("k1"), cache.generation(), 0);
  cache.Put("new", Record("k2"), cache.generation(), kTtlUs);
  cache.Prune(kTtlUs);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_TRUE(cache.Get("new", kTtlUs));
}

TEST(KeyCacheTest, UnknownHashesAreRememberedForTheTtl) {
  KeyCache cache(kTtlUs);
  EXPECT_FALSE(cache.KnownUnknown("bad", 0));
  cache.PutUnknown("bad", cache.generation(), 1000);
  EXPECT_TRUE(cache.KnownUnknown("bad", 1000 + kTtlUs - 1));
  EXPECT_FALSE(cache.KnownUnknown("bad", 1000 + kTtlUs));  // must be read again
  EXPECT_FALSE(cache.Get("bad", 1000));                    // absent is not a record
  cache.Prune(1000 + kTtlUs);
  EXPECT_EQ(cache.unknown_size(), 0u);
}

TEST(KeyCacheTest, UnknownSetIsBoundedAndInvalidated) {
  KeyCache cache(kTtlUs, /*max_unknown=*/3);
  for (const char* h : {"a", "b", "c"}) cache.PutUnknown(h, cache.generation(), 0);
  EXPECT_EQ(cache.unknown_size(), 3u);
  cache.PutUnknown("d", cache.generation(), 0);  // full: the set starts over
  EXPECT_EQ(cache.unknown_size(), 1u);
  EXPECT_TRUE(cache.KnownUnknown("d", 1));
  EXPECT_FALSE(cache.KnownUnknown("a", 1));
  cache.Invalidate("d");
  EXPECT_FALSE(cache.KnownUnknown("d", 1));
  // A lookup that raced with an invalidation is not remembered.
  uint64_t before = cache.generation();
  cache.Invalidate("e");
  cache.PutUnknown("e", before, 1);
  EXPECT_FALSE(cache.KnownUnknown("e", 2));
}

}  // namespace
}  // namespace toolgate::auth
