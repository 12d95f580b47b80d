#include "toolgate/registry/bundle_check.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "toolgate/base/crypto.h"

namespace toolgate::registry {
namespace {

// One entry of an archive built for a test; tar lets an archive say anything, so the builder
// writes exactly what it is told.
struct TestEntry {
  std::string path;
  mode_t type = AE_IFREG;
  std::string data;
  std::string symlink;   // target, for AE_IFLNK
  std::string hardlink;  // target, for a hard link
};

enum class Packing { kTarGz, kTar, kZip };

la_ssize_t Append(archive*, void* out, const void* buffer, size_t length) {
  static_cast<std::string*>(out)->append(static_cast<const char*>(buffer), length);
  return static_cast<la_ssize_t>(length);
}

std::string Pack(const std::vector<TestEntry>& entries, Packing packing = Packing::kTarGz) {
  std::string out;
  archive* a = archive_write_new();
  if (packing == Packing::kZip) {
    archive_write_set_format_zip(a);
  } else {
    archive_write_set_format_pax_restricted(a);
  }
  if (packing == Packing::kTarGz) archive_write_add_filter_gzip(a);
  EXPECT_EQ(archive_write_open(a, &out, nullptr, Append, nullptr), ARCHIVE_OK);
  for (const TestEntry& e : entries) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, e.path.c_str());
    archive_entry_set_filetype(entry, e.type);
    archive_entry_set_perm(entry, e.type == AE_IFDIR ? 0755 : 0644);
    if (!e.symlink.empty()) archive_entry_set_symlink(entry, e.symlink.c_str());
    if (!e.hardlink.empty()) archive_entry_set_hardlink(entry, e.hardlink.c_str());
    archive_entry_set_size(entry, static_cast<la_int64_t>(e.data.size()));
    EXPECT_EQ(archive_write_header(a, entry), ARCHIVE_OK) << e.path;
    if (!e.data.empty()) archive_write_data(a, e.data.data(), e.data.size());
    archive_entry_free(entry);
  }
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

TestEntry Entry(std::string path, mode_t type) {
  TestEntry e;
  e.path = std::move(path);
  e.type = type;
  return e;
}
TestEntry File(std::string path, std::string data = "x = 1\n") {
  TestEntry e = Entry(std::move(path), AE_IFREG);
  e.data = std::move(data);
  return e;
}
TestEntry Dir(std::string path) {
  return Entry(std::move(path), AE_IFDIR);
}
TestEntry Symlink(std::string path, std::string target) {
  TestEntry e = Entry(std::move(path), AE_IFLNK);
  e.symlink = std::move(target);
  return e;
}
TestEntry Hardlink(std::string path, std::string target) {
  TestEntry e = Entry(std::move(path), AE_IFREG);
  e.hardlink = std::move(target);
  return e;
}

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
  for (const std::string& bytes : {Pack(entries, Packing::kTar), Pack(entries, Packing::kZip),
                                   std::string("not an archive"), std::string()}) {
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
  EXPECT_EQ(DefaultHandler("python"), "handler.py");
  EXPECT_EQ(DefaultHandler("javascript"), "handler.js");
  EXPECT_EQ(DefaultHandler("lua"), "handler.lua");
}

}  // namespace
}  // namespace toolgate::registry
