#include "static_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace toolgate::edge {
namespace {

class StaticFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("static-files-" + std::to_string(::getpid()));
    fs::create_directories(root_ / "docs");
    fs::create_directories(root_ / "js");
    std::ofstream(root_ / "index.html") << "app";
    std::ofstream(root_ / "js" / "main.js") << "main";
    std::ofstream(root_ / "docs" / "index.html") << "reference";
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(StaticFilesTest, ADirectoryWithAPageServesIt) {
  StaticFiles files(root_.string());
  ASSERT_TRUE(files.Find("/docs").has_value());
  EXPECT_EQ(files.Find("/docs")->body, "reference");
  EXPECT_EQ(files.Find("/docs/")->body, "reference");
  EXPECT_EQ(files.Find("/docs")->content_type, "text/html; charset=utf-8");
}

TEST_F(StaticFilesTest, AppRoutesGetTheAppAndFilesThemselves) {
  StaticFiles files(root_.string());
  EXPECT_EQ(files.Find("/")->body, "app");
  EXPECT_EQ(files.Find("/tools/123")->body, "app");
  EXPECT_EQ(files.Find("/js")->body, "app");  // a directory without a page of its own
  EXPECT_EQ(files.Find("/js/main.js")->body, "main");
  EXPECT_FALSE(files.Find("/missing.js").has_value());
}

}  // namespace
}  // namespace toolgate::edge
