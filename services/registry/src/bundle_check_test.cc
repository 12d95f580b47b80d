#include "toolgate/registry/bundle_check.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_bundles.h"
#include "toolgate/base/crypto.h"

namespace toolgate::registry {
namespace {

// The message of a refused bundle; fails the test when it was accepted.
std::string Refusal(const std::vector<TestEntry>& entries, std::string_view handler = "handler.py",
                    BundleLimits limits = {}) {
  auto checked = BundleCheck(limits).Check(Pack(entries), handler);
  if (checked.ok()) {
    ADD_FAILURE() << "bundle accepted";
    return "";
  }
  EXPECT_EQ(checked.status().code(), Status::Code::kInvalidArgument);
  return checked.status().message();
}

TEST(BundleCheckTest, AcceptsAHandlerWithModulesAndReportsWhatItHolds) {
  const std::string bytes =
      Pack({Dir("./"), Dir("./src"), File("./src/main.py", "def service_handler(e, c):\n  pass\n"),
            Dir("./src/vendored"), File("./src/vendored/__init__.py", ""),
            File("./src/vendored/lib.py", "VALUE = 42\n")});
  auto checked = BundleCheck().Check(bytes, "src/main.py");
  ASSERT_TRUE(checked.ok()) << checked.status().ToString();
  EXPECT_EQ(checked->handler_code, "def service_handler(e, c):\n  pass\n");
  EXPECT_EQ(checked->files, 5);  // the root "./" is not counted
  EXPECT_EQ(checked->size_bytes, bytes.size());
  EXPECT_EQ(checked->unpacked_bytes, 45u);
  EXPECT_EQ(checked->digest, HexEncode(Sha256(bytes)));
}

TEST(BundleCheckTest, ReadsTheHandlerUpToTheSyntaxCheckLimit) {
  const std::string big(kMaxHandlerReadBytes + 1, 'x');
  auto checked = BundleCheck().Check(Pack({File("handler.js", big)}), "handler.js");
  ASSERT_TRUE(checked.ok()) << checked.status().ToString();
  EXPECT_EQ(checked->handler_bytes, big.size());
  EXPECT_EQ(checked->handler_code, "");
  const std::string most(kMaxHandlerReadBytes, 'y');
  checked = BundleCheck().Check(Pack({File("handler.js", most)}), "handler.js");
  ASSERT_TRUE(checked.ok()) << checked.status().ToString();
  EXPECT_EQ(checked->handler_code, most);
}

TEST(BundleCheckTest, KeepsRelativeLinksThatStayInside) {
  auto checked = BundleCheck().Check(
      Pack({File("handler.js", "exports.x = 1;"), Dir("node_modules"), Dir("node_modules/ajv"),
            File("node_modules/ajv/cli.js"), Dir("node_modules/.bin"),
            Symlink("node_modules/.bin/ajv", "../ajv/cli.js"), Hardlink("copy.js", "handler.js")}),
      "handler.js");
  ASSERT_TRUE(checked.ok()) << checked.status().ToString();
}

TEST(BundleCheckTest, RefusesAPathWithDotDot) {
  EXPECT_EQ(Refusal({File("handler.py"), File("../evil.py")}),
            "../evil.py: a path may not leave the bundle");
  EXPECT_EQ(Refusal({File("handler.py"), File("src/../../evil.py")}),
            "src/../../evil.py: a path may not leave the bundle");
}

TEST(BundleCheckTest, RefusesAnAbsolutePath) {
  EXPECT_EQ(Refusal({File("handler.py"), File("/etc/cron.d/evil")}),
            "/etc/cron.d/evil: a path may not be absolute");
}

TEST(BundleCheckTest, RefusesASymlinkOutOfTheBundle) {
  EXPECT_EQ(Refusal({File("handler.py"), Symlink("passwd", "../../etc/passwd")}),
            "passwd: a link may not point out of the bundle");
  EXPECT_EQ(Refusal({File("handler.py"), Symlink("passwd", "/etc/passwd")}),
            "passwd: a link may not point to an absolute path");
  EXPECT_EQ(Refusal({File("handler.py"), Dir("a"), Symlink("a/up", "../..")}),
            "a/up: a link may not point out of the bundle");
}

TEST(BundleCheckTest, RefusesALinkChainThatClimbsOut) {
  // Each link alone stays inside, but deep/link/.. resolves to the bundle's parent on disk.
  EXPECT_EQ(Refusal({File("handler.py"), Dir("deep"), Symlink("deep/link", ".."),
                     Symlink("evil", "deep/link/..")}),
            "evil: a link may not point through another link");
}

TEST(BundleCheckTest, RefusesAnEntryUnderALink) {
  EXPECT_EQ(
      Refusal({File("handler.py"), Dir("d"), Symlink("d/root", ".."), File("d/root/handler2.py")}),
      "d/root/handler2.py: a path may not pass through a link");
}

TEST(BundleCheckTest, RefusesAHardLinkOutOfTheBundle) {
  EXPECT_EQ(Refusal({File("handler.py"), Hardlink("shadow", "/etc/shadow")}),
            "shadow: a hard link must point to a file earlier in the bundle");
  EXPECT_EQ(Refusal({File("handler.py"), Hardlink("shadow", "../shadow")}),
            "shadow: a hard link must point to a file earlier in the bundle");
}

TEST(BundleCheckTest, RefusesDevicesFifosAndSockets) {
  EXPECT_EQ(Refusal({File("handler.py"), Entry("dev/sda", AE_IFBLK)}),
            "dev/sda: device files are not allowed");
  EXPECT_EQ(Refusal({File("handler.py"), Entry("null", AE_IFCHR)}),
            "null: device files are not allowed");
  EXPECT_EQ(Refusal({File("handler.py"), Entry("pipe", AE_IFIFO)}), "pipe: FIFOs are not allowed");
}

TEST(BundleCheckTest, RefusesAPathTwice) {
  EXPECT_EQ(Refusal({File("handler.py"), File("handler.py", "import os\n")}),
            "handler.py: appears twice in the bundle");
}

TEST(BundleCheckTest, RefusesTooManyEntries) {
  std::vector<TestEntry> entries = {File("handler.py")};
  for (int i = 0; i < 5; ++i) entries.push_back(File("m" + std::to_string(i) + ".py"));
  BundleLimits limits;
  limits.max_entries = 5;
  EXPECT_EQ(Refusal(entries, "handler.py", limits), "has more than 5 entries");
  entries.pop_back();
  EXPECT_TRUE(BundleCheck(limits).Check(Pack(entries), "handler.py").ok());
}

TEST(BundleCheckTest, RefusesOverTheCompressedLimit) {
  const std::string bytes = Pack({File("handler.py", RandomBytes(4096))});
  BundleLimits limits;
  limits.max_compressed_bytes = bytes.size() - 1;
  auto checked = BundleCheck(limits).Check(bytes, "handler.py");
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.status().message().rfind("is over ", 0), 0u) << checked.status().message();
  limits.max_compressed_bytes = bytes.size();
  EXPECT_TRUE(BundleCheck(limits).Check(bytes, "handler.py").ok());
}

TEST(BundleCheckTest, RefusesOverTheUnpackedLimit) {
  // Zeros compress to almost nothing: the unpacked size is what the limit must catch.
  BundleLimits limits;
  limits.max_unpacked_bytes = 3u << 20;
  EXPECT_EQ(Refusal({File("handler.py"), File("zeros", std::string(4u << 20, '\0'))}, "handler.py",
                    limits),
            "unpacks to more than 3 MiB");
}

TEST(BundleCheckTest, RefusesAMissingHandler) {
  EXPECT_EQ(Refusal({File("main.py")}),
            "handler.py: the handler must be a regular file in the bundle");
  EXPECT_EQ(Refusal({Dir("src"), File("src/lib.py")}, "src/main.py"),
            "src/main.py: the handler must be a regular file in the bundle");
  EXPECT_EQ(Refusal({File("real.py"), Symlink("handler.py", "real.py")}),
            "handler.py: the handler must be a regular file in the bundle");
  EXPECT_EQ(Refusal({Dir("handler.py")}),
            "handler.py: the handler must be a regular file in the bundle");
}

TEST(BundleCheckTest, RefusesAHandlerPathThatLeavesTheBundle) {
  EXPECT_EQ(Refusal({File("handler.py")}, "../handler.py"), "a path may not leave the bundle");
}

TEST(BundleCheckTest, RefusesWhatIsNotAGzippedTar) {
  const std::vector<TestEntry> entries = {File("handler.py")};
  for (const std::string& bytes :
       {Pack(entries, Packing::kTar), Pack(entries, Packing::kZip), std::string("not an archive"),
        std::string(), Pack({}, Packing::kTar)}) {
    auto checked = BundleCheck().Check(bytes, "handler.py");
    ASSERT_FALSE(checked.ok());
    EXPECT_EQ(checked.status().message(), "is not a gzip-compressed tar archive");
  }
}

TEST(BundleCheckPathTest, NormalisesAndRefuses) {
  EXPECT_EQ(*CheckBundlePath("./src/main.py"), "src/main.py");
  EXPECT_EQ(*CheckBundlePath("lib/"), "lib");
  EXPECT_FALSE(CheckBundlePath("").ok());
  EXPECT_FALSE(CheckBundlePath("a//b").ok());
  EXPECT_FALSE(CheckBundlePath("a/./b").ok());
  EXPECT_FALSE(CheckBundlePath("a\nb").ok());
  EXPECT_FALSE(CheckBundlePath("a/..").ok());
}

TEST(BundleCheckPathTest, DefaultHandlers) {
  EXPECT_EQ(DefaultBundleHandler("python"), "handler.py");
  EXPECT_EQ(DefaultBundleHandler("javascript"), "handler.js");
  EXPECT_EQ(DefaultBundleHandler("lua"), "handler.lua");
}

}  // namespace
}  // namespace toolgate::registry
