// Contract section 3, row by row, against a real system.
#include <gtest/gtest.h>

#include <string>

#include "system.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/time.h"

namespace toolgate::testing {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem());

constexpr const char* kEcho = "function service_handler(event, context) return event end";
constexpr const char* kContext =
    "function service_handler(event, context)\n"
    "  return {version = context.version, function_id = context.function_id,\n"
    "          caller = context.caller_org_id, env = context.env,\n"
    "          getenv = os.getenv('API_TOKEN'), has_deadline = context.deadline_ms > 0}\n"
    "end";
constexpr const char* kStatus =
    "function service_handler(event, context)\n"
    "  return {statusCode = event.code, body = event.body}\n"
    "end";
constexpr const char* kBoom = "function service_handler(event, context) error('boom') end";
constexpr const char* kLoop = "function service_handler(event, context) while true do end end";

std::string Code(const http::HttpResponse& r) {
  return StringField(r.body, "code");
}

// One organization that owns tools, and one that calls them; both funded.
class InvokeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    owner_ = new Account(*g_system, "Owner Org");
    caller_ = new Account(*g_system, "Caller Org");
    owner_->TopUp(100'000'000);
    caller_->TopUp(100'000'000);
    owner_key_ = owner_->CreateKey();
    caller_key_ = caller_->CreateKey();
    echo_ = owner_->CreateFunction("echo");
    ASSERT_EQ(owner_->PublishLua(echo_, "1.0.0", kEcho).status, 201);
  }
  static void TearDownTestSuite() {
    delete owner_;
    delete caller_;
  }
  static Account* owner_;
  static Account* caller_;
  static std::string owner_key_, caller_key_, echo_;
};
Account* InvokeTest::owner_ = nullptr;
Account* InvokeTest::caller_ = nullptr;
std::string InvokeTest::owner_key_, InvokeTest::caller_key_, InvokeTest::echo_;

TEST_F(InvokeTest, EchoReturnsEnvelopeSummaryAndTrace) {
  const std::string trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  const int64_t sent_us = MonotonicUs();
  auto r = Invoke(*g_system, owner_key_, echo_, "1.0.0", R"({"event": {"b": 1.50, "a": [1, 2]}})",
                  {{"traceparent", "00-" + trace_id + "-00f067aa0ba902b7-01"}});
  const int64_t round_trip_ms = (MonotonicUs() - sent_us + 999) / 1000;  // rounded up
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("content-type"), "application/json");
  EXPECT_FALSE(r.Header("x-request-id").empty());
  // The incoming trace is continued, not replaced.
  EXPECT_EQ(r.Header("traceparent").substr(0, 36), "00-" + trace_id + "-");
  auto doc = Json(r.body);
  EXPECT_EQ(int64_t(doc.root["statusCode"]), 200);
  // Lua tables keep no key order: compare the echoed event by value.
  auto echoed = Json(std::string(std::string_view(doc.root["body"])));
  EXPECT_EQ(double(echoed.root["b"]), 1.5);
  EXPECT_EQ(ToJson(echoed.root["a"]), "[1,2]");
  auto summary = doc.root["summary"];
  // The handler's time, in milliseconds: within the call's round trip as the client saw it.
  EXPECT_LE(int64_t(summary["runtime_ms"]), round_trip_ms);
  EXPECT_GE(int64_t(summary["memory_used_mb"]), 1);
  EXPECT_EQ(std::string_view(summary["compute_type"]), "CPU");
  EXPECT_TRUE(IsUuid(std::string_view(summary["execution_id"])));
  EXPECT_GE(int64_t(summary["cost"]["compute_micro_usd"]), 1);
  EXPECT_EQ(int64_t(summary["cost"]["function_micro_usd"]), 0);
  EXPECT_EQ(int64_t(summary["cost"]["total_micro_usd"]),
            int64_t(summary["cost"]["compute_micro_usd"]));
  // The charge is in a header too, for callers that read no body.
  EXPECT_EQ(r.Header("x-toolgate-cost"),
            std::to_string(int64_t(summary["cost"]["total_micro_usd"])));
}

TEST_F(InvokeTest, ARefusedCallSaysItCostNothing) {
  auto r = Invoke(*g_system, owner_key_, echo_, "9.9.9", R"({"event": {}})");
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(r.Header("x-toolgate-cost"), "0");
}

