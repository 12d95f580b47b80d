#include "toolgate/registry/code_cache.h"

#include <gtest/gtest.h>

namespace toolgate::registry {
namespace {

struct Loads {
  int count = 0;
  bool down = false;
  CodeCache::Loader Fn() {
    return [this](const std::string& id,
                  const std::string& version) -> Result<std::optional<std::string>> {
      ++count;
      if (down) return Status::Unavailable("down");
      if (version == "9.9") return std::optional<std::string>();
      return std::optional<std::string>(id + "@" + version + std::string(10, '.'));
    };
  }
};

TEST(CodeCache, HitsDoNotLoad) {
  Loads loads;
  CodeCache cache(loads.Fn(), 1 << 20);
  EXPECT_EQ(**cache.Get("f", "1.0"), "f@1.0..........");
  EXPECT_EQ(**cache.Get("f", "1.0"), "f@1.0..........");
  EXPECT_EQ(loads.count, 1);
}

TEST(CodeCache, UnpublishedIsNullAndErrorsPassThrough) {
  Loads loads;
  CodeCache cache(loads.Fn(), 1 << 20);
  EXPECT_EQ(*cache.Get("f", "9.9"), nullptr);
  loads.down = true;
  EXPECT_EQ(cache.Get("f", "1.0").status().code(), Status::Code::kUnavailable);
}

TEST(CodeCache, EvictsLeastRecentlyUsedBeyondTheBudget) {
  Loads loads;
  CodeCache cache(loads.Fn(), 40);  // room for two 15-byte entries
  cache.Get("a", "1.0");
  cache.Get("b", "1.0");
  cache.Get("a", "1.0");  // a is now the most recent
  cache.Get("c", "1.0");  // evicts b
  EXPECT_EQ(loads.count, 3);
  cache.Get("a", "1.0");
  EXPECT_EQ(loads.count, 3);
  cache.Get("b", "1.0");
  EXPECT_EQ(loads.count, 4);
}

}  // namespace
}  // namespace toolgate::registry
