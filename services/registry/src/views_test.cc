#include "toolgate/registry/views.h"

#include <gtest/gtest.h>

#include "toolgate/base/json.h"

namespace toolgate::registry {
namespace {

FunctionRecord Record() {
  FunctionRecord f;
  f.id = "6f1c2b9e-3d4a-4b5c-8d7e-9f0a1b2c3d4e";
  f.org_id = "org-1";
  f.org_name = "Acme";
  f.name = "Weather";
  f.description = "Forecasts";
  f.category = "data";
  f.tags = {"weather", "geo"};
  f.visibility = "public";
  f.price_micro_usd = 1500;
  f.executions = 42;
  f.created_at_ms = 1'800'000'000'000;
  f.updated_at_ms = 1'800'000'000'000;
  return f;
}

TEST(Views, DetailWithoutVersionsHasNullLatestFields) {
  std::string json = FunctionDetailJson(Record(), {}, nullptr);
  auto doc = ParseJson(json);
  ASSERT_TRUE(doc.ok()) << json;
  simdjson::dom::object o = doc->root.get_object();
  EXPECT_TRUE(o["latest_version"].is_null());
  EXPECT_TRUE(o["runtime"].is_null());
  EXPECT_TRUE(o["input_schema"].is_null());
  EXPECT_TRUE(o["egress"].is_null());
  EXPECT_TRUE(o["bundle"].is_null());
  EXPECT_EQ(o["versions"].get_array().size(), 0u);
  EXPECT_EQ(std::string_view(o["organization"]["name"].get_string()), "Acme");
  EXPECT_EQ(int64_t(o["rating"]["count"].get_int64()), 0);
  EXPECT_EQ(int64_t(o["executions"].get_int64()), 42);
  EXPECT_EQ(std::string_view(o["created_at"].get_string()), "2027-01-15T08:00:00Z");
}

TEST(Views, DetailCarriesTheLatestVersion) {
  VersionRecord latest;
  latest.version = "1.10";
  latest.runtime = "lua";
  latest.compute_type = "CPU";
  latest.input_schema_json = R"({"type":"object"})";
  latest.declared_keys = {"API_KEY"};
  latest.examples_json = R"([{"title":"t","event":{}}])";
  latest.timeout_ms = 1000;
  latest.memory_mb = 64;
  latest.price_micro_usd = 2000;
  VersionRecord older;
  older.version = "1.9";
  older.price_micro_usd = 1000;
  older.runtime = "lua";
  older.compute_type = "CPU";
  older.deprecated = true;
  std::string json = FunctionDetailJson(Record(), {latest, older}, &latest);
  auto doc = ParseJson(json);
  ASSERT_TRUE(doc.ok()) << json;
  simdjson::dom::object o = doc->root.get_object();
  EXPECT_EQ(std::string_view(o["latest_version"].get_string()), "1.10");
  EXPECT_EQ(std::string_view(o["versions"].at(1)["version"].get_string()), "1.9");
  EXPECT_EQ(std::string_view(o["declared_keys"].at(0).get_string()), "API_KEY");
  EXPECT_EQ(std::string_view(o["examples"].at(0)["title"].get_string()), "t");
  EXPECT_EQ(int64_t(o["memory_mb"].get_int64()), 64);
  EXPECT_FALSE(bool(o["versions"].at(0)["deprecated"].get_bool()));
  EXPECT_TRUE(bool(o["versions"].at(1)["deprecated"].get_bool()));
  EXPECT_EQ(o["egress"].get_array().size(), 0u);  // single-file code with no network
  EXPECT_TRUE(o["handler"].is_null());
  EXPECT_TRUE(o["bundle"].is_null());
}

TEST(Views, DetailAndVersionShowEgressAndTheBundle) {
  VersionRecord v;
  v.version = "2.0";
  v.runtime = "python";
  v.compute_type = "CPU";
  v.input_schema_json = R"({"type":"object"})";
  v.examples_json = "[]";
  v.egress = {"api.open-meteo.com", "*.example.com:8443"};
  v.handler = "src/main.py";
  v.bundle_digest = std::string(64, 'e');
  v.bundle_size_bytes = 2048;
  v.bundle_files = 7;
  for (const std::string& json :
       {FunctionDetailJson(Record(), {v}, &v), VersionDetailJson(v, false)}) {
    auto doc = ParseJson(json);
    ASSERT_TRUE(doc.ok()) << json;
    simdjson::dom::object o = doc->root.get_object();
    ASSERT_EQ(o["egress"].get_array().size(), 2u) << json;
    EXPECT_EQ(std::string_view(o["egress"].at(1).get_string()), "*.example.com:8443");
    EXPECT_EQ(std::string_view(o["handler"].get_string()), "src/main.py");
    EXPECT_EQ(std::string_view(o["bundle"]["digest"].get_string()), std::string(64, 'e'));
    EXPECT_EQ(int64_t(o["bundle"]["size_bytes"].get_int64()), 2048);
    EXPECT_EQ(int64_t(o["bundle"]["files"].get_int64()), 7);
  }
  auto doc = ParseJson(FunctionDetailJson(Record(), {v}, &v));
  EXPECT_EQ(std::string_view(doc->root["versions"].at(0)["egress"].at(0).get_string()),
            "api.open-meteo.com");
}

TEST(Views, VersionCarriesTheFunctionsMcpFlag) {
  VersionRecord v;
  v.function_id = "f";
  v.version = "1.0";
  v.input_schema_json = R"({"type":"object"})";
  v.examples_json = "[]";
  for (bool mcp : {true, false}) {
    std::string json = VersionDetailJson(v, mcp);
    auto doc = ParseJson(json);
    ASSERT_TRUE(doc.ok()) << json;
    EXPECT_EQ(bool(doc->root["mcp"].get_bool()), mcp) << json;
  }
  // Only the version answer has it at that place; the detail keeps its own function-level flag.
  auto detail = ParseJson(FunctionDetailJson(Record(), {v}, &v));
  ASSERT_TRUE(detail.ok());
  EXPECT_FALSE(bool(detail->root["mcp"].get_bool()));
}

TEST(Views, WorkspaceSummaries) {
  FunctionSummary s;
  s.function_id = "f";
  s.org_id = "o";
  s.org_name = "Acme";
  s.visibility = "private";
  std::string json = WorkspaceJson({s}, {});
  EXPECT_EQ(json, R"({"owned":[{"function_id":"f","name":"","description":"","organization":)"
                  R"({"id":"o","name":"Acme"},"latest_version":null,"runtime":null,)"
                  R"("compute_type":null,"price_micro_usd":0,"visibility":"private","mcp":false}],)"
                  R"("added":[]})");
}

}  // namespace
}  // namespace toolgate::registry