TEST_F(InvokeTest, LatestPathAndBearerForm) {
  auto r = Invoke(*g_system, "Bearer " + owner_key_, echo_, "", R"({"event": {"x": 1}})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(StringField(r.body, "body"), R"({"x":1})");
}

TEST_F(InvokeTest, StringEventPassedUnchanged) {
  auto r = Invoke(*g_system, owner_key_, echo_, "1.0.0", R"({"event": "{\"jsonrpc\":\"2.0\"}"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(StringField(r.body, "body"), R"("{\"jsonrpc\":\"2.0\"}")");
}

TEST_F(InvokeTest, LatestPicksOneTenOverOneNine) {
  std::string fn = owner_->CreateFunction("versions");
  ASSERT_EQ(owner_->PublishLua(fn, "1.9", kContext).status, 201);
  ASSERT_EQ(owner_->PublishLua(fn, "1.10", kContext).status, 201);
  ASSERT_EQ(owner_->PublishLua(fn, "1.2.3", kContext).status, 201);
  auto r = Invoke(*g_system, owner_key_, fn, "", R"({"event": {}})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto body = Json(StringField(r.body, "body"));
  EXPECT_EQ(std::string_view(body.root["version"]), "1.10");
  EXPECT_EQ(std::string_view(body.root["function_id"]), fn);
  EXPECT_EQ(std::string_view(body.root["caller"]), owner_->org_id());
  EXPECT_TRUE(bool(body.root["has_deadline"]));
  // An equal version cannot be published twice, nor can the same one.
  EXPECT_EQ(owner_->PublishLua(fn, "1.10.0", kEcho).status, 409);
  EXPECT_EQ(owner_->PublishLua(fn, "1.9", kEcho).status, 409);
  // A named version is routed exactly.
  r = Invoke(*g_system, owner_key_, fn, "1.9", R"({"event": {}})");
  EXPECT_EQ(std::string_view(Json(StringField(r.body, "body")).root["version"]), "1.9");
}

TEST_F(InvokeTest, HandlerStatusCodesAndErrors) {
  std::string fn = owner_->CreateFunction("status");
  ASSERT_EQ(owner_->PublishLua(fn, "1", kStatus).status, 201);
  auto r = Invoke(*g_system, owner_key_, fn, "1", R"({"event": {"code": 201, "body": "made"}})");
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(StringField(r.body, "body"), "made");
  EXPECT_EQ(IntField(r.body, "statusCode"), 201);
  r = Invoke(*g_system, owner_key_, fn, "1", R"({"event": {"code": 404, "body": {"k": 1}}})");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(StringField(r.body, "body"), R"({"k":1})");
  r = Invoke(*g_system, owner_key_, fn, "1", R"({"event": {"code": 700}})");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(StringField(StringField(r.body, "body"), "errorType"), "InvalidStatusCode");

  std::string boom = owner_->CreateFunction("boom");
  ASSERT_EQ(owner_->PublishLua(boom, "1", kBoom).status, 201);
  r = Invoke(*g_system, owner_key_, boom, "1", R"({"event": {}})");
  EXPECT_EQ(r.status, 500);
  std::string body = StringField(r.body, "body");
  EXPECT_FALSE(StringField(body, "errorType").empty()) << body;
  EXPECT_NE(StringField(body, "errorMessage").find("boom"), std::string::npos) << body;
  // A handler that threw is charged (contract section 4).
  EXPECT_GE(int64_t(Json(r.body).root["summary"]["cost"]["total_micro_usd"]), 1);
}

TEST_F(InvokeTest, Row1BodyTooLargeComesFirst) {
  std::string big = R"({"event": {"x": ")" + std::string(6 * 1024 * 1024, 'a') + "\"}}";
  auto r = Invoke(*g_system, "", echo_, "1.0.0", big);
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(r.Header("content-type"), "application/problem+json");
  EXPECT_EQ(Code(r), "payload_too_large");
}

TEST_F(InvokeTest, Row2Authentication) {
  auto r = Invoke(*g_system, "", echo_, "1.0.0", R"({"event": {}})");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(Code(r), "missing_api_key");
  auto doc = Json(r.body);
  EXPECT_EQ(std::string_view(doc.root["type"]), "urn:toolgate:error:missing_api_key");
  EXPECT_EQ(int64_t(doc.root["status"]), 401);
  EXPECT_FALSE(std::string_view(doc.root["request_id"]).empty());
  EXPECT_FALSE(std::string_view(doc.root["detail"]).empty());

  // An invalid key answers 401 even for a function that does not exist (row 2 before row 3).
  r = Invoke(*g_system, "tg_not_a_real_key", NewUuid(), "", R"({"event": {}})");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(Code(r), "invalid_api_key");

  // A manage-only key cannot invoke.
  std::string manage_only = owner_->CreateKey(R"(["manage"])");
  r = Invoke(*g_system, manage_only, echo_, "1.0.0", R"({"event": {}})");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(Code(r), "insufficient_scope");
}

TEST_F(InvokeTest, Row2RevokedKeyRejectedWithinASecond) {
  auto created = owner_->session().Post("/api/v1/api-keys", R"({"name":"soon revoked"})");
  ASSERT_TRUE(created.ok());
  ASSERT_EQ(created->status, 201);
  std::string key = StringField(created->body, "key");
  std::string id = StringField(created->body, "id");
  ASSERT_EQ(Invoke(*g_system, key, echo_, "1.0.0", R"({"event": {}})").status, 200);
  auto deleted = owner_->session().Delete("/api/v1/api-keys/" + id);
  ASSERT_TRUE(deleted.ok());
  ASSERT_EQ(deleted->status, 204);
  http::HttpResponse r;
  EXPECT_TRUE(WaitUntil(
      [&] {
        r = Invoke(*g_system, key, echo_, "1.0.0", R"({"event": {}})");
        return r.status != 200;
      },
      1000, "the revoked key to be refused", 0));
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(Code(r), "api_key_revoked");
}

TEST_F(InvokeTest, AnExpiringKeyIsFlaggedOnRefusalsToo) {
  // An organization with no balance: billing refuses the call with 402.
  Account broke(*g_system, "Broke");
  std::string expires = FormatRfc3339(NowMs() + 3LL * 24 * 3600 * 1000);
  std::string key = broke.CreateKey(R"(["invoke"])", expires);
  std::string fn = broke.CreateFunction("echo");
  ASSERT_EQ(broke.PublishLua(fn, "1", "function service_handler(e, c) return e end").status, 201);
  auto r = Invoke(*g_system, key, fn, "1", R"({"event": {}})");
  EXPECT_EQ(r.status, 402) << r.body;
  EXPECT_EQ(r.Header("x-api-key-expires-at"), expires);
  // And from the registry's refusals (404 for an unknown version).
  r = Invoke(*g_system, key, fn, "9", R"({"event": {}})");
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(r.Header("x-api-key-expires-at"), expires);
  // And from auth's: a key without the invoke scope.
  std::string manage_only = broke.CreateKey(R"(["manage"])", expires);
  r = Invoke(*g_system, manage_only, fn, "1", R"({"event": {}})");
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(r.Header("x-api-key-expires-at"), expires);
}

TEST_F(InvokeTest, Row2KeyExpiringTwoSecondsAfterCreation) {
  std::string expires = FormatRfc3339(NowMs() + 2000);
  std::string key = owner_->CreateKey(R"(["invoke"])", expires);
  ASSERT_FALSE(key.empty());
  auto r = Invoke(*g_system, key, echo_, "1.0.0", R"({"event": {}})");
  ASSERT_EQ(r.status, 200) << r.body;
  // A key this close to expiry is flagged on every response.
  EXPECT_EQ(r.Header("x-api-key-expires-at"), expires);
  EXPECT_TRUE(WaitUntil(
      [&] {
        r = Invoke(*g_system, key, echo_, "1.0.0", R"({"event": {}})");
        return r.status != 200;
      },
      10000, "the expired key to be refused", 0));
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(Code(r), "api_key_expired");
}

TEST_F(InvokeTest, Row3NotFound) {
  auto r = Invoke(*g_system, owner_key_, NewUuid(), "", R"({"event": {}})");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Code(r), "function_not_found");
  r = Invoke(*g_system, owner_key_, "not-a-uuid", "", R"({"event": {}})");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Code(r), "function_not_found");
  r = Invoke(*g_system, owner_key_, echo_, "9.9.9", R"({"event": {}})");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Code(r), "version_not_found");
  // "1.0" equals "1.0.0" numerically but the path must name a published string exactly.
  r = Invoke(*g_system, owner_key_, echo_, "1.0", R"({"event": {}})");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Code(r), "version_not_found");
  std::string unpublished = owner_->CreateFunction("no versions");
  r = Invoke(*g_system, owner_key_, unpublished, "", R"({"event": {}})");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Code(r), "version_not_found");
  // A private function of another organization does not leak its existence, even with a bad
  // body (row 3 before row 5).
  r = Invoke(*g_system, caller_key_, echo_, "1.0.0", "not json");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Code(r), "function_not_found");
}

