#include "toolgate/secrets/secret_cache.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>

namespace toolgate::secrets {
namespace {

struct FakeStore {
  std::map<std::string, EncryptedSecret> rows;
  std::vector<std::vector<std::string>> loads;
  bool down = false;
  std::function<void()> during_load;

  SecretCache::Loader Fn() {
    return [this](const std::vector<std::string>& ids) -> Result<std::vector<EncryptedSecret>> {
      loads.push_back(ids);
      if (during_load) std::exchange(during_load, nullptr)();
      if (down) return Status::Unavailable("down");
      std::vector<EncryptedSecret> out;
      for (const auto& id : ids) {
        if (rows.count(id)) out.push_back(rows[id]);
      }
      return out;
    };
  }
};

EncryptedSecret Row(const std::string& id, const std::string& ct) {
  return {id, "org", "n", ct};
}

struct SecretCacheTest : testing::Test {
  FakeStore store;
  int64_t now = 0;
  SecretCache cache{store.Fn(), SecretCache::Options{1000, 100, [this] { return now; }}};
};

TEST_F(SecretCacheTest, LoadsOnlyWhatIsMissingInOneBatch) {
  store.rows["a"] = Row("a", "1");
  store.rows["b"] = Row("b", "2");
  auto first = cache.Get({"a"});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->at("a").ciphertext, "1");
  auto second = cache.Get({"a", "b", "nope"});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->size(), 2u);
  ASSERT_EQ(store.loads.size(), 2u);
  EXPECT_EQ(store.loads[1], (std::vector<std::string>{"b", "nope"}));
  cache.Get({"a", "b"});
  EXPECT_EQ(store.loads.size(), 2u);  // warm: no load
}

TEST_F(SecretCacheTest, UnknownIdsAreNotCached) {
  cache.Get({"x"});
  store.rows["x"] = Row("x", "1");
  EXPECT_EQ(cache.Get({"x"})->size(), 1u);
}

TEST_F(SecretCacheTest, DropForgetsAndOverlappingLoadIsNotKept) {
  store.rows["a"] = Row("a", "old");
  store.during_load = [this] { cache.Drop("a"); };
  EXPECT_EQ(cache.Get({"a"})->at("a").ciphertext, "old");
  store.rows["a"] = Row("a", "new");
  EXPECT_EQ(cache.Get({"a"})->at("a").ciphertext, "new");
  store.rows["a"] = Row("a", "newer");
  cache.Drop("a");
  EXPECT_EQ(cache.Get({"a"})->at("a").ciphertext, "newer");
}

TEST_F(SecretCacheTest, EntriesExpire) {
  store.rows["a"] = Row("a", "1");
  cache.Get({"a"});
  now = 999;
  cache.Get({"a"});
  EXPECT_EQ(store.loads.size(), 1u);
  now = 1000;
  cache.Get({"a"});
  EXPECT_EQ(store.loads.size(), 2u);
}

TEST_F(SecretCacheTest, ErrorsPassThrough) {
  store.down = true;
  EXPECT_EQ(cache.Get({"a"}).status().code(), Status::Code::kUnavailable);
}

}  // namespace
}  // namespace toolgate::secrets
