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

TEST(StaticFilesRouteTest, AppRoutesAreExtensionlessPathsOutsideTheApiAndOperatorPaths) {
  EXPECT_TRUE(StaticFiles::IsAppRoute("/"));
  EXPECT_TRUE(StaticFiles::IsAppRoute("/tools/123"));
  EXPECT_TRUE(StaticFiles::IsAppRoute("/docs"));
  EXPECT_TRUE(StaticFiles::IsAppRoute("/apis"));  // only the segment "api" is reserved
  EXPECT_FALSE(StaticFiles::IsAppRoute("/metrics"));
  EXPECT_FALSE(StaticFiles::IsAppRoute("/readyz"));
  EXPECT_FALSE(StaticFiles::IsAppRoute("/api"));
  EXPECT_FALSE(StaticFiles::IsAppRoute("/api/v2/things"));
  EXPECT_FALSE(StaticFiles::IsAppRoute("/mcp/x"));
  EXPECT_FALSE(StaticFiles::IsAppRoute("/missing.js"));
  EXPECT_FALSE(StaticFiles::IsAppRoute("/.env"));
  EXPECT_FALSE(StaticFiles::IsAppRoute("relative"));
}

TEST_F(StaticFilesTest, OperatorAndApiPathsGetNoHtml) {
  StaticFiles files(root_.string());
  EXPECT_FALSE(files.Find("/metrics").has_value());
  EXPECT_FALSE(files.Find("/api/v1/nope").has_value());
  EXPECT_FALSE(files.Find("/api").has_value());
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
