#include "version_bump.h"

#include <gtest/gtest.h>

namespace toolgate::cli {
namespace {

TEST(VersionBumpTest, EachPartResetsTheOnesAfterIt) {
  EXPECT_EQ(*BumpVersion("1.4.2", "patch"), "1.4.3");
  EXPECT_EQ(*BumpVersion("1.4.2", "minor"), "1.5.0");
  EXPECT_EQ(*BumpVersion("1.4.2", "major"), "2.0.0");
  EXPECT_EQ(*BumpVersion("0.9.9", "patch"), "0.9.10");
}

TEST(VersionBumpTest, ShortAndLongVersionsBecomeThreeParts) {
  EXPECT_EQ(*BumpVersion("1", "patch"), "1.0.1");
  EXPECT_EQ(*BumpVersion("1.4", "minor"), "1.5.0");
  EXPECT_EQ(*BumpVersion("1.4.2.7", "patch"), "1.4.3");
}

TEST(VersionBumpTest, RefusesBadInput) {
  EXPECT_FALSE(BumpVersion("1.0.0", "micro").ok());
  EXPECT_FALSE(BumpVersion("v1.0", "patch").ok());
  EXPECT_FALSE(BumpVersion("1.0.999999999", "patch").ok());  // 1000000000 has ten digits
  EXPECT_TRUE(BumpVersion("1.0.999999998", "patch").ok());
  EXPECT_EQ(*BumpVersion("1.0.999999999", "minor"), "1.1.0");
}

TEST(VersionBumpTest, HighestComparesNumerically) {
  EXPECT_EQ(HighestVersion({"1.9.0", "1.10.0", "1.2.3"}), "1.10.0");
  EXPECT_EQ(HighestVersion({"2", "1.99"}), "2");
  EXPECT_EQ(HighestVersion({"junk", "0.1.0"}), "0.1.0");
  EXPECT_EQ(HighestVersion({}), "");
}

}  // namespace
}  // namespace toolgate::cli
