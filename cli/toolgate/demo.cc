#include "demo.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "DemoEchoLua.h"
#include "DemoForecastLua.h"
#include "DemoMcpLua.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/http_client/http_client.h"

namespace fs = std::filesystem;

namespace toolgate::cli {
namespace {

struct DemoState {
  std::string api_key;
  std::string echo_id, mcp_id, forecast_id;
  std::string secret_id;
};

Result<std::string> Field(const http::HttpResponse& r, const char* name) {
  auto doc = ParseJson(r.body);
  std::string value;
  simdjson::dom::object obj;
  if (!doc.ok() || doc->root.get_object().get(obj) || GetString(obj, name, &value) != Field::kOk) {
    return Status::Internal(std::string("unexpected answer without ") + name + ": " + r.body);
  }
  return value;
}

Result<http::HttpResponse> Expect(Result<http::HttpResponse> r, int status, const char* what) {
  if (!r.ok()) return r.status();
  if (r->status != status) {
    return Status::Internal(std::string(what) + ": HTTP " + std::to_string(r->status) + " " +
                            r->body);
  }
  return r;
}

Result<std::string> Publish(http::HttpClient& client, std::string_view name,
                            std::string_view description, std::string_view category,
                            int64_t price, bool mcp, std::string_view code,
                            const std::vector<std::string>& keys, std::string_view example) {
  JsonWriter f;
  f.BeginObject()
      .Field("name", name)
      .Field("description", description)
      .Field("category", category)
      .Field("sector", "Developer tools")
      .Field("visibility", "public")
      .Field("price_micro_usd", price)
      .Field("mcp", mcp);
  f.Key("tags").BeginArray().String("sample").String("lua").EndArray().EndObject();
  auto created = Expect(client.Post("/api/v1/functions", f.Take()), 201, "create function");
  if (!created.ok()) return created.status();
  auto id = Field(*created, "function_id");
  if (!id.ok()) return id;
  JsonWriter v;
  v.BeginObject()
      .Field("version", "1.0.0")
      .Field("runtime", "lua")
      .Field("compute_type", "CPU")
      .Field("code", code)
      .Key("input_schema")
      .Raw(R"({"type":"object"})")
      .Field("timeout_ms", 5000);
  v.Key("declared_keys").BeginArray();
  for (const auto& k : keys) v.String(k);
  v.EndArray();
  v.Key("examples").BeginArray().BeginObject().Field("title", "Example").Key("event").Raw(example);
  v.EndObject().EndArray().EndObject();
  auto published = Expect(client.Post("/api/v1/functions/" + *id + "/versions", v.Take()), 201,
                          "publish version");
  if (!published.ok()) return published.status();
  return id;
}

Result<DemoState> SeedFresh(const std::string& base_url) {
  DemoState st;
  http::HttpClient publisher(base_url);
  std::string password = HexEncode(RandomBytes(12));
  auto signup = Expect(
      publisher.Post("/api/v1/auth/signup",
                     R"({"email":"samples@toolgate.local","password":")" + password +
                         R"(","organization":"Toolgate Samples"})"),
      201, "publisher signup");
  if (!signup.ok()) return signup.status();
  auto echo = Publish(publisher, "Echo", "Answers with the event it was given.", "Utilities", 0,
                      false, DemoEchoLua(), {}, R"({"hello":"world"})");
  if (!echo.ok()) return echo.status();
  auto mcp = Publish(publisher, "Sample MCP server", "An MCP tool server with add and reverse.",
                     "AI agents", 0, true, DemoMcpLua(), {},
                     R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}})");
  if (!mcp.ok()) return mcp.status();
  auto forecast = Publish(publisher, "Forecast", "A priced tool that needs WEATHER_API_KEY.",
                          "Data", 2500, false, DemoForecastLua(), {"WEATHER_API_KEY"},
                          R"({"city":"Lisbon"})");
  if (!forecast.ok()) return forecast.status();
  st.echo_id = *echo;
  st.mcp_id = *mcp;
  st.forecast_id = *forecast;

  http::HttpClient demo(base_url);
  auto signed_up = Expect(demo.Post("/api/v1/auth/signup",
                                    R"({"email":"demo@toolgate.local","password":")" +
                                        HexEncode(RandomBytes(12)) +
                                        R"(","organization":"Demo"})"),
                          201, "demo signup");
  if (!signed_up.ok()) return signed_up.status();
  for (const auto& id : {st.echo_id, st.mcp_id, st.forecast_id}) {
    auto added = Expect(demo.Post("/api/v1/workspace/tools", R"({"function_id":")" + id + R"("})"),
                        201, "add to workspace");
    if (!added.ok()) return added.status();
  }
  auto topped = Expect(demo.Post("/api/v1/billing/top-ups", R"({"amount_micro_usd":10000000})"),
                       201, "top up");
  if (!topped.ok()) return topped.status();
  auto secret = Expect(demo.Post("/api/v1/secrets",
                                 R"({"name":"weather","value":"demo-)" +
                                     HexEncode(RandomBytes(8)) + R"("})"),
                       201, "create secret");
  if (!secret.ok()) return secret.status();
  auto secret_id = Field(*secret, "id");
  if (!secret_id.ok()) return secret_id.status();
  st.secret_id = *secret_id;
  auto key = Expect(demo.Post("/api/v1/api-keys", R"({"name":"demo","scopes":["invoke","manage"]})"),
                    201, "create key");
  if (!key.ok()) return key.status();
  auto key_value = Field(*key, "key");
  if (!key_value.ok()) return key_value.status();
  st.api_key = *key_value;
  return st;
}

