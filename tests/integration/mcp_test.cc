// MCP against a real system (issue 5, docs/mcp.md): the templates of `toolgate new --mcp`,
// published with `toolgate publish` and invoked through POST …/invoke, in every runtime the
// executors serve; the per-tool Streamable HTTP endpoint /mcp/functions/{id}[/{version}] and the
// workspace endpoint /mcp, with their sessions, header checks and billing.
#include <gtest/gtest.h>
#include <strings.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "mcp_client.h"
#include "mcp_conformance.h"
#include "system.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/json_writer.h"

namespace toolgate::testing {
namespace {

namespace fs = std::filesystem;

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem());

size_t Charges(Account& account) {
  size_t n = 0;
  for (const auto& row : account.Ledger()) n += row.at("type") == "charge";
  return n;
}

// ---- The templates through POST …/invoke ----

class TemplateConformance : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    account_ = new Account(*g_system, "Template Org");
    account_->TopUp(100'000'000);
    key_ = account_->CreateKey(R"(["invoke","manage"])");
  }
  static void TearDownTestSuite() { delete account_; }
  static Account* account_;
  static std::string key_;
};
Account* TemplateConformance::account_ = nullptr;
std::string TemplateConformance::key_;

TEST_P(TemplateConformance, McpTemplatePassesEveryCase) {
  const std::string runtime = GetParam();
  const std::string id = PublishTemplate(key_, runtime + "-mcp", runtime, true);
  ASSERT_FALSE(id.empty());
  // Every runtime is served: a 503 no_capacity here is an executor that is down or deaf.
  auto probe =
      Invoke(*g_system, key_, id, "", R"({"event":{"jsonrpc":"2.0","id":1,"method":"ping"}})");
  ASSERT_EQ(probe.status, 200) << "no executor serves " << runtime << ": " << probe.body;
  for (const auto& c : McpConformanceCases()) {
    auto r = Invoke(*g_system, key_, id, "0.1.0", R"({"event": )" + c.event + "}");
    ASSERT_EQ(r.status, 200) << c.name << ": " << r.body;
    EXPECT_EQ(IntField(r.body, "statusCode"), 200) << c.name;
    CheckMcpAnswer(c, StringField(r.body, "body"));
  }
}

TEST_P(TemplateConformance, PlainTemplateRuns) {
  const std::string runtime = GetParam();
  const std::string id = PublishTemplate(key_, runtime + "-hello", runtime, false);
  ASSERT_FALSE(id.empty());
  auto r = Invoke(*g_system, key_, id, "", R"({"event":{"name":"Ada"}})");
  ASSERT_EQ(r.status, 200) << runtime << ": " << r.body;
  EXPECT_EQ(StringField(StringField(r.body, "body"), "message"), "Hello, Ada!");
  auto bad = Invoke(*g_system, key_, id, "", R"({"event":{"name":5}})");
  EXPECT_EQ(bad.status, 400) << bad.body;
}

INSTANTIATE_TEST_SUITE_P(Runtimes, TemplateConformance,
                         ::testing::Values("lua", "python", "javascript"));

// ---- /mcp/functions/{id}: one MCP function ----

class FunctionEndpoint : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    account_ = new Account(*g_system, "Endpoint Org");
    account_->TopUp(100'000'000);
    key_ = account_->CreateKey(R"(["invoke","manage"])");
    function_ = PublishTemplate(key_, "endpoint-mcp", "lua", true);
  }
  static void TearDownTestSuite() { delete account_; }
  McpHttp Client(const std::string& suffix = "") {
    return McpHttp("/mcp/functions/" + function_ + suffix, key_);
  }
  static Account* account_;
  static std::string key_, function_;
};
Account* FunctionEndpoint::account_ = nullptr;
std::string FunctionEndpoint::key_, FunctionEndpoint::function_;

