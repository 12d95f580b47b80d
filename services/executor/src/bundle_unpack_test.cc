#include "toolgate/executor/bundle_unpack.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "testing/tar_builder.h"

namespace toolgate::executor {
namespace {

using testing::TarBuilder;
namespace fs = std::filesystem;

class UnpackBundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/bundle-unpack-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    base_ = pattern;
    dir_ = base_ + "/bundle";
    ASSERT_EQ(::mkdir(dir_.c_str(), 0755), 0);
  }
  void TearDown() override { ASSERT_TRUE(RemoveTree(base_).ok()); }

  Result<UnpackedSize> Unpack(const std::string& archive, BundleLimits limits = {}) {
    return UnpackBundle(archive, dir_, limits);
  }
  std::string Read(const std::string& relative) {
    std::ifstream in(dir_ + "/" + relative, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Whatever the bundle tried, nothing may appear beside the bundle's directory.
  void ExpectNothingOutside() {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(base_)) names.push_back(e.path().filename());
    EXPECT_EQ(names, std::vector<std::string>{"bundle"});
  }

  std::string base_, dir_;
};

TEST_F(UnpackBundleTest, WritesFilesDirectoriesAndInnerLinksReadOnly) {
  std::string archive = TarBuilder()
                            .Dir("./src")
                            .File("./src/main.py", "import pkg\n")
                            .File("pkg/__init__.py", "X = 1\n")
                            .Dir("node_modules/.bin")
                            .File("node_modules/tool/cli.js", "x")
                            .Symlink("node_modules/.bin/tool", "../tool/cli.js")
                            .Hardlink("src/copy.py", "src/main.py")
                            .Finish();
  auto size = Unpack(archive);
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  EXPECT_EQ(Read("src/main.py"), "import pkg\n");
  EXPECT_EQ(Read("pkg/__init__.py"), "X = 1\n");
  EXPECT_EQ(Read("node_modules/.bin/tool"), "x");
  EXPECT_EQ(Read("src/copy.py"), "import pkg\n");
  EXPECT_EQ(size->bytes, 11u + 6u + 1u);
  struct stat st;
  ASSERT_EQ(::stat((dir_ + "/src/main.py").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0444u);
  EXPECT_EQ(st.st_uid, ::geteuid());
  ASSERT_EQ(::stat((dir_ + "/src").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0555u);
}

TEST_F(UnpackBundleTest, RefusesPathsOutOfTheBundle) {
  for (std::string path : {"../evil.py", "a/../../evil.py", "/etc/evil.py"}) {
    auto size = Unpack(TarBuilder().File(path, "x").Finish());
    ASSERT_FALSE(size.ok()) << path;
    EXPECT_EQ(size.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(size.status().message().find(path), std::string::npos) << size.status().message();
  }
  ExpectNothingOutside();
  EXPECT_FALSE(fs::exists("/etc/evil.py"));
}

TEST_F(UnpackBundleTest, RefusesLinksOutAndWritesThroughLinks) {
  auto absolute = Unpack(TarBuilder().Symlink("etc", "/etc").Finish());
  EXPECT_NE(absolute.status().message().find("absolute"), std::string::npos);
  ASSERT_TRUE(RemoveTree(dir_).ok());
  ASSERT_EQ(::mkdir(dir_.c_str(), 0755), 0);

  auto climbing = Unpack(TarBuilder().Symlink("a/up", "../../..").Finish());
  EXPECT_NE(climbing.status().message().find("a/up: a link may not point out"), std::string::npos)
      << climbing.status().message();
  ASSERT_TRUE(RemoveTree(dir_).ok());
  ASSERT_EQ(::mkdir(dir_.c_str(), 0755), 0);

  // A link that stays inside, then a file written through it: refused, never followed.
  auto through = Unpack(TarBuilder().Dir("d").Symlink("l", "d").File("l/x.py", "x").Finish());
  EXPECT_NE(through.status().message().find("l/x.py"), std::string::npos)
      << through.status().message();
  ASSERT_TRUE(RemoveTree(dir_).ok());
  ASSERT_EQ(::mkdir(dir_.c_str(), 0755), 0);

  // Each link alone stays inside; followed one after the other, they would climb out.
  auto chain =
      Unpack(TarBuilder().Dir("a/b").Symlink("a/b/up", "..").Symlink("a/x", "b/up/..").Finish());
  EXPECT_NE(chain.status().message().find("through another link"), std::string::npos)
      << chain.status().message();
  ExpectNothingOutside();
}

TEST_F(UnpackBundleTest, RefusesDevicesFifosAndStrayHardLinks) {
  auto device = Unpack(TarBuilder().CharDevice("null").Finish());
  EXPECT_EQ(device.status().message(), "null: device files are not allowed");
  ASSERT_TRUE(RemoveTree(dir_).ok());
  ASSERT_EQ(::mkdir(dir_.c_str(), 0755), 0);
  auto fifo = Unpack(TarBuilder().Fifo("pipe").Finish());
  EXPECT_EQ(fifo.status().message(), "pipe: FIFOs are not allowed");
  ASSERT_TRUE(RemoveTree(dir_).ok());
  ASSERT_EQ(::mkdir(dir_.c_str(), 0755), 0);
  auto hardlink = Unpack(TarBuilder().Hardlink("passwd", "/etc/passwd").Finish());
  EXPECT_NE(hardlink.status().message().find("hard link"), std::string::npos);
}

TEST_F(UnpackBundleTest, RefusesTheSamePathTwice) {
  auto twice = Unpack(TarBuilder().File("h.py", "a").File("./h.py", "b").Finish());
  EXPECT_EQ(twice.status().message(), "./h.py: the bundle holds this path twice");
}

TEST_F(UnpackBundleTest, CountsDataAsItIsDecompressedAgainstTheLimits) {
  BundleLimits limits;
  limits.max_unpacked_bytes = 1000;
  auto big = Unpack(
      TarBuilder().File("a", std::string(600, 'a')).File("b", std::string(600, 'b')).Finish(),
      limits);
  EXPECT_EQ(big.status().message(), "the bundle unpacks to more than 0 MiB");
  ASSERT_TRUE(RemoveTree(dir_).ok());
  ASSERT_EQ(::mkdir(dir_.c_str(), 0755), 0);

  limits = BundleLimits{};
  limits.max_entries = 2;
  auto many = Unpack(TarBuilder().File("a", "").File("b", "").File("c", "").Finish(), limits);
  EXPECT_EQ(many.status().message(), "the bundle holds more than 2 entries");

  limits = BundleLimits{};
  limits.max_compressed_bytes = 10;
  auto compressed = Unpack(TarBuilder().File("a", "x").Finish(), limits);
  EXPECT_EQ(compressed.status().code(), Status::Code::kInvalidArgument);
}

TEST_F(UnpackBundleTest, RefusesWhatIsNotAGzippedTar) {
  EXPECT_EQ(Unpack("just some text").status().code(), Status::Code::kInvalidArgument);
}

TEST(BundlePath, AcceptsRelativePathsInsideOnly) {
  EXPECT_TRUE(IsBundlePath("handler.py"));
  EXPECT_TRUE(IsBundlePath("./src/main.js"));
  EXPECT_FALSE(IsBundlePath(""));
  EXPECT_FALSE(IsBundlePath("."));
  EXPECT_FALSE(IsBundlePath("/etc/passwd"));
  EXPECT_FALSE(IsBundlePath("src/../../x.lua"));
}

}  // namespace
}  // namespace toolgate::executor
