#include "toolgate/executor/bundle_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "testing/tar_builder.h"
#include "toolgate/base/crypto.h"

namespace toolgate::executor {
namespace {

using testing::TarBuilder;

class FakeBundles : public BundleSource {
 public:
  Result<std::string> FetchBundle(const std::string& function_id, const std::string& version,
                                  std::string_view) override {
    ++fetches;
    if (down) return Status::Unavailable("registry down");
    auto it = bundles.find(function_id + "@" + version);
    if (it == bundles.end()) return Status::NotFound("no such version");
    return it->second;
  }
  // Publishes a bundle holding handler.py with text as function_id@version; its digest.
  std::string Publish(const std::string& key, const std::string& text, size_t padding = 0) {
    std::string archive =
        TarBuilder().File("handler.py", text).File("padding", std::string(padding, 'p')).Finish();
    bundles[key] = archive;
    return HexEncode(Sha256(archive));
  }
  std::map<std::string, std::string> bundles;
  int fetches = 0;
  bool down = false;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class BundleCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/bundle-cache-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    ASSERT_EQ(::chmod(pattern, 0711), 0);  // the sandboxes' root passes through to the bundles
    dir_ = pattern;
  }
  void TearDown() override { ASSERT_TRUE(RemoveTree(dir_).ok()); }

  std::unique_ptr<BundleCache> Open(uint64_t max_bytes = 1 << 20) {
    BundleCacheOptions options;
    options.dir = dir_ + "/cache";
    options.max_bytes = max_bytes;
    auto cache = BundleCache::Open(options, source_);
    EXPECT_TRUE(cache.ok()) << cache.status().ToString();
    return cache.ok() ? std::move(*cache) : nullptr;
  }
  // Entries of the cache directory (bundles and anything left over).
  size_t Entries() {
    size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir_ + "/cache")) {
      if (e.path().filename() != ".lock") ++n;
    }
    return n;
  }

  FakeBundles source_;
  std::string dir_;
};

TEST_F(BundleCacheTest, FetchesAndUnpacksOnAMissAndAWarmCallNeverFetches) {
  std::string digest = source_.Publish("f@1", "def service_handler(e, c): return 1\n");
  auto cache = Open();
  auto first = cache->Get(digest, "f", "1", "");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ((*first)->digest, digest);
  EXPECT_EQ((*first)->dir, dir_ + "/cache/" + digest);
  EXPECT_EQ(ReadFile((*first)->dir + "/handler.py"), "def service_handler(e, c): return 1\n");
  source_.down = true;
  auto again = cache->Get(digest, "f", "1", "");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->dir, (*first)->dir);
  EXPECT_EQ(source_.fetches, 1);
  // Another version with the same bytes shares them.
  auto other = cache->Get(digest, "g", "2", "");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(source_.fetches, 1);
}

TEST_F(BundleCacheTest, RefusesBytesThatDoNotHashToTheDigestAndKeepsNothing) {
  std::string digest = source_.Publish("f@1", "x = 1\n");
  source_.bundles["f@1"] =
      TarBuilder().File("handler.py", "import os; os.system('evil')\n").Finish();
  auto cache = Open();
  auto got = cache->Get(digest, "f", "1", "");
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("does not hash to its digest"), std::string::npos);
  EXPECT_EQ(cache->count(), 0u);
  EXPECT_EQ(Entries(), 0u);
  // The next call asks again: a failure is not cached.
  source_.Publish("f@1", "x = 1\n");
  EXPECT_TRUE(cache->Get(digest, "f", "1", "").ok());
  EXPECT_EQ(source_.fetches, 2);
}

TEST_F(BundleCacheTest, RefusesAMalformedDigestBeforeFetching) {
  auto cache = Open();
  for (const std::string& digest :
       {std::string("../../etc"), std::string(64, 'A'), std::string("")}) {
    EXPECT_EQ(cache->Get(digest, "f", "1", "").status().code(), Status::Code::kInvalidArgument);
  }
  EXPECT_EQ(source_.fetches, 0);
}

