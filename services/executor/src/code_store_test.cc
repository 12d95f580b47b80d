#include "toolgate/executor/code_store.h"

#include <gtest/gtest.h>

#include <map>

namespace toolgate::executor {
namespace {

class FakeSource : public CodeSource {
 public:
  Result<std::string> Fetch(const std::string& function_id, const std::string& version,
                            std::string_view) override {
    ++fetches;
    if (down) return Status::Unavailable("registry down");
    auto it = code.find(function_id + "@" + version);
    if (it == code.end()) return Status::NotFound("no such version");
    return it->second;
  }
  std::map<std::string, std::string> code;
  int fetches = 0;
  bool down = false;
};

TEST(CodeStore, FetchesOnAMissThenServesFromTheCache) {
  FakeSource source;
  source.code["f@1.0"] = "return 1";
  CodeStore store(1000, source);
  auto first = store.Get("f", "1.0", "");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(**first, "return 1");
  source.down = true;
  auto second = store.Get("f", "1.0", "");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(**second, "return 1");
  EXPECT_EQ(source.fetches, 1);
}

TEST(CodeStore, PassesFailuresOnAndCachesNothingForThem) {
  FakeSource source;
  CodeStore store(1000, source);
  EXPECT_EQ(store.Get("f", "1.0", "").status().code(), Status::Code::kNotFound);
  source.down = true;
  EXPECT_EQ(store.Get("f", "1.0", "").status().code(), Status::Code::kUnavailable);
  EXPECT_EQ(store.bytes(), 0u);
}

TEST(CodeStore, EvictsTheLeastRecentlyUsedPastItsBytes) {
  FakeSource source;
  source.code["a@1"] = std::string(40, 'a');
  source.code["b@1"] = std::string(40, 'b');
  source.code["c@1"] = std::string(40, 'c');
  CodeStore store(100, source);
  ASSERT_TRUE(store.Get("a", "1", "").ok());
  ASSERT_TRUE(store.Get("b", "1", "").ok());
  ASSERT_TRUE(store.Get("a", "1", "").ok());  // a is now the most recent
  ASSERT_TRUE(store.Get("c", "1", "").ok());  // evicts b
  EXPECT_EQ(store.bytes(), 80u);
  EXPECT_EQ(source.fetches, 3);
  ASSERT_TRUE(store.Get("a", "1", "").ok());
  EXPECT_EQ(source.fetches, 3);
  ASSERT_TRUE(store.Get("b", "1", "").ok());
  EXPECT_EQ(source.fetches, 4);
}

TEST(CodeStore, ServesButDoesNotKeepCodeLargerThanTheCache) {
  FakeSource source;
  source.code["big@1"] = std::string(200, 'x');
  CodeStore store(100, source);
  auto big = store.Get("big", "1", "");
  ASSERT_TRUE(big.ok());
  EXPECT_EQ((*big)->size(), 200u);
  EXPECT_EQ(store.bytes(), 0u);
}

}  // namespace
}  // namespace toolgate::executor
