#include "toolgate/core/bundle_paths.h"

#include <gtest/gtest.h>

namespace toolgate::core {
namespace {

using Parts = std::vector<std::string>;

std::string Refusal(const Result<Parts>& r) {
  return r.ok() ? "" : r.status().message();
}

TEST(BundlePathsTest, SplitsAndNormalizesPaths) {
  EXPECT_EQ(*SplitBundlePath("a/b.py"), (Parts{"a", "b.py"}));
  EXPECT_EQ(*SplitBundlePath("./a//b/"), (Parts{"a", "b"}));
  EXPECT_EQ(*SplitBundlePath("."), Parts{});
  EXPECT_EQ(*SplitBundlePath("node_modules/.bin/x"), (Parts{"node_modules", ".bin", "x"}));
}

TEST(BundlePathsTest, RefusesPathsOutOfTheBundle) {
  EXPECT_EQ(Refusal(SplitBundlePath("/etc/passwd")), "a path may not be absolute");
  EXPECT_EQ(Refusal(SplitBundlePath("../evil.py")), "a path may not leave the bundle");
  EXPECT_EQ(Refusal(SplitBundlePath("src/../../evil.py")), "a path may not leave the bundle");
  // Even a ".." that would stay inside: no archive tool writes one.
  EXPECT_EQ(Refusal(SplitBundlePath("a/../b")), "a path may not leave the bundle");
  EXPECT_EQ(Refusal(SplitBundlePath(std::string("a\nb"))),
            "a path may not hold control characters");
  EXPECT_EQ(Refusal(SplitBundlePath(std::string("a\x7f"))),
            "a path may not hold control characters");
}

TEST(BundlePathsTest, ResolvesLinksFromTheirDirectory) {
  // node_modules/.bin/x -> ../x/cli.js, as npm writes it.
  auto visited = ResolveBundleLink({"node_modules", ".bin", "x"}, "../x/cli.js");
  ASSERT_TRUE(visited.ok()) << visited.status().ToString();
  EXPECT_EQ(*visited, (Parts{"node_modules/x", "node_modules/x/cli.js"}));
  EXPECT_EQ(*ResolveBundleLink({"a"}, "./b"), Parts{"b"});
}

TEST(BundlePathsTest, RefusesLinksOutOfTheBundle) {
  EXPECT_EQ(Refusal(ResolveBundleLink({"passwd"}, "/etc/passwd")),
            "a link may not point to an absolute path");
  EXPECT_EQ(Refusal(ResolveBundleLink({"passwd"}, "../etc/passwd")),
            "a link may not point out of the bundle");
  EXPECT_EQ(Refusal(ResolveBundleLink({"a", "up"}, "../..")),
            "a link may not point out of the bundle");
  // Down and up again, but above the root on the way: refused.
  EXPECT_EQ(Refusal(ResolveBundleLink({"l"}, "../x/../y")),
            "a link may not point out of the bundle");
  EXPECT_EQ(Refusal(ResolveBundleLink({"l"}, "")), "a link needs a target");
}

TEST(BundlePathsTest, DefaultHandlers) {
  EXPECT_EQ(DefaultBundleHandler("python"), "handler.py");
  EXPECT_EQ(DefaultBundleHandler("javascript"), "handler.js");
  EXPECT_EQ(DefaultBundleHandler("lua"), "handler.lua");
  EXPECT_EQ(JoinBundlePath({"a", "b", "c"}, 2), "a/b");
  EXPECT_EQ(JoinBundlePath({"a"}, 5), "a");
}

}  // namespace
}  // namespace toolgate::core