TEST_F(BundleCacheTest, ABundleThatDoesNotUnpackLeavesNothingOnDisk) {
  std::string archive = TarBuilder().File("ok.py", "x").File("../escape.py", "x").Finish();
  source_.bundles["f@1"] = archive;
  auto cache = Open();
  auto got = cache->Get(HexEncode(Sha256(archive)), "f", "1", "");
  EXPECT_EQ(got.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(Entries(), 0u);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/escape.py"));
}

TEST_F(BundleCacheTest, EvictsTheLeastRecentlyUsedUnusedBundlesPastItsBytes) {
  std::string a = source_.Publish("a@1", "a", 400);
  std::string b = source_.Publish("b@1", "b", 400);
  std::string c = source_.Publish("c@1", "c", 400);
  auto cache = Open(/*max_bytes=*/1000);
  ASSERT_TRUE(cache->Get(a, "a", "1", "").ok());
  ASSERT_TRUE(cache->Get(b, "b", "1", "").ok());
  ASSERT_TRUE(cache->Get(a, "a", "1", "").ok());  // a is now the most recent
  ASSERT_TRUE(cache->Get(c, "c", "1", "").ok());  // evicts b
  EXPECT_EQ(cache->count(), 2u);
  EXPECT_EQ(cache->bytes(), 802u);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/cache/" + b));
  EXPECT_EQ(Entries(), 2u);
  EXPECT_EQ(source_.fetches, 3);
  ASSERT_TRUE(cache->Get(a, "a", "1", "").ok());
  EXPECT_EQ(source_.fetches, 3);
  ASSERT_TRUE(cache->Get(b, "b", "1", "").ok());
  EXPECT_EQ(source_.fetches, 4);
}

TEST_F(BundleCacheTest, NeverEvictsABundleAWorkerHolds) {
  std::string a = source_.Publish("a@1", "a", 800);
  std::string b = source_.Publish("b@1", "b", 800);
  auto cache = Open(/*max_bytes=*/1000);
  auto held = cache->Get(a, "a", "1", "");
  ASSERT_TRUE(held.ok());
  auto other = cache->Get(b, "b", "1", "");
  ASSERT_TRUE(other.ok());
  // Both in use: the cache is over its bytes rather than pull files from under a worker.
  EXPECT_EQ(cache->count(), 2u);
  EXPECT_EQ(ReadFile((*held)->dir + "/handler.py"), "a");
  held->reset();
  other->reset();
  // a is unused now and the least recent: the next miss evicts it.
  std::string c = source_.Publish("c@1", "c", 10);
  ASSERT_TRUE(cache->Get(c, "c", "1", "").ok());
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/cache/" + a));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/cache/" + b));
}

TEST_F(BundleCacheTest, StartsEmptyWhateverAnEarlierExecutorLeft) {
  std::string digest = source_.Publish("f@1", "x");
  std::filesystem::create_directories(dir_ + "/cache/" + digest);
  std::ofstream(dir_ + "/cache/" + digest + "/handler.py") << "tampered";
  auto cache = Open();
  auto got = cache->Get(digest, "f", "1", "");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(ReadFile((*got)->dir + "/handler.py"), "x");
  EXPECT_EQ(source_.fetches, 1);
}

TEST_F(BundleCacheTest, OneExecutorPerDirectory) {
  auto cache = Open();
  BundleCacheOptions options;
  options.dir = dir_ + "/cache";
  auto second = BundleCache::Open(options, source_);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("in use by another executor"), std::string::npos);
}

TEST_F(BundleCacheTest, PassesTheSourcesFailureOn) {
  auto cache = Open();
  EXPECT_EQ(cache->Get(std::string(64, 'a'), "f", "1", "").status().code(),
            Status::Code::kNotFound);
  source_.down = true;
  EXPECT_EQ(cache->Get(std::string(64, 'a'), "f", "1", "").status().code(),
            Status::Code::kUnavailable);
}

}  // namespace
}  // namespace toolgate::executor