TEST_F(FunctionEndpoint, SessionListAndCall) {
  McpHttp mcp = Client();
  auto init = mcp.Initialize("2025-06-18");
  ASSERT_EQ(init.status, 200) << init.body;
  EXPECT_EQ(init.Header("content-type"), "application/json");
  EXPECT_FALSE(init.Header("traceparent").empty());
  EXPECT_FALSE(mcp.session_.empty());
  EXPECT_EQ(Member(init.body, "/result/protocolVersion"), R"("2025-06-18")");

  auto list = mcp.Request("1", "tools/list");
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(Member(list.body, "/result/tools/0/name"), R"("divide")");
  auto call = mcp.CallTool("divide", R"({"a":7,"b":2})");
  EXPECT_EQ(Member(call.body, "/result/content/0/text"), R"("3.5")");
  EXPECT_EQ(Member(call.body, "/id"), "7");
  auto tool_error = mcp.CallTool("divide", R"({"a":1,"b":0})");
  EXPECT_EQ(Member(tool_error.body, "/result/isError"), "true");
  auto unknown = mcp.CallTool("nope", "{}");
  EXPECT_EQ(unknown.status, 200);
  EXPECT_EQ(Member(unknown.body, "/error/code"), "-32602");
}

TEST_F(FunctionEndpoint, RequestsAreBilledLikeInvocationsNotificationsAreNot) {
  McpHttp mcp = Client();
  ASSERT_EQ(mcp.Initialize().status, 200);
  const size_t before = Charges(*account_);
  ASSERT_EQ(mcp.Request("1", "ping").status, 200);
  ASSERT_EQ(mcp.CallTool("echo", R"({"text":"hi"})").status, 200);
  EXPECT_EQ(mcp.Post(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{}})").status,
            202);
  EXPECT_EQ(mcp.Post(R"({"jsonrpc":"2.0","id":9,"result":{}})").status, 202);
  EXPECT_EQ(mcp.Post("", {{"Mcp-Session-Id", ""}}).status, 400);
  // Charges are durable before the answer: exactly the two requests.
  EXPECT_EQ(Charges(*account_), before + 2);
}

// Arguments that would make the event nest deeper than an invocation accepts (64 levels) are a
// JSON-RPC error before anything runs: nothing held, nothing charged.
TEST_F(FunctionEndpoint, ArgumentsNestedTooDeeplyAreRefusedAndNotCharged) {
  McpHttp mcp = Client();
  ASSERT_EQ(mcp.Initialize().status, 200);
  const size_t before = Charges(*account_);
  const int64_t balance = account_->Balance();
  std::string deep = "1";
  for (int level = 0; level < 1000; ++level) deep = "[" + deep + "]";
  auto refused = mcp.CallTool("echo", R"({"text":"hi","deep":)" + deep + "}");
  EXPECT_EQ(refused.status, 200) << refused.body;
  EXPECT_EQ(Member(refused.body, "/id"), "7");
  EXPECT_EQ(Member(refused.body, "/error/code"), "-32602");
  EXPECT_NE(Member(refused.body, "/error/message").find("deeper than 64 levels"), std::string::npos)
      << refused.body;
  EXPECT_EQ(Charges(*account_), before);
  EXPECT_EQ(account_->Balance(), balance);
  EXPECT_EQ(account_->Available(), balance);
}

