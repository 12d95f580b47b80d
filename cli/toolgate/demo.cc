#include "demo.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "commands.h"
#include "demo/catalogue.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/http_client/http_client.h"

namespace fs = std::filesystem;

namespace toolgate::cli {
namespace {

struct DemoState {
  std::string api_key;
  std::string email, password;  // the demo organization's login for the web app
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

Result<http::HttpResponse> Expect(Result<http::HttpResponse> r, int status,
                                  const std::string& what) {
  if (!r.ok()) return r.status();
  if (r->status != status) {
    return Status::Internal(what + ": HTTP " + std::to_string(r->status) + " " + r->body);
  }
  return r;
}

// Signs up the organization's user with password; the client keeps the session cookie.
Result<std::unique_ptr<http::HttpClient>> SignUp(const std::string& base_url,
                                                 const DemoOrganization& org,
                                                 const std::string& password) {
  auto client = std::make_unique<http::HttpClient>(base_url);
  // The edge refuses cookie-signed changes without it (cross-site requests).
  client->SetDefaultHeader("X-Toolgate-CSRF", "1");
  JsonWriter body;
  body.BeginObject()
      .Field("email", org.email)
      .Field("password", password)
      .Field("organization", org.organization)
      .EndObject();
  auto signed_up = Expect(client->Post("/api/v1/auth/signup", body.Take()), 201,
                          "sign up " + std::string(org.organization));
  if (!signed_up.ok()) return signed_up.status();
  return client;
}

// Publishes tool as `toolgate publish` does: the same request bodies from the same manifest.
Result<std::string> Publish(http::HttpClient& client, const DemoTool& tool) {
  const std::string& name = tool.manifest.name;
  auto created = Expect(client.Post("/api/v1/functions", FunctionRequestBody(tool.manifest)), 201,
                        "create function " + name);
  if (!created.ok()) return created.status();
  auto id = Field(*created, "function_id");
  if (!id.ok()) return id;
  auto published = Expect(client.Post("/api/v1/functions/" + *id + "/versions",
                                      VersionRequestBody(tool.manifest, tool.code, tool.bundle)),
                          201, "publish " + name);
  if (!published.ok()) return published.status();
  return id;
}

// A tool once published, with what its callers do with it.
struct Published {
  const DemoTool* tool;
  std::string id;
  bool needs_weather_key = false;
};

// One demo caller: adds the tools it uses, runs them, and later rates them.
class Caller {
 public:
  Caller(size_t index, std::unique_ptr<http::HttpClient> session, std::string key,
         std::string secret_id)
      : index_(index),
        session_(std::move(session)),
        key_(std::move(key)),
        secret_id_(std::move(secret_id)) {}

  // Adds function_id to the organization's workspace, once.
  Status Add(const std::string& function_id) {
    if (!added_.insert(function_id).second) return Status::Ok();
    auto added = Expect(
        session_->Post("/api/v1/workspace/tools", R"({"function_id":")" + function_id + R"("})"),
        201, "add to workspace");
    return added.status();
  }

  // Adds and runs every tool it runs; each run must succeed.
  Status Run(const std::vector<Published>& tools) {
    for (const auto& p : tools) {
      int runs = Runs(p);
      if (runs == 0) continue;
      if (Status s = Add(p.id); !s.ok()) return s;
      http::HeaderList headers = {{"Authorization", key_}};
      if (p.needs_weather_key) headers.emplace_back("X-Env-Keys", "WEATHER_API_KEY=" + secret_id_);
      for (int i = 0; i < runs; ++i) {
        auto ran = Expect(session_->Post("/api/v1/functions/" + p.id + "/invoke",
                                         R"({"event":)" + p.tool->example + "}", headers),
                          200, "run " + p.tool->manifest.name);
        if (!ran.ok()) return ran.status();
      }
    }
    return Status::Ok();
  }

