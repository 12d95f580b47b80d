#include "toolgate/registry/code_cache.h"

#include <gtest/gtest.h>

namespace toolgate::registry {
namespace {

struct Loads {
  int count = 0;
  bool down = false;
  CodeCache::Loader Fn() {
    return [this](const std::string& id,
                  const std::string& version) -> Result<std::optional<VersionCode>> {
      ++count;
      if (down) return Status::Unavailable("down");
      if (version == "9.9") return std::optional<VersionCode>();
      VersionCode code;
      // Version 2.0 is a bundle of 30 bytes; others are 15 bytes of code.
      if (version == "2.0") {
        code.bundle = std::string(30, 'z');
        code.bundle_digest = "d";
      } else {
        code.code = id + "@" + version + std::string(10, '.');
      }
      return std::optional<VersionCode>(std::move(code));
    };
  }
};

TEST(CodeCache, HitsDoNotLoad) {
  Loads loads;
  CodeCache cache(loads.Fn(), 1 << 20);
  EXPECT_EQ((*cache.Get("f", "1.0"))->code, "f@1.0..........");
  EXPECT_EQ((*cache.Get("f", "1.0"))->code, "f@1.0..........");
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

TEST(CodeCache, BundlesCountTowardsTheBudget) {
  Loads loads;
  CodeCache cache(loads.Fn(), 40);
  cache.Get("a", "1.0");
  EXPECT_EQ((*cache.Get("b", "2.0"))->bundle, std::string(30, 'z'));  // 45 bytes: evicts a
  cache.Get("b", "2.0");
  EXPECT_EQ(loads.count, 2);
  cache.Get("a", "1.0");
  EXPECT_EQ(loads.count, 3);
}

}  // namespace
}  // namespace toolgate::registry
