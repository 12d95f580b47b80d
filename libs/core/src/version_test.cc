#include "toolgate/core/version.h"

#include <gtest/gtest.h>

namespace toolgate::core {
namespace {

int Compare(std::string_view a, std::string_view b) {
  auto va = ParseVersion(a);
  auto vb = ParseVersion(b);
  EXPECT_TRUE(va.has_value()) << a;
  EXPECT_TRUE(vb.has_value()) << b;
  return CompareVersions(*va, *vb);
}

TEST(VersionTest, ParsesValidVersions) {
  auto v = ParseVersion("1.2.3");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->count, 3);
  EXPECT_EQ(v->parts, (std::array<uint32_t, 4>{1, 2, 3, 0}));

  v = ParseVersion("7");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->count, 1);
  EXPECT_EQ(v->parts[0], 7u);

  v = ParseVersion("0.0.0.4");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->count, 4);
  EXPECT_EQ(v->parts[3], 4u);

  v = ParseVersion("999999999.999999999");  // nine digits per part is the maximum
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->parts[0], 999999999u);
  EXPECT_EQ(v->parts[1], 999999999u);

  for (const char* text : {"1.0", "2.1", "1.0.0", "0.0.4", "01.002"}) {
    EXPECT_TRUE(ParseVersion(text).has_value()) << text;
  }
}

TEST(VersionTest, RejectsInvalidVersions) {
  for (const char* text : {"", ".", "1.", ".1", "1..2", "a", "1.a", "v1", "-1", "+1", " 1", "1 ",
                           "1.2-beta", "1,2", "1.2.3.", "１"}) {
    EXPECT_FALSE(ParseVersion(text).has_value()) << '"' << text << '"';
  }
}

TEST(VersionTest, RejectsTenDigitParts) {
  EXPECT_FALSE(ParseVersion("1234567890").has_value());
  EXPECT_FALSE(ParseVersion("1.1234567890").has_value());
  EXPECT_FALSE(ParseVersion("0000000000").has_value());  // digits count, not the value
  EXPECT_TRUE(ParseVersion("123456789").has_value());
}

TEST(VersionTest, RejectsFiveParts) {
  EXPECT_FALSE(ParseVersion("1.2.3.4.5").has_value());
  EXPECT_FALSE(ParseVersion("0.0.0.0.0").has_value());
  EXPECT_TRUE(ParseVersion("1.2.3.4").has_value());
}

TEST(VersionTest, OrdersNumericallyPartByPart) {
  EXPECT_GT(Compare("1.10", "1.9"), 0);
  EXPECT_GT(Compare("1.9", "1.2.3"), 0);
  EXPECT_GT(Compare("1.2.3", "1.2"), 0);
  EXPECT_LT(Compare("1.2", "1.10"), 0);
  EXPECT_LT(Compare("0.0.4", "0.1"), 0);
  EXPECT_GT(Compare("2", "1.999999999.999999999.999999999"), 0);
  EXPECT_GT(Compare("1.0.0.1", "1"), 0);
}

TEST(VersionTest, MissingPartsCountAsZero) {
  EXPECT_EQ(Compare("1.0", "1.0.0"), 0);
  EXPECT_EQ(Compare("1", "1.0.0.0"), 0);
  EXPECT_EQ(Compare("01.2", "1.02"), 0);
  EXPECT_EQ(Compare("3.4", "3.4"), 0);
}

}  // namespace
}  // namespace toolgate::core
