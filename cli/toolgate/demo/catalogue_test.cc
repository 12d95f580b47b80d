#include "demo/catalogue.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>

#include <set>

#include "toolgate/core/json_schema.h"

namespace toolgate::cli {
namespace {

// The paths of a .tar.gz's entries.
std::set<std::string> BundlePaths(const std::string& bytes) {
  std::set<std::string> paths;
  archive* a = archive_read_new();
  archive_read_support_filter_gzip(a);
  archive_read_support_format_tar(a);
  if (archive_read_open_memory(a, bytes.data(), bytes.size()) == ARCHIVE_OK) {
    archive_entry* e;
    while (archive_read_next_header(a, &e) == ARCHIVE_OK) paths.insert(archive_entry_pathname(e));
  }
  archive_read_free(a);
  return paths;
}

TEST(DemoCatalogueTest, TheNpmToolCarriesItsDependenciesFromTheBuild) {
  auto tools = LoadDemoCatalogue();
  ASSERT_TRUE(tools.ok()) << tools.status().ToString();
  const DemoTool* npm = nullptr;
  for (const DemoTool& t : *tools) {
    if (t.dir == "order-validator") npm = &t;
    EXPECT_EQ(t.manifest.bundle, !t.bundle.empty()) << t.dir;
  }
  ASSERT_NE(npm, nullptr);
  EXPECT_EQ(npm->manifest.runtime, "javascript");
  std::set<std::string> paths = BundlePaths(npm->bundle);
  EXPECT_EQ(paths.count("handler.js"), 1u);
  EXPECT_EQ(paths.count("schema.json"), 1u);
  EXPECT_EQ(paths.count("node_modules/ajv/package.json"), 1u);  // installed by npm ci
  EXPECT_EQ(paths.count("demo.json"), 0u);                      // .toolgateignore
  EXPECT_EQ(paths.count("toolgate.json"), 0u);
}

TEST(DemoCatalogueTest, EveryToolLoadsWithARealSchemaThatItsExampleMeets) {
  auto tools = LoadDemoCatalogue();
  ASSERT_TRUE(tools.ok()) << tools.status().ToString();
  ASSERT_GE(tools->size(), 20u);
  std::set<std::string> samples, names;
  for (const DemoTool& t : *tools) {
    SCOPED_TRACE(t.dir);
    EXPECT_TRUE(names.insert(t.manifest.name).second) << "two tools named " << t.manifest.name;
    if (!t.sample.empty()) samples.insert(t.sample);
    EXPECT_FALSE(t.code.empty());
    EXPECT_LE(t.runs.size(), DemoCallers().size());  // callers past the list run it 0 times
    EXPECT_LE(t.ratings.size(), DemoCallers().size());
    for (size_t i = 0; i < t.ratings.size(); ++i) {
      if (t.ratings[i].stars > 0) {
        EXPECT_TRUE(i < t.runs.size() && t.runs[i] > 0) << "a caller rates only what it ran";
      }
    }
    // Seeding runs only Lua CPU tools (it needs no other executor pool).
    if (t.manifest.runtime != "lua" || t.manifest.compute_type != "CPU") {
      for (int runs : t.runs) EXPECT_EQ(runs, 0);
    }
    auto schema = core::JsonSchema::Compile(t.manifest.input_schema);
    ASSERT_TRUE(schema.ok()) << schema.status().ToString();
    EXPECT_FALSE((*schema)->accepts_anything_of_its_type()) << "describe the event it takes";
    std::string errors;
    for (const auto& e : (*schema)->Validate(std::string_view(t.example))) {
      errors += e.pointer + ": " + e.message + "; ";
    }
    EXPECT_EQ(errors, "") << "its example breaks its own schema";
  }
  EXPECT_EQ(samples, (std::set<std::string>{"echo", "forecast", "mcp"}));
}

}  // namespace
}  // namespace toolgate::cli
