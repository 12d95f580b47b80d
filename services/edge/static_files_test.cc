#include "static_files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace toolgate::edge {
namespace {

TEST(StaticFilesTest, AppRoutesAreExtensionlessPathsOutsideTheApiAndOperatorPaths) {
  EXPECT_TRUE(StaticFiles::IsAppRoute("/"));
  EXPECT_TRUE(StaticFiles::IsAppRoute("/tools/123"));
  EXPECT_TRUE(StaticFiles::IsAppRoute("/login"));
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

TEST(StaticFilesTest, ServesIndexOnlyForAppRoutes) {
  auto dir =
      std::filesystem::temp_directory_path() / ("static_files_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "index.html") << "<html>app</html>";
  std::ofstream(dir / "app.js") << "js";
  StaticFiles files(dir.string());
  ASSERT_TRUE(files.Find("/tools/abc").has_value());
  EXPECT_EQ(files.Find("/tools/abc")->body, "<html>app</html>");
  EXPECT_EQ(files.Find("/app.js")->body, "js");
  EXPECT_FALSE(files.Find("/metrics").has_value());
  EXPECT_FALSE(files.Find("/api/v1/nope").has_value());
  EXPECT_FALSE(files.Find("/other.js").has_value());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace toolgate::edge