TEST_F(FunctionEndpoint, SessionErrors) {
  McpHttp mcp = Client();
  ASSERT_EQ(mcp.Initialize().status, 200);
  const std::string session = mcp.session_;

  mcp.session_.clear();
  auto missing = mcp.Request("1", "tools/list");
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(missing.Header("content-type"), "application/problem+json");
  EXPECT_EQ(Code(missing), "mcp_session_required");

  mcp.session_ = "tg1.not.real";
  auto unknown = mcp.Request("1", "tools/list");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(Code(unknown), "mcp_session_not_found");

  // A session belongs to its endpoint and its key.
  McpHttp versioned = Client("/0.1.0");
  versioned.session_ = session;
  EXPECT_EQ(versioned.Request("1", "ping").status, 404);
  std::string other_key = account_->CreateKey();
  McpHttp other("/mcp/functions/" + function_, other_key);
  other.session_ = session;
  EXPECT_EQ(other.Request("1", "ping").status, 404);

  // DELETE ends it, for this replica and every other.
  mcp.session_ = session;
  auto del = mcp.Send("DELETE", "", {{"Authorization", key_}, {"Mcp-Session-Id", session}});
  EXPECT_EQ(del.status, 204);
  auto after = mcp.Request("1", "ping");
  EXPECT_EQ(after.status, 404);
  EXPECT_EQ(Code(after), "mcp_session_not_found");
}

