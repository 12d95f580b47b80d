#include "demo/catalogue.h"

#include <gtest/gtest.h>

#include <set>

#include "toolgate/core/json_schema.h"

namespace toolgate::cli {
namespace {

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