TEST_F(InvokeTest, Row4PublicFunctionMustBeAdded) {
  std::string fn = owner_->CreateFunction("public echo", R"("visibility":"public")");
  ASSERT_EQ(owner_->PublishLua(fn, "1.0", kEcho).status, 201);
  auto r = Invoke(*g_system, caller_key_, fn, "", "not json");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(Code(r), "function_not_added");
  EXPECT_NE(StringField(r.body, "detail").find("workspace"), std::string::npos);
  caller_->AddToWorkspace(fn);
  r = Invoke(*g_system, caller_key_, fn, "", R"({"event": {"ok": true}})");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(StringField(r.body, "body"), R"({"ok":true})");
}

TEST_F(InvokeTest, Row5MalformedBodies) {
  struct Case {
    const char* body;
    const char* code;
  } cases[] = {{"not json", "invalid_json"},        {"{\"event\": {}", "invalid_json"},
               {"[1, 2]", "missing_event"},         {"{\"evnt\": {}}", "missing_event"},
               {"{\"event\": 5}", "invalid_event"}, {"{\"event\": null}", "invalid_event"}};
  for (const auto& c : cases) {
    auto r = Invoke(*g_system, owner_key_, echo_, "1.0.0", c.body);
    EXPECT_EQ(r.status, 400) << c.body;
    EXPECT_EQ(Code(r), c.code) << c.body;
  }
}