namespace toolgate::registry {
namespace {

// The detail shows what a call on "latest" costs, each version's own price, and the function's
// price as the default of the next version.
TEST(Views, DetailPricesAreTheVersions) {
  VersionRecord latest;
  latest.version = "2.0";
  latest.input_schema_json = "{}";
  latest.examples_json = "[]";
  latest.price_micro_usd = 40'000'000;
  VersionRecord older;
  older.version = "1.0.0";
  older.price_micro_usd = 0;
  FunctionRecord f = Record();
  f.price_micro_usd = 50'000'000;
  std::string json = FunctionDetailJson(f, {latest, older}, &latest);
  auto doc = ParseJson(json);
  ASSERT_TRUE(doc.ok()) << json;
  simdjson::dom::object o = doc->root.get_object();
  EXPECT_EQ(int64_t(o["price_micro_usd"].get_int64()), 40'000'000);
  EXPECT_EQ(int64_t(o["default_price_micro_usd"].get_int64()), 50'000'000);
  EXPECT_EQ(int64_t(o["versions"].at(1)["price_micro_usd"].get_int64()), 0);
  // Without a version, the price a first version would get.
  auto bare = ParseJson(FunctionDetailJson(f, {}, nullptr));
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(int64_t(bare->root["price_micro_usd"].get_int64()), 50'000'000);
}

TEST(FunctionDetailJson, LastSevenDaysGiveTheSuccessRateAndTheMedianLatency) {
  WeekStats stats;
  stats.executions = 3;
  stats.succeeded = 2;
  stats.latency[2] = 2;  // [2, 4) ms
  stats.latency[9] = 1;  // [256, 512) ms
  auto doc = ParseJson(FunctionDetailJson(Record(), {}, nullptr, &stats));
  ASSERT_TRUE(doc.ok());
  simdjson::dom::element week = doc->root["last_7_days"];
  EXPECT_EQ(int64_t(week["executions"].get_int64()), 3);
  EXPECT_EQ(ToJson(week["success_rate"]), "0.666");  // rounded down: never 1.000 with a failure
  EXPECT_EQ(int64_t(week["p50_ms"].get_int64()), 4);
  WeekStats none;
  auto quiet = ParseJson(FunctionDetailJson(Record(), {}, nullptr, &none));
  ASSERT_TRUE(quiet.ok());
  EXPECT_EQ(ToJson(quiet->root["last_7_days"]),
            R"({"executions":0,"success_rate":null,"p50_ms":null})");
}

}  // namespace
}  // namespace toolgate::registry
