#include "toolgate/core/function_model.h"

#include <gtest/gtest.h>

namespace toolgate::core {
namespace {

std::vector<PublishedVersion> Versions(std::initializer_list<const char*> names) {
  std::vector<PublishedVersion> out;
  for (const char* n : names) {
    PublishedVersion v;
    v.version = n;
    v.parsed = *core::ParseVersion(n);
    out.push_back(v);
  }
  return out;
}

std::string Latest(std::initializer_list<const char*> names) {
  auto versions = Versions(names);
  const PublishedVersion* v = LatestVersion(versions);
  return v ? v->version : "(none)";
}

TEST(FirstExampleEventTest, IsTheEventOfTheFirstExampleCompact) {
  EXPECT_EQ(FirstExampleEvent(R"([{"title":"a","event":{"x": 1}},{"title":"b","event":{}}])"),
            R"({"x":1})");
  EXPECT_EQ(FirstExampleEvent(R"([{"event": [1, "it's"]}])"), R"([1,"it's"])");
}

TEST(FirstExampleEventTest, IsAnEmptyObjectWithoutOne) {
  EXPECT_EQ(FirstExampleEvent(""), "{}");
  EXPECT_EQ(FirstExampleEvent("[]"), "{}");
  EXPECT_EQ(FirstExampleEvent(R"([{"title":"no event"}])"), "{}");
  EXPECT_EQ(FirstExampleEvent(R"({"event":{}})"), "{}");
  EXPECT_EQ(FirstExampleEvent("garbage"), "{}");
}

TEST(LatestVersion, ComparesNumericallyPartByPart) {
  EXPECT_EQ(Latest({"1.9", "1.10"}), "1.10");
  EXPECT_EQ(Latest({"1.10", "1.9"}), "1.10");
  EXPECT_EQ(Latest({"1.2", "1.2.3"}), "1.2.3");
  EXPECT_EQ(Latest({"1.2.3", "1.2"}), "1.2.3");
  EXPECT_EQ(Latest({"0.0.4", "0.0.10", "0.0.9"}), "0.0.10");
  EXPECT_EQ(Latest({"2", "1.999.999.999"}), "2");
  EXPECT_EQ(Latest({"1.0"}), "1.0");
  EXPECT_EQ(Latest({}), "(none)");
}

TEST(FindVersion, NeedsTheExactString) {
  auto versions = Versions({"1.0", "2.1"});
  ASSERT_NE(FindVersion(versions, "1.0"), nullptr);
  EXPECT_EQ(FindVersion(versions, "1.0")->version, "1.0");
  EXPECT_EQ(FindVersion(versions, "1.0.0"), nullptr);
  EXPECT_EQ(FindVersion(versions, "1"), nullptr);
  EXPECT_EQ(FindVersion(versions, "3.0"), nullptr);
}

TEST(NormalizeFunctionId, LowerCasesOnlyAsciiLetters) {
  EXPECT_EQ(NormalizeFunctionId("0A1B-CDEF"), "0a1b-cdef");
}

}  // namespace
}  // namespace toolgate::core