TEST_F(InvokeTest, Row6EnvKeys) {
  std::string fn = owner_->CreateFunction("needs token");
  ASSERT_EQ(owner_->PublishLua(fn, "1", kContext, R"("declared_keys":["API_TOKEN"])").status, 201);
  std::string secret = owner_->CreateSecret("token", "s3cr3t-value");
  std::string foreign = caller_->CreateSecret("token", "not yours");

  auto r = Invoke(*g_system, owner_key_, fn, "1", R"({"event": {}})",
                  {{"X-Env-Keys", " API_TOKEN = " + secret + " "}});
  ASSERT_EQ(r.status, 200) << r.body;
  auto body = Json(StringField(r.body, "body"));
  EXPECT_EQ(std::string_view(body.root["env"]["API_TOKEN"]), "s3cr3t-value");
  EXPECT_EQ(std::string_view(body.root["getenv"]), "s3cr3t-value");

  struct Case {
    std::string header;
    const char* code;
  } cases[] = {{"API_TOKEN", "invalid_env_keys"},
               {"9BAD=" + secret, "invalid_env_keys"},
               {"API_TOKEN=" + secret + ",OTHER=" + secret, "undeclared_env_key"},
               {"API_TOKEN=" + NewUuid(), "unknown_secret"},
               {"API_TOKEN=" + foreign, "unknown_secret"}};
  for (const auto& c : cases) {
    r = Invoke(*g_system, owner_key_, fn, "1", R"({"event": {}})", {{"X-Env-Keys", c.header}});
    EXPECT_EQ(r.status, 400) << c.header;
    EXPECT_EQ(Code(r), c.code) << c.header;
    EXPECT_EQ(r.body.find("s3cr3t"), std::string::npos);
  }
  // A declared key that is not mapped comes before a mapping of an undeclared name.
  for (const std::string& header : {std::string(), "OTHER=" + secret}) {
    r = Invoke(*g_system, owner_key_, fn, "1", R"({"event": {}})",
               header.empty() ? http::HeaderList{} : http::HeaderList{{"X-Env-Keys", header}});
    EXPECT_EQ(r.status, 400) << header;
    EXPECT_EQ(Code(r), "missing_env_key") << header;
  }
  // Row 5 comes before row 6.
  r = Invoke(*g_system, owner_key_, fn, "1", "{}", {{"X-Env-Keys", "garbage"}});
  EXPECT_EQ(Code(r), "missing_event");
  // A version that declares nothing rejects any mapping.
  r = Invoke(*g_system, owner_key_, echo_, "1.0.0", R"({"event": {}})",
             {{"X-Env-Keys", "API_TOKEN=" + secret}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Code(r), "undeclared_env_key");
}

TEST_F(InvokeTest, Row8InsufficientBalanceHoldsNothing) {
  Account poor(*g_system, "Poor Org");
  std::string key = poor.CreateKey();
  std::string fn = poor.CreateFunction("mine");
  ASSERT_EQ(poor.PublishLua(fn, "1", kEcho).status, 201);
  auto r = Invoke(*g_system, key, fn, "1", R"({"event": {}})");
  EXPECT_EQ(r.status, 402);
  EXPECT_EQ(Code(r), "insufficient_balance");
  EXPECT_EQ(poor.Balance(), 0);
  EXPECT_EQ(poor.Available(), 0);
  EXPECT_TRUE(poor.Ledger().empty());
}

TEST_F(InvokeTest, Row9NoCapacityForGpu) {
  std::string fn = owner_->CreateFunction("gpu");
  auto published = owner_->session().Post(
      "/api/v1/functions/" + fn + "/versions",
      R"({"version":"1","runtime":"python","compute_type":"GPU","input_schema":{"type":"object"},)"
      R"("code":"def service_handler(event, context):\n    return event\n"})");
  ASSERT_TRUE(published.ok());
  ASSERT_EQ(published->status, 201) << published->body;
  int64_t before = owner_->Balance();
  // An expiring key is flagged on this answer too, which billing gives from the hold record.
  std::string expires = FormatRfc3339(NowMs() + 3LL * 24 * 3600 * 1000);
  std::string expiring_key = owner_->CreateKey(R"(["invoke"])", expires);
  auto r = Invoke(*g_system, expiring_key, fn, "1", R"({"event": {}})");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(Code(r), "no_capacity");
  EXPECT_EQ(r.Header("x-api-key-expires-at"), expires);
  EXPECT_EQ(owner_->Balance(), before);
  EXPECT_EQ(owner_->Available(), before);  // the hold was released
}

TEST_F(InvokeTest, Row10TimeoutIsNotCharged) {
  std::string fn = owner_->CreateFunction("loop");
  ASSERT_EQ(owner_->PublishLua(fn, "1", kLoop, R"("timeout_ms":200)").status, 201);
  int64_t before = owner_->Balance();
  auto r = Invoke(*g_system, owner_key_, fn, "1", R"({"event": {}})");
  EXPECT_EQ(r.status, 408);
  EXPECT_EQ(Code(r), "timeout");
  EXPECT_EQ(owner_->Balance(), before);
  EXPECT_EQ(owner_->Available(), before);
}

TEST_F(InvokeTest, OpenApiDescribesEveryRoute) {
  auto client = g_system->Client();
  auto r = client->Get("/api/v1/openapi.json");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->status, 200);
  auto doc = Json(r->body);
  EXPECT_EQ(std::string_view(doc.root["openapi"]), "3.1.0");
  simdjson::dom::object paths;
  ASSERT_EQ(doc.root["paths"].get_object().get(paths), simdjson::SUCCESS);
  int checked = 0;
  for (auto [path, item] : paths) {
    simdjson::dom::object methods;
    ASSERT_EQ(item.get_object().get(methods), simdjson::SUCCESS);
    // One server at the root: every path is absolute (/api/v1/..., /mcp, /healthz).
    std::string base{std::string_view(doc.root["servers"].at(0)["url"])};
    if (!base.empty() && base.back() == '/') base.pop_back();
    for (auto [method, op] : methods) {
      if (method == "servers" || method == "parameters") continue;
      std::string concrete(path);
      for (size_t open; (open = concrete.find('{')) != std::string::npos;) {
        concrete.replace(open, concrete.find('}', open) - open + 1, NewUuid());
      }
      std::string m(method);
      for (auto& ch : m) ch = static_cast<char>(std::toupper(ch));
      auto answer =
          owner_->session().Send(m, base + concrete, m == "GET" || m == "DELETE" ? "" : "{}");
      ASSERT_TRUE(answer.ok());
      // Every described route exists: whatever it answers, it is not "no such route" nor
      // "method not allowed", unless 405 is the answer the description documents.
      std::string code = Code(*answer);
      simdjson::dom::element documented_405;
      if (op["responses"]["405"].get(documented_405) == simdjson::SUCCESS) {
        EXPECT_EQ(answer->status, 405) << m << " " << path;
      } else {
        EXPECT_NE(code, "method_not_allowed") << m << " " << path;
      }
      EXPECT_FALSE(answer->status == 404 && code == "not_found" &&
                   StringField(answer->body, "detail").find("route") != std::string::npos)
          << m << " " << path << ": " << answer->body;
      ++checked;
    }
  }
  EXPECT_GE(checked, 34);
}

}  // namespace
}  // namespace toolgate::testing
