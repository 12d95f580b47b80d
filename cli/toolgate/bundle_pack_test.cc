#include "bundle_pack.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace toolgate::cli {
namespace {
namespace fs = std::filesystem;

TEST(IgnoreRules, FollowsGitignoreForNamesAnchorsDirectoriesAndNegation) {
  IgnoreRules rules = IgnoreRules::Parse(
      "# comment\n\n*.pyc\n/build\ncache/\n!keep.pyc\ndocs/*.md\n**/fixtures/**\n");
  EXPECT_TRUE(rules.Excluded("a.pyc", false));
  EXPECT_TRUE(rules.Excluded("pkg/deep/a.pyc", false));
  EXPECT_FALSE(rules.Excluded("pkg/keep.pyc", false));
  EXPECT_TRUE(rules.Excluded("build", true));
  EXPECT_FALSE(rules.Excluded("src/build", true));  // anchored at the root
  EXPECT_TRUE(rules.Excluded("src/cache", true));
  EXPECT_FALSE(rules.Excluded("src/cache", false));  // directories only
  EXPECT_TRUE(rules.Excluded("docs/a.md", false));
  EXPECT_FALSE(rules.Excluded("docs/sub/a.md", false));  // "*" stays within a name
  EXPECT_TRUE(rules.Excluded("test/fixtures/big.json", false));
  EXPECT_FALSE(rules.Excluded("handler.py", false));
}

class PackBundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/pack-bundle-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& path, const std::string& text) {
    fs::create_directories((dir_ / path).parent_path());
    std::ofstream(dir_ / path) << text;
  }
  // path -> contents ("->target" for a link, "/" for a directory) of an archive.
  static std::map<std::string, std::string> Entries(const std::string& bytes) {
    std::map<std::string, std::string> out;
    archive* a = archive_read_new();
    archive_read_support_filter_gzip(a);
    archive_read_support_format_tar(a);
    EXPECT_EQ(archive_read_open_memory(a, bytes.data(), bytes.size()), ARCHIVE_OK);
    archive_entry* e;
    while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
      std::string value;
      if (archive_entry_filetype(e) == AE_IFDIR) {
        value = "/";
      } else if (archive_entry_filetype(e) == AE_IFLNK) {
        value = std::string("->") + archive_entry_symlink(e);
      } else {
        char buf[4096];
        for (la_ssize_t n; (n = archive_read_data(a, buf, sizeof buf)) > 0;) {
          value.append(buf, static_cast<size_t>(n));
        }
      }
      std::string path = archive_entry_pathname(e);
      if (path.back() == '/') path.pop_back();  // how tar names a directory
      out[path] = value;
    }
    archive_read_free(a);
    return out;
  }
  fs::path dir_;
};

TEST_F(PackBundleTest, PacksTheToolAndLeavesOutGitTheManifestAndIgnoredFiles) {
  Write("toolgate.json", "{}");
  Write(".toolgateignore", "*.log\n/tests/\n");
  Write(".git/config", "[core]");
  Write("handler.py", "import pkg");
  Write("pkg/__init__.py", "X = 1");
  Write("pkg/debug.log", "noise");
  Write("tests/test_pkg.py", "assert True");
  fs::create_directories(dir_ / "node_modules/.bin");
  Write("node_modules/tool/cli.js", "x");
  fs::create_symlink("../tool/cli.js", dir_ / "node_modules/.bin/tool");
  auto packed = PackBundle(dir_);
  ASSERT_TRUE(packed.ok()) << packed.status().ToString();
  std::map<std::string, std::string> expected = {
      {"handler.py", "import pkg"},
      {"node_modules", "/"},
      {"node_modules/.bin", "/"},
      {"node_modules/.bin/tool", "->../tool/cli.js"},
      {"node_modules/tool", "/"},
      {"node_modules/tool/cli.js", "x"},
      {"pkg", "/"},
      {"pkg/__init__.py", "X = 1"},
  };
  EXPECT_EQ(Entries(*packed), expected);
  // Reproducible: the same files give the same bytes, so the same digest.
  EXPECT_EQ(*PackBundle(dir_), *packed);
}

// .dev.vars holds the secrets `toolgate dev` gives a tool: a .toolgateignore line leaves it
// out, and so does the packer without one, at any depth.
TEST_F(PackBundleTest, DevVarsNeverLandInTheBundle) {
  Write("handler.py", "x");
  Write(".dev.vars", "API_KEY=s3cret\n");
  Write("sub/.dev.vars", "API_KEY=s3cret\n");
  Write(".toolgateignore", "*.tmp\n");  // no line for .dev.vars
  auto packed = PackBundle(dir_);
  ASSERT_TRUE(packed.ok()) << packed.status().ToString();
  std::map<std::string, std::string> expected = {{"handler.py", "x"}, {"sub", "/"}};
  EXPECT_EQ(Entries(*packed), expected);
  EXPECT_EQ(packed->find("s3cret"), std::string::npos);
  // An ignored file of any other name stays out through its pattern.
  Write("notes.tmp", "scratch");
  EXPECT_EQ(Entries(*PackBundle(dir_)), expected);
}

TEST_F(PackBundleTest, RefusesLinksOutOfTheDirectory) {
  Write("handler.py", "x");
  fs::create_symlink("/etc/passwd", dir_ / "passwd");
  auto absolute = PackBundle(dir_);
  EXPECT_NE(absolute.status().message().find("passwd: a link in a bundle must be relative"),
            std::string::npos)
      << absolute.status().message();
  fs::remove(dir_ / "passwd");
  fs::create_symlink("../../etc", dir_ / "up");
  auto climbing = PackBundle(dir_);
  EXPECT_NE(climbing.status().message().find("up: a link in a bundle may not point out"),
            std::string::npos);
}

TEST_F(PackBundleTest, NothingToInstallWithoutPackageJsonOrWithNodeModules) {
  EXPECT_TRUE(InstallNodeModules(dir_).ok());
  Write("package.json", "{\"name\":\"x\",\"dependencies\":{\"does-not-exist-anywhere\":\"1\"}}");
  fs::create_directories(dir_ / "node_modules");
  // node_modules exists: npm is not run (it would fail on that dependency).
  EXPECT_TRUE(InstallNodeModules(dir_).ok());
}

}  // namespace
}  // namespace toolgate::cli