void Save(const fs::path& file, const DemoState& st) {
  JsonWriter w;
  w.BeginObject()
      .Field("api_key", st.api_key)
      .Field("echo_id", st.echo_id)
      .Field("mcp_id", st.mcp_id)
      .Field("forecast_id", st.forecast_id)
      .Field("secret_id", st.secret_id)
      .EndObject();
  std::ofstream out(file, std::ios::trunc);
  out << w.str() << "\n";
  out.close();
  ::chmod(file.c_str(), 0600);
}

Result<DemoState> Load(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  auto doc = ParseJson(ss.str());
  simdjson::dom::object obj;
  DemoState st;
  if (!doc.ok() || doc->root.get_object().get(obj) ||
      GetString(obj, "api_key", &st.api_key) != Field::kOk ||
      GetString(obj, "echo_id", &st.echo_id) != Field::kOk ||
      GetString(obj, "mcp_id", &st.mcp_id) != Field::kOk ||
      GetString(obj, "forecast_id", &st.forecast_id) != Field::kOk ||
      GetString(obj, "secret_id", &st.secret_id) != Field::kOk) {
    return Status::Internal("unreadable " + file.string());
  }
  return st;
}

}  // namespace

Status SeedDemo(const std::string& base_url, const fs::path& data_dir) {
  fs::path file = data_dir / "run" / "demo.json";
  Result<DemoState> st = fs::exists(file) ? Load(file) : SeedFresh(base_url);
  if (!st.ok()) return st.status();
  Save(file, *st);
  const std::string invoke = base_url + "/api/v1/functions/";
  std::printf(
      "\nDemo organization ready (balance $10). API key (keep it secret):\n  %s\n\n"
      "Try it:\n"
      "  curl -s -X POST %s%s/invoke -H 'Authorization: %s' -H 'Content-Type: application/json' "
      "-d '{\"event\":{\"hello\":\"world\"}}'\n\n"
      "MCP tool (JSON-RPC in the event):\n"
      "  curl -s -X POST %s%s/1.0.0/invoke -H 'Authorization: %s' "
      "-d '{\"event\":{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
      "\"params\":{\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":3}}}}'\n\n"
      "Priced tool with a declared key mapped to your secret:\n"
      "  curl -s -X POST %s%s/invoke -H 'Authorization: %s' "
      "-H 'X-Env-Keys: WEATHER_API_KEY=%s' -d '{\"event\":{\"city\":\"Lisbon\"}}'\n\n",
      st->api_key.c_str(), invoke.c_str(), st->echo_id.c_str(), st->api_key.c_str(),
      invoke.c_str(), st->mcp_id.c_str(), st->api_key.c_str(), invoke.c_str(),
      st->forecast_id.c_str(), st->api_key.c_str(), st->secret_id.c_str());
  return Status::Ok();
}

}  // namespace toolgate::cli