  // Rates what it ran and has an opinion of.
  Status Rate(const std::vector<Published>& tools) {
    for (const auto& p : tools) {
      if (Runs(p) == 0 || index_ >= p.tool->ratings.size()) continue;
      const DemoRating& r = p.tool->ratings[index_];
      if (r.stars == 0) continue;
      JsonWriter body;
      body.BeginObject().Field("stars", r.stars).Field("review", r.review).EndObject();
      auto rated = Expect(session_->Put("/api/v1/functions/" + p.id + "/rating", body.Take()), 201,
                          "rate " + p.tool->manifest.name);
      if (!rated.ok()) return rated.status();
    }
    return Status::Ok();
  }

  int Runs(const Published& p) const {
    return index_ < p.tool->runs.size() ? p.tool->runs[index_] : 0;
  }

 private:
  size_t index_;
  std::unique_ptr<http::HttpClient> session_;
  std::string key_;
  std::string secret_id_;  // mapped to the sample Forecast's WEATHER_API_KEY
  std::set<std::string> added_;
};

// Waits until the registry has counted every run (it learns of them from billing's execution
// events, a moment after each call answers): ratings require a recorded run.
Status WaitForRecordedRuns(http::HttpClient& client, const std::vector<Published>& tools,
                           const std::vector<Caller>& callers) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (const auto& p : tools) {
    int64_t expected = 0;
    for (const auto& c : callers) expected += c.Runs(p);
    if (expected == 0) continue;
    while (true) {
      auto detail = Expect(client.Get("/api/v1/functions/" + p.id), 200, "read function");
      if (!detail.ok()) return detail.status();
      auto doc = ParseJson(detail->body);
      int64_t executions = 0;
      if (doc.ok() && doc->root["executions"].get_int64().get(executions) == simdjson::SUCCESS &&
          executions >= expected) {
        break;
      }
      if (std::chrono::steady_clock::now() > deadline) {
        return Status::Timeout("the registry did not record the demo runs of " +
                               p.tool->manifest.name);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  return Status::Ok();
}

Result<std::string> CreateKey(http::HttpClient& session, std::string_view scopes_json) {
  auto key = Expect(session.Post("/api/v1/api-keys",
                                 R"({"name":"demo","scopes":)" + std::string(scopes_json) + "}"),
                    201, "create key");
  if (!key.ok()) return key.status();
  return Field(*key, "key");
}

Result<DemoState> SeedFresh(const std::string& base_url, const DemoServices& services) {
  DemoState st;
  std::vector<std::unique_ptr<http::HttpClient>> publishers;
  for (const auto& org : DemoPublishers()) {
    auto client = SignUp(base_url, org, HexEncode(RandomBytes(12)));
    if (!client.ok()) return client.status();
    publishers.push_back(std::move(client).value());
  }

  static const Result<std::vector<DemoTool>> catalogue = LoadDemoCatalogue();
  if (!catalogue.ok()) return catalogue.status();
  // The three samples first, in the order their curl lines are printed, then the rest.
  std::vector<const DemoTool*> order;
  for (const char* sample : {"echo", "mcp", "forecast"}) {
    for (const DemoTool& tool : *catalogue) {
      if (tool.sample == sample) order.push_back(&tool);
    }
  }
  if (order.size() != 3) return Status::Internal("demo catalogue: the three samples are missing");
  for (const DemoTool& tool : *catalogue) {
    if (tool.sample.empty()) order.push_back(&tool);
  }
  std::vector<Published> published;
  for (const DemoTool* tool : order) {
    auto id = Publish(*publishers[tool->publisher], BindDemoServices(*tool, services));
    if (!id.ok()) return id.status();
    const auto& keys = tool->manifest.declared_keys;
    bool weather = keys && std::find(keys->begin(), keys->end(), "WEATHER_API_KEY") != keys->end();
    published.push_back(Published{tool, *id, weather});
  }
  st.echo_id = published[0].id;
  st.mcp_id = published[1].id;
  st.forecast_id = published[2].id;

  std::vector<Caller> callers;
  for (size_t i = 0; i < DemoCallers().size(); ++i) {
    const std::string password = HexEncode(RandomBytes(12));
    auto session = SignUp(base_url, DemoCallers()[i], password);
    if (!session.ok()) return session.status();
    http::HttpClient& s = **session;
    const bool demo = i == 0;
    auto topped =
        Expect(s.Post("/api/v1/billing/top-ups", demo ? R"({"amount_micro_usd":10000000})"
                                                      : R"({"amount_micro_usd":25000000})"),
               201, "top up");
    if (!topped.ok()) return topped.status();
    auto key = CreateKey(s, demo ? R"(["invoke","manage"])" : R"(["invoke"])");
    if (!key.ok()) return key.status();
    std::string secret_id;
    if (demo) {
      auto secret = Expect(s.Post("/api/v1/secrets", R"({"name":"weather","value":"demo-)" +
                                                         HexEncode(RandomBytes(8)) + R"("})"),
                           201, "create secret");
      if (!secret.ok()) return secret.status();
      auto id = Field(*secret, "id");
      if (!id.ok()) return id.status();
      secret_id = st.secret_id = *id;
      st.api_key = *key;
      st.email = std::string(DemoCallers()[i].email);
      st.password = password;
    }
    Caller& caller = callers.emplace_back(i, std::move(session).value(), *key, secret_id);
    if (demo) {
      // The demo organization has the samples in its workspace, whether it runs them or not.
      for (const auto& id : {st.echo_id, st.mcp_id, st.forecast_id}) {
        if (Status added = caller.Add(id); !added.ok()) return added;
      }
    }
    if (Status ran = caller.Run(published); !ran.ok()) return ran;
  }
  if (Status s = WaitForRecordedRuns(*publishers[0], published, callers); !s.ok()) return s;
  for (auto& c : callers) {
    if (Status s = c.Rate(published); !s.ok()) return s;
  }
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
      .Field("email", st.email)
      .Field("password", st.password)
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
  // A demo seeded before logins were kept has none to print.
  GetString(obj, "email", &st.email);
  GetString(obj, "password", &st.password);
  return st;
}

// The organization's available balance as "$9.98" ("unknown" when it cannot be read).
std::string AvailableDollars(const std::string& base_url, const std::string& api_key) {
  http::HttpClient client(base_url);
  auto r = client.Get("/api/v1/billing/balance", {{"Authorization", api_key}});
  auto doc = r.ok() && r->status == 200 ? ParseJson(r->body) : Result<ParsedJson>(r.status());
  int64_t micro = 0;
  if (!doc.ok() || doc->root["available_micro_usd"].get_int64().get(micro) != simdjson::SUCCESS) {
    return "unknown";
  }
  const int64_t cents = micro / 10'000;
  char text[32];
  std::snprintf(text, sizeof(text), "$%lld.%02lld", static_cast<long long>(cents / 100),
                static_cast<long long>(cents % 100));
  return text;
}

}  // namespace

Status SeedDemo(const std::string& base_url, const fs::path& data_dir,
                const DemoServices& services) {
  fs::path file = data_dir / "run" / "demo.json";
  Result<DemoState> st = fs::exists(file) ? Load(file) : SeedFresh(base_url, services);
  if (!st.ok()) return st.status();
  Save(file, *st);
  const std::string invoke = base_url + "/api/v1/functions/";
  std::printf(
      "\nDemo organization ready (available balance %s). API key (keep it secret):\n  %s\n\n"
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
      AvailableDollars(base_url, st->api_key).c_str(), st->api_key.c_str(), invoke.c_str(),
      st->echo_id.c_str(), st->api_key.c_str(), invoke.c_str(), st->mcp_id.c_str(),
      st->api_key.c_str(), invoke.c_str(), st->forecast_id.c_str(), st->api_key.c_str(),
      st->secret_id.c_str());
  std::printf(
      "Forecast calls the demo's weather service at http://%s through the egress gateway. For\n"
      "that demo only, the executors run with --egress-allow-endpoint %s (the platform's\n"
      "own ports stay refused); never open the host's own ports on a production system.\n\n",
      services.weather.c_str(), services.weather.c_str());
  if (!st->password.empty()) {
    std::printf("Web app: %s/  sign in as %s with the password %s (kept in %s)\n\n",
                base_url.c_str(), st->email.c_str(), st->password.c_str(), file.c_str());
  }
  return Status::Ok();
}

}  // namespace toolgate::cli