TEST_F(FunctionEndpoint, HeaderErrors) {
  McpHttp mcp = Client();
  ASSERT_EQ(mcp.Initialize("2025-03-26").status, 200);

  auto version = mcp.Request("1", "ping");
  EXPECT_EQ(version.status, 200);
  auto unsupported = mcp.Post(R"({"jsonrpc":"2.0","id":1,"method":"ping"})",
                              {{"MCP-Protocol-Version", "1999-01-01"}});
  EXPECT_EQ(unsupported.status, 400);
  EXPECT_EQ(Code(unsupported), "unsupported_protocol_version");

  auto html = mcp.Post(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", {{"Accept", "text/html"}});
  EXPECT_EQ(html.status, 406);
  auto json_only =
      mcp.Post(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", {{"Accept", "application/json"}});
  EXPECT_EQ(json_only.status, 406);  // a 2025-03-26 client must accept event streams too

  auto foreign = mcp.Post(R"({"jsonrpc":"2.0","id":1,"method":"ping"})",
                          {{"Origin", "https://attacker.example"}});
  EXPECT_EQ(foreign.status, 403);

  auto get = mcp.Send("GET", "", {{"Authorization", key_}, {"Accept", "text/event-stream"}});
  EXPECT_EQ(get.status, 405);
  EXPECT_EQ(get.Header("allow"), "POST, DELETE");

  auto no_key = mcp.Post(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", {{"Authorization", ""}});
  EXPECT_EQ(no_key.status, 401);
  EXPECT_EQ(no_key.Header("content-type"), "application/problem+json");

  auto not_json = mcp.Post("{nope");
  EXPECT_EQ(not_json.status, 400);
  EXPECT_EQ(Code(not_json), "invalid_json");
}

// Revision 2026-07-28: no session; the edge checks each request's _meta and headers, before
// anything runs or is charged, and the handler answers the rest.
TEST_F(FunctionEndpoint, StatelessRequestsNeedNoSessionAndAWrongEnvelopeRunsNothing) {
  McpHttp mcp = Client();
  const std::string meta = R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
                           R"("io.modelcontextprotocol/clientCapabilities":{}})";
  const http::HeaderList headers = {{"MCP-Protocol-Version", "2026-07-28"},
                                    {"Mcp-Method", "tools/list"}};
  const size_t before = Charges(*account_);
  auto list = mcp.Post(R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{)" + meta + "}}",
                       headers);
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(list.Header("mcp-session-id"), "");
  EXPECT_EQ(Member(list.body, "/result/resultType"), R"("complete")");  // added by the edge
  EXPECT_EQ(Member(list.body, "/result/tools/0/name"), R"("divide")");

  auto mismatch =
      mcp.Post(R"({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{)" + meta + "}}",
               {{"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "tools/call"}});
  EXPECT_EQ(mismatch.status, 400);
  EXPECT_EQ(Member(mismatch.body, "/error/code"), "-32020");
  auto no_meta = mcp.Post(R"({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}})", headers);
  EXPECT_EQ(no_meta.status, 400);
  EXPECT_EQ(Member(no_meta.body, "/error/code"), "-32602");
  EXPECT_EQ(Charges(*account_), before + 1);  // only the list ran

  // DNS rebinding: a foreign Host (and its matching Origin) is refused before anything else.
  auto rebound =
      mcp.Post(R"({"jsonrpc":"2.0","id":4,"method":"tools/list","params":{)" + meta + "}}",
               {{"MCP-Protocol-Version", "2026-07-28"},
                {"Mcp-Method", "tools/list"},
                {"Host", "evil.example.com"},
                {"Origin", "http://evil.example.com"}});
  EXPECT_EQ(rebound.status, 403);
  EXPECT_EQ(Code(rebound), "forbidden");
  EXPECT_EQ(Charges(*account_), before + 1);
}

TEST_F(FunctionEndpoint, OldClientsAcceptJsonOnly) {
  McpHttp mcp = Client();
  auto init = mcp.Post(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":)"
                       R"({"protocolVersion":"2024-11-05"}})",
                       {{"Accept", "application/json"}});
  ASSERT_EQ(init.status, 200) << init.body;
  EXPECT_EQ(Member(init.body, "/result/protocolVersion"), R"("2024-11-05")");
  mcp.session_ = init.Header("mcp-session-id");
  auto ping =
      mcp.Post(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", {{"Accept", "application/json"}});
  EXPECT_EQ(ping.status, 200) << ping.body;
}

TEST_F(FunctionEndpoint, BearerKeysVersionsAndPlatformErrors) {
  McpHttp bearer("/mcp/functions/" + function_ + "/0.1.0", "Bearer " + key_);
  auto init = bearer.Initialize();
  EXPECT_EQ(init.status, 200) << init.body;
  EXPECT_EQ(bearer.Request("1", "ping").status, 200);

  McpHttp bad_key("/mcp/functions/" + function_, "not-a-key");
  auto invalid = bad_key.Initialize();
  EXPECT_EQ(invalid.status, 401);
  EXPECT_EQ(Code(invalid), "invalid_api_key");

  McpHttp missing_version("/mcp/functions/" + function_ + "/9.9", key_);
  EXPECT_EQ(Code(missing_version.Initialize()), "version_not_found");
  McpHttp missing_function("/mcp/functions/" + NewUuid(), key_);
  EXPECT_EQ(Code(missing_function.Initialize()), "function_not_found");

  // Nothing to spend: the platform answers 402 before the handler runs.
  Account poor(*g_system, "Poor Org");
  std::string poor_key = poor.CreateKey(R"(["invoke","manage"])");
  std::string poor_function = PublishTemplate(poor_key, "poor-mcp", "lua", true);
  McpHttp broke("/mcp/functions/" + poor_function, poor_key);
  auto r = broke.Initialize();
  EXPECT_EQ(r.status, 402);
  EXPECT_EQ(r.Header("content-type"), "application/problem+json");
  EXPECT_EQ(Code(r), "insufficient_balance");
}

TEST_F(FunctionEndpoint, AHandlerThatFailsAnswersAnInternalError) {
  std::string id = account_->CreateFunction("broken", R"("mcp":true)");
  ASSERT_EQ(account_->PublishLua(id, "1.0", "function service_handler() error('boom') end").status,
            201);
  McpHttp mcp("/mcp/functions/" + id, key_);
  auto r = mcp.Initialize();
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(r.Header("mcp-session-id").empty());
  EXPECT_EQ(Member(r.body, "/error/code"), "-32603");
  EXPECT_EQ(Member(r.body, "/error/data/statusCode"), "500");
}

// ---- /mcp: the organization's workspace ----

class WorkspaceEndpoint : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    account_ = new Account(*g_system, "Workspace Org");
    account_->TopUp(100'000'000);
    key_ = account_->CreateKey(R"(["invoke","manage"])");
    greeter_ = PublishTemplate(key_, "Greeter", "lua", false);
    calculator_ = PublishTemplate(key_, "calc", "lua", true);

    publisher_ = new Account(*g_system, "Publisher Org");
    publisher_->TopUp(100'000'000);
    shared_ = publisher_->CreateFunction("Shared Echo", R"("visibility":"public")");
    ASSERT_EQ(
        publisher_->PublishLua(shared_, "1.0", "function service_handler(event) return event end")
            .status,
        201);
  }
  static void TearDownTestSuite() {
    delete account_;
    delete publisher_;
  }

  std::vector<std::string> ToolNames(McpHttp& mcp) {
    auto r = mcp.Request("2", "tools/list");
    EXPECT_EQ(r.status, 200) << r.body;
    std::vector<std::string> names;
    auto doc = Json(r.body);
    simdjson::dom::array tools;
    if (doc.root.at_pointer("/result/tools").get_array().get(tools) != simdjson::SUCCESS) {
      ADD_FAILURE() << r.body;
      return names;
    }
    for (auto t : tools) names.emplace_back(std::string_view(t["name"]));
    return names;
  }

  static Account* account_;
  static Account* publisher_;
  static std::string key_, greeter_, calculator_, shared_;
};
Account* WorkspaceEndpoint::account_ = nullptr;
Account* WorkspaceEndpoint::publisher_ = nullptr;
std::string WorkspaceEndpoint::key_, WorkspaceEndpoint::greeter_, WorkspaceEndpoint::calculator_,
    WorkspaceEndpoint::shared_;

TEST_F(WorkspaceEndpoint, ListsFunctionsAndMcpToolsAndFollowsTheWorkspace) {
  McpHttp mcp("/mcp", key_);
  auto init = mcp.Initialize("2025-11-25");
  ASSERT_EQ(init.status, 200) << init.body;
  EXPECT_EQ(Member(init.body, "/result/serverInfo/name"), R"("toolgate")");
  EXPECT_EQ(Member(init.body, "/result/protocolVersion"), R"("2025-11-25")");

  EXPECT_EQ(ToolNames(mcp), (std::vector<std::string>{"greeter", "calc__divide", "calc__echo"}));

  account_->AddToWorkspace(shared_);
  EXPECT_EQ(ToolNames(mcp),
            (std::vector<std::string>{"greeter", "calc__divide", "calc__echo", "shared_echo"}));
  auto removed = account_->session().Delete("/api/v1/workspace/tools/" + shared_);
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(removed->status, 204);
  EXPECT_EQ(ToolNames(mcp), (std::vector<std::string>{"greeter", "calc__divide", "calc__echo"}));
}

TEST_F(WorkspaceEndpoint, CallsAreInvocations) {
  McpHttp mcp("/mcp", key_);
  ASSERT_EQ(mcp.Initialize().status, 200);
  const size_t before = Charges(*account_);

  auto hello = mcp.CallTool("greeter", R"({"name":"Ada"})");
  ASSERT_EQ(hello.status, 200) << hello.body;
  EXPECT_EQ(Member(hello.body, "/result/structuredContent/message"), R"("Hello, Ada!")");
  EXPECT_EQ(Member(hello.body, "/result/isError"), "false");
  EXPECT_NE(Member(hello.body, "/result/content/0/text").find("Hello, Ada!"), std::string::npos);

  // Arguments that break the tool's input_schema: a tool error naming the member, nothing run.
  auto bad = mcp.CallTool("greeter", R"({"name":5})");
  EXPECT_EQ(Member(bad.body, "/result/isError"), "true");
  EXPECT_NE(Member(bad.body, "/result/content/0/text").find("/event/name"), std::string::npos)
      << bad.body;

  auto nested = mcp.CallTool("calc__divide", R"({"a":7,"b":2})");
  EXPECT_EQ(Member(nested.body, "/result/content/0/text"), R"("3.5")");
  EXPECT_EQ(Member(nested.body, "/id"), "7");

  auto unknown = mcp.CallTool("calc__nope", "{}");
  EXPECT_EQ(Member(unknown.body, "/error/code"), "-32602");
  EXPECT_EQ(Member(mcp.CallTool("nothing", "{}").body, "/error/code"), "-32602");

  // Three calls ran a function (calc__nope ran the MCP function, which answered -32602); the
  // arguments the schema refused and the unknown "nothing" ran none.
  EXPECT_EQ(Charges(*account_), before + 3);
}

// Listing a workspace runs no handler: each MCP function was listed once, as its publisher, when
// its version was published, and the registry keeps that listing with the version.
TEST(WorkspaceListing, TwentyMcpFunctionsListWithoutRunningOrChargingAnything) {
  Account org(*g_system, "Listing Org");
  org.TopUp(100'000'000);
  const std::string key = org.CreateKey(R"(["invoke","manage"])");
  for (int i = 0; i < 20; ++i) {
    ASSERT_FALSE(PublishTemplate(key, "listed-" + std::to_string(i), "lua", true).empty());
  }
  // Each publish ran tools/list, resources/list, resources/templates/list and prompts/list as
  // the publisher, before its answer: four charges each, on the publisher's own ledger.
  const size_t charges = Charges(org);
  EXPECT_EQ(charges, 20u * 4);
  const int64_t balance = org.Balance();

  McpHttp mcp("/mcp", key);
  ASSERT_EQ(mcp.Initialize("2025-11-25").status, 200);
  for (int round = 0; round < 3; ++round) {
    auto list = mcp.Request("2", "tools/list");
    ASSERT_EQ(list.status, 200) << list.body;
    auto doc = Json(list.body);
    simdjson::dom::array tools;
    ASSERT_EQ(doc.root.at_pointer("/result/tools").get_array().get(tools), simdjson::SUCCESS);
    EXPECT_EQ(tools.size(), 40u);  // divide and echo of each
  }
  EXPECT_EQ(Charges(org), charges);
  EXPECT_EQ(org.Balance(), balance);

  // A forwarded call is an invocation, charged once.
  auto call = mcp.CallTool("listed-7__divide", R"({"a":7,"b":2})");
  EXPECT_EQ(Member(call.body, "/result/content/0/text"), R"("3.5")") << call.body;
  EXPECT_EQ(Charges(org), charges + 1);
}

// A version's output_schema is the tool's outputSchema, and a result that breaks it is a tool
// error rather than structured content that lies.
TEST(WorkspaceOutputSchema, ResultsFollowTheSchemaOrAreToolErrors) {
  Account org(*g_system, "Output Schema Org");
  org.TopUp(100'000'000);
  const std::string key = org.CreateKey(R"(["invoke","manage"])");
  const std::string schema =
      R"({"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]})";
  const std::string adder =
      org.CreateFunction("Adder", R"("icon_url":"https://example.com/adder.png")");
  auto published =
      org.PublishLua(adder, "1.0.0", "function service_handler(e) return {sum = e.a + e.b} end",
                     R"("output_schema":)" + schema);
  ASSERT_EQ(published.status, 201) << published.body;
  EXPECT_EQ(Member(published.body, "/output_schema"), schema);
  const std::string liar = org.CreateFunction("Liar");
  ASSERT_EQ(org.PublishLua(liar, "1.0.0", "function service_handler(e) return {sum = 'many'} end",
                           R"("output_schema":)" + schema)
                .status,
            201);
  auto refused = org.PublishLua(adder, "1.0.1", "function service_handler(e) return e end",
                                R"("output_schema":{"type":"array"})");
  EXPECT_EQ(refused.status, 422) << refused.body;

  McpHttp mcp("/mcp", key);
  ASSERT_EQ(mcp.Initialize("2025-11-25").status, 200);
  auto list = mcp.Request("2", "tools/list");
  EXPECT_EQ(Member(list.body, "/result/tools/0/outputSchema"), schema) << list.body;
  // The function's icon comes with its tool.
  EXPECT_EQ(Member(list.body, "/result/tools/0/icons/0/src"), R"("https://example.com/adder.png")");

  auto sum = mcp.CallTool("adder", R"({"a":2,"b":3})");
  EXPECT_EQ(Member(sum.body, "/result/structuredContent/sum"), "5") << sum.body;
  EXPECT_EQ(Member(sum.body, "/result/isError"), "false");
  auto lie = mcp.CallTool("liar", "{}");
  EXPECT_EQ(Member(lie.body, "/result/isError"), "true") << lie.body;
  EXPECT_EQ(Member(lie.body, "/result/structuredContent"), "<missing>");
  EXPECT_NE(Member(lie.body, "/result/content/0/text").find("/sum must be a number"),
            std::string::npos)
      << lie.body;
}

// Defined last: it adds a function to the workspace whose tool lists the cases above check.
TEST_F(WorkspaceEndpoint, AStoredSecretMappingServesCallsWithoutXEnvKeys) {
  std::string fn = account_->CreateFunction("Keyed");
  ASSERT_EQ(account_
                ->PublishLua(fn, "1",
                             "function service_handler(event, context)\n"
                             "  return {token = context.env.API_TOKEN}\n"
                             "end",
                             R"("declared_keys":["API_TOKEN"])")
                .status,
            201);
  std::string secret = account_->CreateSecret("keyed", "bound-secret-31f4");
  McpHttp mcp("/mcp", key_);
  ASSERT_EQ(mcp.Initialize().status, 200);
  const size_t before = Charges(*account_);

  // No X-Env-Keys and nothing stored: a tool error the client can act on, nothing run.
  auto unmapped = mcp.CallTool("keyed", "{}");
  EXPECT_EQ(unmapped.status, 200) << unmapped.body;
  EXPECT_EQ(Member(unmapped.body, "/result/isError"), "true") << unmapped.body;
  EXPECT_NE(unmapped.body.find("missing_env_key"), std::string::npos) << unmapped.body;

  const std::string path = "/api/v1/workspace/tools/" + fn + "/env-keys";
  auto undeclared = account_->session().Put(path, R"({"env_keys":"OTHER=)" + secret + R"("})");
  ASSERT_TRUE(undeclared.ok());
  EXPECT_EQ(undeclared->status, 422) << undeclared->body;
  EXPECT_EQ(account_->session().Get(path)->status, 404);  // nothing stored yet
  auto stored = account_->session().Put(path, R"({"env_keys":"API_TOKEN=)" + secret + R"("})");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->status, 204) << stored->body;
  // What is stored reads back (secret ids, never values), to the organization that stored it.
  auto read = account_->session().Get(path);
  ASSERT_EQ(read->status, 200) << read->body;
  EXPECT_EQ(StringField(read->body, "env_keys"), "API_TOKEN=" + secret);
  EXPECT_EQ(read->body.find("bound-secret-31f4"), std::string::npos) << read->body;
  EXPECT_EQ(publisher_->session().Get(path)->status, 404);

  auto mapped = mcp.CallTool("keyed", "{}");
  EXPECT_EQ(Member(mapped.body, "/result/isError"), "false") << mapped.body;
  EXPECT_EQ(Member(mapped.body, "/result/structuredContent/token"), R"("bound-secret-31f4")")
      << mapped.body;
  EXPECT_EQ(Charges(*account_), before + 1);

  // Another organization's stored mapping is its own: the publisher has none for it.
  EXPECT_EQ(publisher_->session().Delete(path)->status, 404);
  EXPECT_EQ(account_->session().Delete(path)->status, 204);
  EXPECT_EQ(account_->session().Delete(path)->status, 404);
  EXPECT_EQ(Member(mcp.CallTool("keyed", "{}").body, "/result/isError"), "true");
}

}  // namespace
}  // namespace toolgate::testing
