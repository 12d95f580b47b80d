#include "mcp_endpoint.h"

#include <gtest/gtest.h>

#include <deque>
#include <functional>

#include "fake_mcp_backend.h"
#include "mcp_stateless.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/core/event_depth.h"
#include "toolgate/core/problem.h"

namespace toolgate::edge {
namespace {

using FakeBackend = FakeMcpBackend;

void WriteUnpriced(JsonWriter& w, simdjson::dom::element e);

// json without the prices and costs Toolgate adds to _meta (mcp_prices.h; their own tests check
// them), and without a _meta they leave empty: what the other tests are about, unchanged.
std::string Unpriced(const std::string& json) {
  auto doc = ParseJson(json);
  if (!doc.ok()) return json;
  JsonWriter w;
  WriteUnpriced(w, doc->root);
  return w.Take();
}

void WriteUnpriced(JsonWriter& w, simdjson::dom::element e) {
  if (e.is_array()) {
    w.BeginArray();
    for (auto item : simdjson::dom::array(e)) WriteUnpriced(w, item);
    w.EndArray();
    return;
  }
  if (!e.is_object()) {
    w.Raw(ToJson(e));
    return;
  }
  w.BeginObject();
  for (auto [key, value] : simdjson::dom::object(e)) {
    if (key == kPriceMetaKey || key == kCostMetaKey) continue;
    if (key == "_meta" && value.is_object()) {
      size_t kept = 0;
      for (auto member : simdjson::dom::object(value)) {
        if (member.key != kPriceMetaKey && member.key != kCostMetaKey) ++kept;
      }
      if (kept == 0) continue;
    }
    w.Key(key);
    WriteUnpriced(w, value);
  }
  w.EndObject();
}

constexpr char kFunction[] = "0b9a3c54-2d1e-4f6a-9b8c-7d6e5f4a3b2c";
constexpr char kBoth[] = "application/json, text/event-stream";

// An MCP server like the templates: initialize answers the asked revision, tools/list one tool,
// anything else an empty result.
v1::InvokeReply TemplateLike(const v1::InvokeJob& job) {
  auto doc = ParseJson(job.event_json());
  simdjson::dom::object obj;
  if (!doc.ok() || doc->root.get_object().get(obj) != simdjson::SUCCESS) {
    return HandlerAnswer(200, R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700}})");
  }
  std::string id, method;
  GetRaw(obj, "id", &id);
  GetString(obj, "method", &method);
  if (method == "initialize") {
    std::string asked;
    simdjson::dom::object params;
    if (obj["params"].get_object().get(params) == simdjson::SUCCESS) {
      GetString(params, "protocolVersion", &asked);
    }
    return HandlerAnswer(200, R"({"jsonrpc":"2.0","id":)" + id +
                                  R"(,"result":{"protocolVersion":")" + asked + R"("}})");
  }
  if (method == "tools/list") {
    return HandlerAnswer(200, R"({"jsonrpc":"2.0","id":)" + id +
                                  R"(,"result":{"tools":[{"name":"add","inputSchema":)"
                                  R"({"type":"object"}}]}})");
  }
  return HandlerAnswer(200, R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":{}})");
}

class McpEndpointTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { InitCrypto(); }

  McpEndpointTest() {
    backend_.handler = TemplateLike;
    backend_.principal.set_org_id("org-1");
    backend_.principal.set_org_name("Acme");
    backend_.principal.add_scopes("invoke");
    McpEndpoint::Options options;
    options.max_request_bytes = 1000;
    options.server_version = "9.9.9";
    options.now_ms = [this] { return now_ms_; };
    endpoint_ = std::make_unique<McpEndpoint>(backend_, codec_, ended_, levels_, options);
  }

  McpHttpRequest Post(std::string body, std::optional<std::string> session = std::nullopt) {
    McpHttpRequest r;
    r.method = "POST";
    r.function_id = kFunction;
    r.api_key = "key-1";
    r.host = "127.0.0.1:8080";
    r.accept = kBoth;
    r.content_type = "application/json";
    r.session_id = std::move(session);
    r.body = std::move(body);
    r.request_id = "req-1";
    return r;
  }

  // Sends request with a response stream: what goes on it before the answer lands in events_.
  HttpAnswer Send(McpHttpRequest request) {
    std::optional<HttpAnswer> answer;
    events_.clear();
    endpoint_->Handle(
        std::move(request),
        [&answer](HttpAnswer a) {
          EXPECT_FALSE(answer.has_value()) << "answered twice";
          answer = std::move(a);
        },
        [this, &answer](std::string json) {
          EXPECT_FALSE(answer.has_value()) << "a notification after the answer";
          events_.push_back(std::move(json));
        });
    EXPECT_TRUE(answer.has_value());
    return answer.value_or(HttpAnswer{});
  }

  // Initializes the per-tool endpoint (or the workspace) and returns the session id.
  std::string Initialize(const std::string& revision = "2025-06-18", bool workspace = false) {
    McpHttpRequest r = Post(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":)"
                            R"({"protocolVersion":")" +
                            revision + R"(","capabilities":{}}})");
    r.workspace = workspace;
    HttpAnswer a = Send(std::move(r));
    EXPECT_EQ(a.status, 200) << a.body;
    return Header(a, "Mcp-Session-Id");
  }

  static std::string Header(const HttpAnswer& a, const std::string& name) {
    for (const auto& [n, v] : a.headers) {
      if (n == name) return v;
    }
    return "";
  }
  static std::string Code(const HttpAnswer& a) {
    EXPECT_EQ(a.content_type, "application/problem+json") << a.body;
    auto doc = ParseJson(a.body);
    simdjson::dom::object obj;
    std::string code;
    if (doc.ok() && doc->root.get_object().get(obj) == simdjson::SUCCESS) {
      GetString(obj, "code", &code);
    }
    return code;
  }

  int64_t now_ms_ = 1'800'000'000'000;
  FakeBackend backend_;
  McpSessionCodec codec_{std::string(32, 's')};
  EndedSessions ended_;
  SessionLogLevels levels_;
  std::vector<std::string> events_;
  std::unique_ptr<McpEndpoint> endpoint_;
};

TEST_F(McpEndpointTest, InitializeRunsTheHandlerWithTheMessageAsSent) {
  const std::string body =
      R"({"jsonrpc":"2.0", "id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})";
  McpHttpRequest r = Post(body + "\n");
  r.version = "1.0";
  r.env_keys = "A=s1";
  r.traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  HttpAnswer a = Send(std::move(r));
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.content_type, "application/json");
  EXPECT_EQ(a.body, R"({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}})");
  ASSERT_EQ(backend_.jobs.size(), 1u);
  const v1::InvokeJob& job = backend_.jobs[0];
  EXPECT_EQ(job.event_json(), body);
  EXPECT_EQ(job.function_id(), kFunction);
  EXPECT_EQ(job.version(), "1.0");
  EXPECT_EQ(job.api_key_sha256(), Sha256("key-1"));
  EXPECT_EQ(job.body_check(), v1::BODY_OK);
  EXPECT_TRUE(job.env_keys_present());
  EXPECT_EQ(job.env_keys_header(), "A=s1");
  EXPECT_EQ(job.traceparent(), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  EXPECT_EQ(job.request_id(), "req-1");
  EXPECT_FALSE(job.execution_id().empty());

  // The session carries the revision the handler named.
  auto session = codec_.Verify(Header(a, "Mcp-Session-Id"), Sha256("key-1"), now_ms_);
  ASSERT_TRUE(session.has_value());
  EXPECT_EQ(session->revision, "2025-06-18");
  EXPECT_EQ(session->endpoint, std::string("functions/") + kFunction + "/1.0");
}

// X-Toolgate-Max-Cost rides with each call the request makes; a malformed one runs nothing.
TEST_F(McpEndpointTest, AMaxCostHeaderBoundsEachCall) {
  McpHttpRequest r = Post(
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})");
  r.max_cost = "2500";
  EXPECT_EQ(Send(r).status, 200);
  ASSERT_EQ(backend_.jobs.size(), 1u);
  EXPECT_EQ(backend_.jobs[0].max_cost_micro_usd(), 2500);
  EXPECT_EQ(backend_.jobs[0].audience(), std::string("/mcp/functions/") + kFunction);
  for (const char* bad : {"", "0", "-1", "1.5", "abc", "99999999999999"}) {
    r.max_cost = bad;
    HttpAnswer a = Send(r);
    EXPECT_EQ(a.status, 400) << bad;
    EXPECT_EQ(Code(a), "bad_request") << bad;
  }
  EXPECT_EQ(backend_.jobs.size(), 1u);
}

TEST_F(McpEndpointTest, RequestsNeedTheSession) {
  std::string session = Initialize();
  const std::string list = R"({"jsonrpc":"2.0","id":"l","method":"tools/list"})";

  EXPECT_EQ(Code(Send(Post(list))), "mcp_session_required");
  HttpAnswer unknown = Send(Post(list, "tg1.bogus.token"));
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(Code(unknown), "mcp_session_not_found");

  McpHttpRequest other_key = Post(list, session);
  other_key.api_key = "key-2";
  EXPECT_EQ(Send(std::move(other_key)).status, 404);

  McpHttpRequest other_function = Post(list, session);
  other_function.function_id = "ffffffff-2d1e-4f6a-9b8c-7d6e5f4a3b2c";
  EXPECT_EQ(Send(std::move(other_function)).status, 404);

  McpHttpRequest other_version = Post(list, session);
  other_version.version = "2.0";
  EXPECT_EQ(Send(std::move(other_version)).status, 404);

  // Function ids compare without case, as everywhere else.
  McpHttpRequest upper = Post(list, session);
  for (char& c : upper.function_id) c = static_cast<char>(std::toupper(c));
  EXPECT_EQ(Send(std::move(upper)).status, 200);

  size_t jobs = backend_.jobs.size();
  HttpAnswer ok = Send(Post(list, session));
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(backend_.jobs.size(), jobs + 1);
  EXPECT_TRUE(IsResponseTo(ok.body, R"("l")"));
  EXPECT_TRUE(Header(ok, "Mcp-Session-Id").empty());  // issued on initialize only

  now_ms_ += 24LL * 3600 * 1000;  // expired
  EXPECT_EQ(Send(Post(list, session)).status, 404);
}

TEST_F(McpEndpointTest, ProtocolVersionHeader) {
  std::string session = Initialize("2025-03-26");
  McpHttpRequest unsupported = Post(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", session);
  unsupported.protocol_version = "2099-01-01";
  HttpAnswer a = Send(std::move(unsupported));
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(Code(a), "unsupported_protocol_version");

  // Another supported revision than the session's is served: the 2025-11-25 transport asks
  // only that the header name a supported revision.
  McpHttpRequest other = Post(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", session);
  other.protocol_version = "2025-06-18";
  EXPECT_EQ(Send(std::move(other)).status, 200);

  McpHttpRequest match = Post(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", session);
  match.protocol_version = "2025-03-26";
  EXPECT_EQ(Send(std::move(match)).status, 200);
}

TEST_F(McpEndpointTest, AcceptDependsOnTheRevision) {
  McpHttpRequest html = Post(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{}})");
  html.accept = "text/html";
  HttpAnswer a = Send(std::move(html));
  EXPECT_EQ(a.status, 406);
  EXPECT_EQ(Code(a), "not_acceptable");
  EXPECT_TRUE(backend_.jobs.empty());

  McpHttpRequest old_client = Post(
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05"}})");
  old_client.accept = "application/json";
  HttpAnswer old = Send(std::move(old_client));
  EXPECT_EQ(old.status, 200);
  McpHttpRequest old_ping =
      Post(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", Header(old, "Mcp-Session-Id"));
  old_ping.accept = "application/json";
  EXPECT_EQ(Send(std::move(old_ping)).status, 200);

  std::string session = Initialize("2025-11-25");
  McpHttpRequest json_only = Post(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", session);
  json_only.accept = "application/json";
  EXPECT_EQ(Send(std::move(json_only)).status, 406);
}

TEST_F(McpEndpointTest, NotificationsAndResponsesAreAcceptedNotRun) {
  std::string session = Initialize();
  size_t jobs = backend_.jobs.size();
  HttpAnswer n = Send(Post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", session));
  EXPECT_EQ(n.status, 202);
  EXPECT_EQ(n.body, "");
  HttpAnswer r = Send(Post(R"({"jsonrpc":"2.0","id":5,"result":{}})", session));
  EXPECT_EQ(r.status, 202);
  EXPECT_EQ(backend_.jobs.size(), jobs);
  EXPECT_EQ(backend_.authenticated.size(), 2u);  // the key is still checked

  backend_.auth_problem = core::MakeProblem("api_key_revoked", "revoked");
  HttpAnswer revoked =
      Send(Post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", session));
  EXPECT_EQ(revoked.status, 401);
  EXPECT_EQ(Code(revoked), "api_key_revoked");
}

TEST_F(McpEndpointTest, TransportErrors) {
  McpHttpRequest get = Post("");
  get.method = "GET";
  HttpAnswer a = Send(std::move(get));
  EXPECT_EQ(a.status, 405);
  EXPECT_EQ(Header(a, "Allow"), "POST, DELETE");

  McpHttpRequest foreign = Post(R"({"jsonrpc":"2.0","id":0,"method":"initialize"})");
  foreign.origin = "https://evil.example";
  EXPECT_EQ(Send(std::move(foreign)).status, 403);
  // DNS rebinding: the attacker's name in Host (and Origin) is refused before authentication.
  McpHttpRequest rebound = Post(R"({"jsonrpc":"2.0","id":0,"method":"initialize"})");
  rebound.host = "evil.example.com";
  rebound.origin = "http://evil.example.com";
  EXPECT_EQ(Code(Send(std::move(rebound))), "forbidden");
  McpHttpRequest other_port = Post(R"({"jsonrpc":"2.0","id":0,"method":"initialize"})");
  other_port.host = "localhost:9999";  // a loopback name on any port (a local proxy)
  EXPECT_EQ(Send(std::move(other_port)).status, 200);
  McpHttpRequest own = Post(R"({"jsonrpc":"2.0","id":0,"method":"initialize"})");
  own.origin = "http://127.0.0.1:8080";
  EXPECT_EQ(Send(std::move(own)).status, 200);

  McpHttpRequest no_key = Post(R"({"jsonrpc":"2.0","id":0,"method":"initialize"})");
  no_key.api_key.clear();
  EXPECT_EQ(Code(Send(std::move(no_key))), "missing_api_key");

  EXPECT_EQ(Send(Post(std::string(1001, ' '))).status, 413);

  McpHttpRequest text = Post(R"({"jsonrpc":"2.0","id":0,"method":"initialize"})");
  text.content_type = "text/plain";
  EXPECT_EQ(Send(std::move(text)).status, 415);

  EXPECT_EQ(Code(Send(Post("{oops"))), "invalid_json");
  EXPECT_EQ(Code(Send(Post(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])"))), "bad_request");
  EXPECT_EQ(backend_.jobs.size(), 2u);  // only the same-origin and the loopback initialize ran
}

TEST_F(McpEndpointTest, DeleteEndsTheSessionEverywhere) {
  std::string session = Initialize();
  McpHttpRequest del = Post("", session);
  del.method = "DELETE";
  HttpAnswer a = Send(del);
  EXPECT_EQ(a.status, 204);
  ASSERT_EQ(backend_.ended_sessions.size(), 1u);
  auto verified = codec_.Verify(session, Sha256("key-1"), now_ms_);
  ASSERT_TRUE(verified.has_value());
  EXPECT_EQ(backend_.ended_sessions[0].session_nonce(), verified->nonce);
  EXPECT_EQ(backend_.ended_sessions[0].expires_at_ms(), verified->expires_at_ms);
  EXPECT_EQ(Send(Post(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", session)).status, 404);
  EXPECT_EQ(Send(del).status, 404);

  McpHttpRequest without = Post("");
  without.method = "DELETE";
  EXPECT_EQ(Send(std::move(without)).status, 400);
}

TEST_F(McpEndpointTest, HandlerFailuresBecomeInternalErrors) {
  std::string session = Initialize();
  backend_.handler = [](const v1::InvokeJob&) {
    return HandlerAnswer(500, R"({"errorType":"TypeError","errorMessage":"boom"})");
  };
  HttpAnswer a = Send(Post(R"({"jsonrpc":"2.0","id":4,"method":"tools/list"})", session));
  EXPECT_EQ(a.status, 200);
  auto doc = ParseJson(a.body);
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(int64_t(doc->root["id"]), 4);
  EXPECT_EQ(int64_t(doc->root["error"]["code"]), -32603);
  EXPECT_EQ(int64_t(doc->root["error"]["data"]["statusCode"]), 500);
  EXPECT_EQ(std::string_view(doc->root["error"]["data"]["body"]),
            R"({"errorType":"TypeError","errorMessage":"boom"})");
}

TEST_F(McpEndpointTest, PlatformErrorsAreProblems) {
  std::string session = Initialize();
  backend_.handler = [](const v1::InvokeJob&) {
    v1::InvokeReply reply;
    *reply.mutable_problem() = core::MakeProblem("insufficient_balance", "top up");
    return reply;
  };
  HttpAnswer a = Send(Post(R"({"jsonrpc":"2.0","id":4,"method":"tools/list"})", session));
  EXPECT_EQ(a.status, 402);
  EXPECT_EQ(Code(a), "insufficient_balance");
}

TEST_F(McpEndpointTest, WorkspaceInitializeIsAnsweredByTheEdge) {
  std::string session = Initialize("2024-11-05", /*workspace=*/true);
  EXPECT_TRUE(backend_.jobs.empty());
  auto s = codec_.Verify(session, Sha256("key-1"), now_ms_);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->endpoint, "workspace");
  EXPECT_EQ(s->revision, "2024-11-05");

  McpHttpRequest r = Post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":)"
                          R"({"protocolVersion":"1999-01-01"}})");
  r.workspace = true;
  HttpAnswer a = Send(std::move(r));
  auto doc = ParseJson(a.body);
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(std::string_view(doc->root["result"]["protocolVersion"]), "2025-11-25");
  EXPECT_TRUE(doc->root["result"]["capabilities"]["tools"].is_object());
  EXPECT_EQ(std::string_view(doc->root["result"]["serverInfo"]["name"]), "toolgate");
  EXPECT_EQ(std::string_view(doc->root["result"]["serverInfo"]["version"]), "9.9.9");
}

TEST_F(McpEndpointTest, WorkspaceNeedsTheInvokeScope) {
  backend_.principal.clear_scopes();
  backend_.principal.add_scopes("manage");
  McpHttpRequest r = Post(R"({"jsonrpc":"2.0","id":0,"method":"initialize"})");
  r.workspace = true;
  HttpAnswer a = Send(std::move(r));
  EXPECT_EQ(a.status, 403);
  EXPECT_EQ(Code(a), "insufficient_scope");
}

class WorkspaceTest : public McpEndpointTest {
 protected:
  WorkspaceTest() {
    v1::WorkspaceTool* echo = backend_.tools.add_tools();
    echo->set_function_id("11111111-0000-4000-8000-000000000001");
    echo->set_name("Echo");
    echo->set_description("Echoes");
    echo->set_input_schema_json(R"({"type":"object","properties":{"x":{}}})");
    echo->add_declared_keys("TOKEN");
    v1::WorkspaceTool* calc = backend_.tools.add_tools();
    calc->set_function_id("22222222-0000-4000-8000-000000000002");
    calc->set_name("Calc");
    calc->set_mcp(true);
    session_ = Initialize("2025-11-25", /*workspace=*/true);
  }

  HttpAnswer Call(std::string body) {
    McpHttpRequest r = Post(std::move(body), session_);
    r.workspace = true;
    r.env_keys = "TOKEN=sec-1, OTHER=sec-2";
    return Send(std::move(r));
  }

  std::string session_;
};

TEST_F(WorkspaceTest, ToolsListListsFunctionsAndTheToolsOfMcpFunctions) {
  HttpAnswer a = Call(R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(Unpriced(a.body), R"({"jsonrpc":"2.0","id":3,"result":{"tools":[)"
                              R"({"name":"echo","title":"Echo","description":"Echoes",)"
                              R"("inputSchema":{"type":"object","properties":{"x":{}}}},)"
                              R"({"name":"calc__add","inputSchema":{"type":"object"}}]}})");
  EXPECT_EQ(backend_.orgs, std::vector<std::string>{"org-1"});
  ASSERT_EQ(backend_.jobs.size(), 1u);  // the MCP function was asked for its tools
  EXPECT_EQ(backend_.jobs[0].function_id(), "22222222-0000-4000-8000-000000000002");
  EXPECT_EQ(backend_.jobs[0].event_json(),
            R"({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}})");
  EXPECT_FALSE(backend_.jobs[0].env_keys_present());  // it declares no keys
}

TEST_F(WorkspaceTest, AListedMcpFunctionIsListedWithoutRunningAnything) {
  backend_.tools.mutable_tools(1)->mutable_listing()->set_tools_json(
      R"([{"name":"add","inputSchema":{"type":"object"}},{"name":"sub"}])");
  HttpAnswer a = Call(R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})");
  EXPECT_EQ(a.status, 200);
  EXPECT_NE(Unpriced(a.body).find(R"({"name":"calc__add","inputSchema":{"type":"object"}},)"
                                  R"({"name":"calc__sub"})"),
            std::string::npos)
      << a.body;
  EXPECT_TRUE(backend_.jobs.empty());  // no handler ran, nothing was charged
}

TEST_F(WorkspaceTest, ResourcesAndPromptsOfListedFunctionsAreMergedAndForwarded) {
  v1::McpListing* listing = backend_.tools.mutable_tools(1)->mutable_listing();
  listing->set_tools_json("[]");
  listing->set_resources_json(R"([{"uri":"test://static","name":"s"},{"name":"no uri"}])");
  listing->set_resource_templates_json(R"([{"uriTemplate":"test://t/{id}","name":"t"}])");
  listing->set_prompts_json(R"([{"name":"greet","arguments":[]}])");

  EXPECT_EQ(Call(R"({"jsonrpc":"2.0","id":1,"method":"resources/list"})").body,
            R"({"jsonrpc":"2.0","id":1,"result":{"resources":[)"
            R"({"uri":"toolgate://calc/test://static","name":"s"}]}})");
  EXPECT_EQ(Call(R"({"jsonrpc":"2.0","id":2,"method":"resources/templates/list"})").body,
            R"({"jsonrpc":"2.0","id":2,"result":{"resourceTemplates":[)"
            R"({"uriTemplate":"toolgate://calc/test://t/{id}","name":"t"}]}})");
  EXPECT_EQ(
      Call(R"({"jsonrpc":"2.0","id":3,"method":"prompts/list"})").body,
      R"({"jsonrpc":"2.0","id":3,"result":{"prompts":[{"name":"calc__greet","arguments":[]}]}})");
  EXPECT_TRUE(backend_.jobs.empty());  // listings: nothing ran

  Call(R"({"jsonrpc":"2.0","id":4,"method":"resources/read","params":)"
       R"({"uri":"toolgate://calc/test://t/7"}})");
  ASSERT_EQ(backend_.jobs.size(), 1u);
  EXPECT_EQ(backend_.jobs[0].function_id(), "22222222-0000-4000-8000-000000000002");
  EXPECT_EQ(backend_.jobs[0].event_json(),
            R"({"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"test://t/7"}})");
  Call(R"({"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"calc__greet",)"
       R"("arguments":{"who":"Ada"}}})");
  ASSERT_EQ(backend_.jobs.size(), 2u);
  EXPECT_EQ(backend_.jobs[1].event_json(),
            R"({"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"greet",)"
            R"("arguments":{"who":"Ada"}}})");
}

TEST_F(WorkspaceTest, AnMcpFunctionThatCannotListIsLeftOut) {
  backend_.handler = [](const v1::InvokeJob&) {
    v1::InvokeReply reply;
    *reply.mutable_problem() = core::MakeProblem("insufficient_balance", "top up");
    return reply;
  };
  HttpAnswer a = Call(R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body.find("calc__"), std::string::npos);
  EXPECT_NE(a.body.find(R"("name":"echo")"), std::string::npos);
}

// Each entry says what a call costs this organization: the fee (none for its own function), the
// version's recent median compute and the compute of its whole timeout, from billing.
TEST_F(WorkspaceTest, ToolsListShowsEachToolsPrice) {
  v1::WorkspaceTool* echo = backend_.tools.mutable_tools(0);
  echo->set_version("1.2.0");
  echo->set_price_micro_usd(2500);
  echo->set_compute_type(v1::COMPUTE_TYPE_GPU);
  echo->set_timeout_ms(3000);
  echo->set_memory_mb(256);
  v1::WorkspaceTool* calc = backend_.tools.mutable_tools(1);
  calc->set_version("0.1.0");
  calc->set_price_micro_usd(900);
  calc->set_owned(true);
  calc->mutable_listing()->set_tools_json(R"([{"name":"add","_meta":{"mine":1}}])");
  backend_.medians["11111111-0000-4000-8000-000000000001 1.2.0"] = 12;
  backend_.max_compute_micro_usd = 500;
  HttpAnswer a = Call(R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})");
  EXPECT_EQ(a.status, 200);
  EXPECT_NE(a.body.find(R"("name":"echo",)"), std::string::npos) << a.body;
  EXPECT_NE(a.body.find(R"("_meta":{"io.toolgate/price":{"currency":"USD",)"
                        R"("function_micro_usd":2500,"expected_compute_micro_usd":12,)"
                        R"("max_compute_micro_usd":500,"max_hold_micro_usd":3000}})"),
            std::string::npos)
      << a.body;
  // The organization's own MCP function: no fee, no calls yet; the tool's own _meta is kept.
  EXPECT_NE(a.body.find(R"({"name":"calc__add","_meta":{"mine":1,"io.toolgate/price":)"
                        R"({"currency":"USD","function_micro_usd":0,)"
                        R"("expected_compute_micro_usd":null,"max_compute_micro_usd":500,)"
                        R"("max_hold_micro_usd":500}}})"),
            std::string::npos)
      << a.body;
  ASSERT_EQ(backend_.median_requests.size(), 2u);
  EXPECT_EQ(backend_.median_requests[0].version(), "1.2.0");
  EXPECT_EQ(backend_.median_requests[0].compute_type(), v1::COMPUTE_TYPE_GPU);
  EXPECT_EQ(backend_.median_requests[0].timeout_ms(), 3000);
  EXPECT_EQ(backend_.median_requests[0].memory_mb(), 256);
}

TEST_F(WorkspaceTest, ToolsAreListedWithTheirFeesWhenBillingCannotSayMore) {
  backend_.tools.mutable_tools(0)->set_price_micro_usd(2500);
  backend_.tools.mutable_tools(1)->mutable_listing()->set_tools_json(R"([{"name":"add"}])");
  backend_.medians_problem = core::MakeProblem("service_unavailable", "billing is down");
  HttpAnswer a = Call(R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})");
  EXPECT_EQ(a.status, 200);
  EXPECT_NE(a.body.find(R"("function_micro_usd":2500,"expected_compute_micro_usd":null,)"
                        R"("max_compute_micro_usd":0,"max_hold_micro_usd":2500)"),
            std::string::npos)
      << a.body;
  EXPECT_NE(a.body.find(R"("name":"calc__add")"), std::string::npos);
}

// A call's result says what it cost and what is left, for a plain function and for a tool of
// an MCP function (beside the handler's own _meta).
TEST_F(WorkspaceTest, ACallsResultCarriesItsCost) {
  backend_.handler = [](const v1::InvokeJob& job) {
    v1::InvokeReply reply =
        job.function_id() == "11111111-0000-4000-8000-000000000001"
            ? HandlerAnswer(200, R"({"y":2})")
            : HandlerAnswer(200, R"({"jsonrpc":"2.0","id":"c","result":{"content":[],)"
                                 R"("_meta":{"own":true}}})");
    v1::Summary* s = reply.mutable_result()->mutable_summary();
    s->mutable_cost()->set_total_micro_usd(2507);
    s->mutable_cost()->set_compute_micro_usd(7);
    s->mutable_cost()->set_function_micro_usd(2500);
    s->set_available_after_micro_usd(97493);
    s->set_budget_remaining_micro_usd(7493);
    s->set_budget_limit("key_daily");
    return reply;
  };
  const std::string cost =
      R"("io.toolgate/cost":{"currency":"USD","total_micro_usd":2507,"compute_micro_usd":7,)"
      R"("function_micro_usd":2500,"available_micro_usd":97493,)"
      R"("budget_remaining_micro_usd":7493,"budget_limit":"key_daily","execution_id":"exec-1"})";
  HttpAnswer plain = Call(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":)"
                          R"({"name":"echo","arguments":{"x":1}}})");
  EXPECT_NE(plain.body.find(R"("isError":false,"_meta":{)" + cost + "}}"), std::string::npos)
      << plain.body;
  HttpAnswer forwarded = Call(R"({"jsonrpc":"2.0","id":"c","method":"tools/call","params":)"
                              R"({"name":"calc__add","arguments":{}}})");
  EXPECT_EQ(forwarded.body, R"({"jsonrpc":"2.0","id":"c","result":{"content":[],)"
                            R"("_meta":{"own":true,)" +
                                cost + "}}}");
}

TEST_F(WorkspaceTest, CallingAFunction) {
  backend_.handler = [](const v1::InvokeJob&) { return HandlerAnswer(200, R"({"y":2})"); };
  HttpAnswer a = Call(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo",)"
                      R"("arguments":{"x":1}}})");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(Unpriced(a.body),
            R"({"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text",)"
            R"("text":"{\"y\":2}"}],"structuredContent":{"y":2},"isError":false}})");
  ASSERT_EQ(backend_.jobs.size(), 1u);
  EXPECT_EQ(backend_.jobs[0].function_id(), "11111111-0000-4000-8000-000000000001");
  EXPECT_EQ(backend_.jobs[0].version(), "");  // the latest
  EXPECT_EQ(backend_.jobs[0].event_json(), R"({"x":1})");
  EXPECT_EQ(backend_.jobs[0].env_keys_header(), "TOKEN=sec-1");

  backend_.handler = [](const v1::InvokeJob&) { return HandlerAnswer(404, R"("no such city")"); };
  HttpAnswer failed =
      Call(R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo"}})");
  EXPECT_NE(failed.body.find(R"("isError":true)"), std::string::npos);
  EXPECT_EQ(backend_.jobs.back().event_json(), "{}");
}

TEST_F(WorkspaceTest, CallingAToolOfAnMcpFunctionForwardsTheCall) {
  HttpAnswer a = Call(R"({"jsonrpc":"2.0","id":"c","method":"tools/call","params":)"
                      R"({"name":"calc__add","arguments":{"a":1,"b":2}}})");
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(Unpriced(a.body),
            R"({"jsonrpc":"2.0","id":"c","result":{}})");  // the function's answer
  ASSERT_EQ(backend_.jobs.size(), 1u);
  EXPECT_EQ(backend_.jobs[0].function_id(), "22222222-0000-4000-8000-000000000002");
  EXPECT_EQ(backend_.jobs[0].event_json(), R"({"jsonrpc":"2.0","id":"c","method":"tools/call",)"
                                           R"("params":{"name":"add","arguments":{"a":1,"b":2}}})");
}

TEST_F(WorkspaceTest, ArgumentsTooDeepAreRefusedBeforeAnythingRuns) {
  std::string arguments = "{}";
  for (size_t level = 1; level < core::kMaxEventDepth; ++level) arguments = "[" + arguments + "]";
  HttpAnswer a = Call(R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo",)"
                      R"("arguments":{"x":)" +
                      arguments + "}}}");
  EXPECT_EQ(a.status, 200);
  auto doc = ParseJson(a.body);
  ASSERT_TRUE(doc.ok()) << a.body;
  EXPECT_EQ(int64_t(doc->root["id"]), 9);
  EXPECT_EQ(int64_t(doc->root["error"]["code"]), kJsonRpcInvalidParams);
  EXPECT_EQ(std::string_view(doc->root["error"]["message"]), TooDeepMessage());
  EXPECT_TRUE(backend_.jobs.empty());
  EXPECT_TRUE(backend_.orgs.empty());
}

TEST_F(McpEndpointTest, AMessageTooDeepIsRefusedBeforeTheHandlerRuns) {
  std::string session = Initialize();
  const size_t jobs = backend_.jobs.size();
  std::string deep = "1";
  for (size_t level = 1; level < core::kMaxEventDepth; ++level) deep = "[" + deep + "]";
  HttpAnswer a = Send(Post(
      R"({"jsonrpc":"2.0","id":"d","method":"tools/call","params":{"name":"t","arguments":{"v":)" +
          deep + "}}}",
      session));
  EXPECT_EQ(a.status, 200);
  EXPECT_NE(a.body.find(R"("id":"d","error":{"code":-32602)"), std::string::npos) << a.body;
  EXPECT_EQ(backend_.jobs.size(), jobs);
}

TEST_F(WorkspaceTest, JsonRpcErrors) {
  auto code = [this](const std::string& body) {
    auto doc = ParseJson(Call(body).body);
    EXPECT_TRUE(doc.ok());
    return doc.ok() ? int64_t(doc->root["error"]["code"]) : 0;
  };
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}})"),
            -32602);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}})"), -32602);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",)"
                 R"("arguments":[1]}})"),
            -32602);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1,"method":"resources/subscribe"})"), -32601);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1,"method":"resources/read","params":)"
                 R"({"uri":"toolgate://nobody/x"}})"),
            -32602);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"echo"}})"),
            -32602);  // a plain function has no prompts
  EXPECT_TRUE(backend_.jobs.empty());
  HttpAnswer ping = Call(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
  EXPECT_EQ(ping.body, R"({"jsonrpc":"2.0","id":1,"result":{}})");
}

// Session era: a handler's input requests become server-to-client requests on the response
// stream, and the client's answers run the handler again.
TEST_F(McpEndpointTest, InputRequestsOfASessionsHandlerAreAskedOfTheClient) {
  backend_.handler = [](const v1::InvokeJob& job) {
    if (job.event_json().find(R"("method":"initialize")") != std::string::npos) {
      return TemplateLike(job);
    }
    if (NestedString(job.event_json(), "params", "requestState") == "st") {
      return HandlerAnswer(200, R"({"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text",)"
                                R"("text":"done"}]}})");
    }
    return HandlerAnswer(
        200,
        R"({"jsonrpc":"2.0","id":4,"result":{"resultType":"input_required",)"
        R"("inputRequests":{"s":{"method":"sampling/createMessage","params":{"maxTokens":5}}},)"
        R"("requestState":"st"}})");
  };
  McpHttpRequest init = Post(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":)"
                             R"({"protocolVersion":"2025-11-25","capabilities":{"sampling":{}}}})");
  const std::string session = Header(Send(std::move(init)), "Mcp-Session-Id");
  ASSERT_FALSE(session.empty());

  std::optional<HttpAnswer> answer;
  std::vector<std::string> events;
  endpoint_->Handle(
      Post(R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ask"}})", session),
      [&answer](HttpAnswer a) { answer = std::move(a); },
      [&events](std::string json) { events.push_back(std::move(json)); });
  ASSERT_FALSE(answer.has_value());  // waiting for the client
  ASSERT_EQ(events.size(), 1u);
  // The handler was told what the client can do.
  EXPECT_NE(backend_.jobs.back().event_json().find(
                R"("_meta":{"io.modelcontextprotocol/clientCapabilities":{"sampling":{}}})"),
            std::string::npos)
      << backend_.jobs.back().event_json();
  auto request = ParseJson(events[0]);
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(std::string(request->root["method"].get_string().value()), "sampling/createMessage");
  const std::string id(request->root["id"].get_string().value());
  EXPECT_TRUE(id.starts_with("tgb1.")) << id;

  // An answer under another session's id goes nowhere.
  std::string other = Initialize("2025-11-25");
  EXPECT_EQ(Send(Post(R"({"jsonrpc":"2.0","id":")" + id + R"(","result":{"x":1}})", other)).status,
            202);
  EXPECT_FALSE(answer.has_value());

  EXPECT_EQ(
      Send(Post(R"({"jsonrpc":"2.0","id":")" + id +
                    R"(","result":{"role":"assistant","content":{"type":"text","text":"hi"}}})",
                session))
          .status,
      202);
  ASSERT_TRUE(answer.has_value());
  EXPECT_NE(answer->body.find(R"("text":"done")"), std::string::npos) << answer->body;
  const std::string& rerun = backend_.jobs.back().event_json();
  EXPECT_NE(rerun.find(R"("inputResponses":{"s":{"role":"assistant")"), std::string::npos) << rerun;
  EXPECT_NE(rerun.find(R"("requestState":"st")"), std::string::npos) << rerun;
}

TEST_F(McpEndpointTest, InputTheClientDidNotDeclareIsAToolFailureNotARequest) {
  backend_.handler = [](const v1::InvokeJob& job) {
    if (job.event_json().find(R"("method":"initialize")") != std::string::npos) {
      return TemplateLike(job);
    }
    return HandlerAnswer(200,
                         R"({"jsonrpc":"2.0","id":4,"result":{"resultType":"input_required",)"
                         R"("inputRequests":{"e":{"method":"elicitation/create","params":{}}}}})");
  };
  std::string session = Initialize("2025-11-25");  // declares no capabilities
  HttpAnswer a = Send(
      Post(R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x"}})", session));
  EXPECT_TRUE(events_.empty());
  EXPECT_NE(a.body.find(R"("code":-32603)"), std::string::npos) << a.body;
  EXPECT_NE(a.body.find("elicitation capability"), std::string::npos) << a.body;
}

// Requests of the stateless revision (2026-07-28): no session; _meta and headers on each.
class StatelessTest : public McpEndpointTest {
 protected:
  static constexpr char kMeta[] =
      R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
      R"("io.modelcontextprotocol/clientCapabilities":{}})";

  // A request of `method` whose params are `params` (members, without braces) and the _meta,
  // with the headers a conforming client sends.
  McpHttpRequest Request(const std::string& method, const std::string& params = "",
                         std::optional<std::string> name = std::nullopt, int id = 1) {
    McpHttpRequest r =
        Post(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + method +
             R"(","params":{)" + params + (params.empty() ? "" : ",") + kMeta + "}}");
    r.protocol_version = "2026-07-28";
    r.mcp_method = method;
    r.mcp_name = std::move(name);
    return r;
  }

  static int64_t ErrorCode(const HttpAnswer& a) {
    auto doc = ParseJson(a.body);
    simdjson::dom::object obj, error;
    int64_t code = 0;
    if (doc.ok() && doc->root.get_object().get(obj) == simdjson::SUCCESS &&
        obj["error"].get_object().get(error) == simdjson::SUCCESS) {
      GetInt(error, "code", &code);
    }
    return code;
  }
};

TEST_F(StatelessTest, ARequestNeedsNoSessionAndTheHandlerGetsItAsSent) {
  McpHttpRequest r = Request("tools/list");
  const std::string body = r.body;
  HttpAnswer a = Send(std::move(r));
  EXPECT_EQ(a.status, 200) << a.body;
  // resultType added to the handler's result, which lacked it; no session is issued.
  EXPECT_EQ(a.body, R"({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"add",)"
                    R"("inputSchema":{"type":"object"}}],"resultType":"complete"}})");
  EXPECT_EQ(Header(a, "Mcp-Session-Id"), "");
  ASSERT_EQ(backend_.jobs.size(), 1u);
  EXPECT_EQ(backend_.jobs[0].event_json(), body);
  EXPECT_EQ(backend_.jobs[0].api_key_sha256(), Sha256("key-1"));
}

TEST_F(StatelessTest, AWrongEnvelopeIsRefusedBeforeAnythingRuns) {
  McpHttpRequest no_meta = Post(R"({"jsonrpc":"2.0","id":5,"method":"server/discover"})");
  no_meta.protocol_version = "2026-07-28";
  no_meta.mcp_method = "server/discover";
  HttpAnswer a = Send(std::move(no_meta));
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(ErrorCode(a), kJsonRpcInvalidParams);
  EXPECT_NE(a.body.find(R"("id":5)"), std::string::npos) << a.body;

  McpHttpRequest no_capabilities =
      Post(R"({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":)"
           R"({"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})");
  no_capabilities.protocol_version = "2026-07-28";
  no_capabilities.mcp_method = "server/discover";
  EXPECT_EQ(ErrorCode(Send(std::move(no_capabilities))), kJsonRpcInvalidParams);

  McpHttpRequest no_version_header = Request("tools/list");
  no_version_header.protocol_version.reset();
  a = Send(std::move(no_version_header));
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(ErrorCode(a), kJsonRpcHeaderMismatch);

  McpHttpRequest other_version = Request("tools/list");
  other_version.protocol_version = "2025-11-25";
  EXPECT_EQ(ErrorCode(Send(std::move(other_version))), kJsonRpcHeaderMismatch);

  McpHttpRequest unknown =
      Post(R"({"jsonrpc":"2.0","id":7,"method":"server/discover","params":{"_meta":)"
           R"({"io.modelcontextprotocol/protocolVersion":"v999.0.0",)"
           R"("io.modelcontextprotocol/clientCapabilities":{}}}})");
  unknown.protocol_version = "v999.0.0";
  unknown.mcp_method = "server/discover";
  a = Send(std::move(unknown));
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(a.body, R"({"jsonrpc":"2.0","id":7,"error":{"code":-32022,)"
                    R"("message":"Unsupported protocol version: v999.0.0","data":{"supported":)"
                    R"(["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],)"
                    R"("requested":"v999.0.0"}}})");

  McpHttpRequest method = Request("tools/list");
  method.mcp_method = "tools/call";  // a router would see a call; the body lists
  EXPECT_EQ(ErrorCode(Send(std::move(method))), kJsonRpcHeaderMismatch);

  McpHttpRequest no_name = Request("tools/call", R"("name":"add","arguments":{})");
  EXPECT_EQ(ErrorCode(Send(std::move(no_name))), kJsonRpcHeaderMismatch);
  McpHttpRequest wrong_name = Request("tools/call", R"("name":"add","arguments":{})", "sub");
  EXPECT_EQ(ErrorCode(Send(std::move(wrong_name))), kJsonRpcHeaderMismatch);
  McpHttpRequest wrong_uri = Request("resources/read", R"("uri":"file:///a")", "file:///b");
  EXPECT_EQ(ErrorCode(Send(std::move(wrong_uri))), kJsonRpcHeaderMismatch);
  EXPECT_TRUE(backend_.jobs.empty());

  // The base64 form of Mcp-Name is decoded before it is compared.
  McpHttpRequest encoded = Request("tools/call", R"("name":"add","arguments":{})",
                                   "=?base64?" + Base64Encode("add") + "?=");
  EXPECT_EQ(Send(std::move(encoded)).status, 200);
  EXPECT_EQ(backend_.jobs.size(), 1u);
}

TEST_F(StatelessTest, MethodNotFoundIs404AndRemovedMethodsReachTheHandler) {
  backend_.handler = [](const v1::InvokeJob&) {
    return HandlerAnswer(
        200, R"({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no such method"}})");
  };
  // initialize with a stateless _meta is of this revision, where it no longer exists.
  HttpAnswer a = Send(Request("initialize", R"("protocolVersion":"2025-11-25")"));
  EXPECT_EQ(a.status, 404);
  EXPECT_EQ(ErrorCode(a), kJsonRpcMethodNotFound);
  EXPECT_EQ(Header(a, "Mcp-Session-Id"), "");
  EXPECT_EQ(backend_.jobs.size(), 1u);
}

TEST_F(StatelessTest, RequestStateIsSealedOnTheWayOutAndOpenedOnTheWayBack) {
  std::vector<std::string> states_seen;
  backend_.handler = [&states_seen](const v1::InvokeJob& job) {
    auto state = NestedString(job.event_json(), "params", "requestState");
    if (state) {
      states_seen.push_back(*state);
      return HandlerAnswer(200, R"({"jsonrpc":"2.0","id":2,"result":{"content":[]}})");
    }
    return HandlerAnswer(
        200, R"({"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required",)"
             R"("inputRequests":{"q":{"method":"roots/list"}},"requestState":"round-1"}})");
  };
  HttpAnswer first = Send(Request("tools/call", R"("name":"ask")", "ask"));
  ASSERT_EQ(first.status, 200) << first.body;
  auto sealed = NestedString(first.body, "result", "requestState");
  ASSERT_TRUE(sealed.has_value()) << first.body;
  EXPECT_TRUE(sealed->starts_with("tgs1.")) << *sealed;
  EXPECT_EQ(sealed->find("round-1"), std::string::npos);

  auto retry = [&](const std::string& state, std::string key = "key-1") {
    McpHttpRequest r = Request("tools/call",
                               R"("name":"ask","inputResponses":{"q":{"roots":[]}},)"
                               R"("requestState":")" +
                                   state + "\"",
                               "ask", 2);
    r.api_key = std::move(key);
    return Send(std::move(r));
  };
  HttpAnswer second = retry(*sealed);
  EXPECT_EQ(second.status, 200) << second.body;
  EXPECT_EQ(states_seen, std::vector<std::string>{"round-1"});

  const size_t runs = backend_.jobs.size();
  HttpAnswer tampered = retry(*sealed + "-TAMPERED");
  EXPECT_EQ(tampered.status, 400);
  EXPECT_EQ(ErrorCode(tampered), kJsonRpcInvalidParams);
  EXPECT_EQ(ErrorCode(retry("round-1")), kJsonRpcInvalidParams);         // the bare state
  EXPECT_EQ(ErrorCode(retry(*sealed, "key-2")), kJsonRpcInvalidParams);  // another caller's
  McpHttpRequest elsewhere =
      Request("tools/call", R"("name":"ask","requestState":")" + *sealed + "\"", "ask");
  elsewhere.version = "2.0.0";  // another endpoint: the version's own
  EXPECT_EQ(ErrorCode(Send(std::move(elsewhere))), kJsonRpcInvalidParams);
  now_ms_ += 3600LL * 1000 + 1;
  EXPECT_EQ(ErrorCode(retry(*sealed)), kJsonRpcInvalidParams);  // expired
  EXPECT_EQ(backend_.jobs.size(), runs);                        // none of them ran
  EXPECT_EQ(states_seen.size(), 1u);
}

TEST_F(StatelessTest, TheWorkspaceDiscoversListsWithCachingHintsAndForwardsTheMeta) {
  v1::WorkspaceTool* calc = backend_.tools.add_tools();
  calc->set_function_id("22222222-0000-4000-8000-000000000002");
  calc->set_name("Calc");
  calc->set_mcp(true);

  McpHttpRequest discover = Request("server/discover");
  discover.workspace = true;
  HttpAnswer a = Send(std::move(discover));
  EXPECT_EQ(a.status, 200) << a.body;
  auto doc = ParseJson(a.body);
  ASSERT_TRUE(doc.ok());
  simdjson::dom::element result = doc->root["result"];
  EXPECT_EQ(std::string(result["supportedVersions"].at(0).get_string().value()), "2026-07-28");
  EXPECT_TRUE(result["capabilities"]["tools"].is_object());
  EXPECT_EQ(std::string(result["resultType"].get_string().value()), "complete");
  EXPECT_EQ(std::string(
                result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"].get_string().value()),
            "toolgate");

  McpHttpRequest list = Request("tools/list");
  list.workspace = true;
  a = Send(std::move(list));
  EXPECT_EQ(Unpriced(a.body),
            R"({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"calc__add",)"
            R"("inputSchema":{"type":"object"}}],"ttlMs":60000,"cacheScope":"private",)"
            R"("resultType":"complete"}})");
  ASSERT_EQ(backend_.jobs.size(), 1u);
  EXPECT_NE(backend_.jobs[0].event_json().find(kMeta), std::string::npos)
      << backend_.jobs[0].event_json();

  // The session era's methods do not exist in this revision.
  McpHttpRequest ping = Request("ping");
  ping.workspace = true;
  a = Send(std::move(ping));
  EXPECT_EQ(a.status, 404);
  EXPECT_EQ(ErrorCode(a), kJsonRpcMethodNotFound);
}

TEST_F(StatelessTest, AForeignHostIsRefusedBeforeTheKeyIsChecked) {
  McpHttpRequest r = Request("tools/list");
  r.workspace = true;
  r.host = "evil.example.com:8080";
  HttpAnswer a = Send(std::move(r));
  EXPECT_EQ(a.status, 403);
  EXPECT_EQ(Code(a), "forbidden");
  EXPECT_TRUE(backend_.authenticated.empty());
  EXPECT_TRUE(backend_.orgs.empty());
}

v1::HandlerNotice ProgressNotice(double progress) {
  v1::HandlerNotice n;
  n.mutable_progress()->set_progress(progress);
  n.mutable_progress()->set_total(100);
  n.mutable_progress()->set_has_total(true);
  n.set_timeout_ms(1000);
  return n;
}

v1::HandlerNotice LogNotice(const std::string& level, const std::string& data_json) {
  v1::HandlerNotice n;
  n.mutable_log()->set_level(level);
  n.mutable_log()->set_data_json(data_json);
  return n;
}

TEST_F(McpEndpointTest, ProgressGoesOnTheResponseStreamWhenTheRequestHasAToken) {
  backend_.notices = {ProgressNotice(0), LogNotice("info", R"("started")"), ProgressNotice(50)};
  std::string session = Initialize("2025-11-25");
  HttpAnswer a = Send(Post(R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":)"
                           R"("slow","_meta":{"progressToken":"p-1"}}})",
                           session));
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(Unpriced(a.body), R"({"jsonrpc":"2.0","id":4,"result":{}})");
  // No log level was set: the log notice is not the client's to see.
  EXPECT_EQ(events_, (std::vector<std::string>{
                         R"({"jsonrpc":"2.0","method":"notifications/progress","params":)"
                         R"({"progressToken":"p-1","progress":0,"total":100}})",
                         R"({"jsonrpc":"2.0","method":"notifications/progress","params":)"
                         R"({"progressToken":"p-1","progress":50,"total":100}})"}));
  ASSERT_EQ(backend_.jobs.size(), 2u);
  EXPECT_FALSE(backend_.jobs[0].stream_notices());  // initialize asked for nothing
  EXPECT_TRUE(backend_.jobs[1].stream_notices());

  // Without a token (and no level) the executor is not asked to send any.
  Send(Post(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow"}})", session));
  EXPECT_FALSE(backend_.jobs.back().stream_notices());
  EXPECT_TRUE(events_.empty());
}

TEST_F(McpEndpointTest, LogsFollowTheLevelTheSessionSet) {
  std::string session = Initialize("2025-11-25");
  Send(Post(R"({"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"warning"}})",
            session));
  ASSERT_EQ(backend_.log_levels.size(), 1u);  // broadcast to every replica
  EXPECT_EQ(backend_.log_levels[0].level(), "warning");
  EXPECT_EQ(backend_.jobs.size(), 2u);  // the handler answers setLevel itself

  backend_.notices = {LogNotice("info", R"("quiet")"), LogNotice("error", R"({"code":7})")};
  Send(Post(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}})", session));
  EXPECT_EQ(events_, std::vector<std::string>{
                         R"({"jsonrpc":"2.0","method":"notifications/message","params":)"
                         R"({"level":"error","data":{"code":7}}})"});

  // A level another replica recorded (the broadcast) counts the same.
  std::string other = Initialize("2025-11-25");
  auto verified = codec_.Verify(other, Sha256("key-1"), now_ms_);
  ASSERT_TRUE(verified.has_value());
  levels_.Set(verified->nonce, "debug", verified->expires_at_ms);
  Send(Post(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}})", other));
  EXPECT_EQ(events_.size(), 2u);
}

TEST_F(McpEndpointTest, AProblemAfterNotificationsEndsTheStreamAsAJsonRpcError) {
  backend_.notices = {ProgressNotice(10)};
  backend_.handler = [](const v1::InvokeJob& job) {
    v1::InvokeReply reply;
    if (job.stream_notices()) {
      *reply.mutable_problem() = core::MakeProblem("upstream_timeout", "No answer in time.");
      return reply;
    }
    return TemplateLike(job);
  };
  std::string session = Initialize("2025-11-25");
  HttpAnswer a = Send(Post(R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":)"
                           R"("slow","_meta":{"progressToken":1}}})",
                           session));
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_EQ(a.content_type, "application/json");
  EXPECT_NE(a.body.find(R"("id":9,"error":{"code":-32603)"), std::string::npos) << a.body;
  EXPECT_NE(a.body.find("upstream_timeout"), std::string::npos) << a.body;
}

TEST_F(StatelessTest, TheLogLevelComesWithEachRequest) {
  backend_.notices = {LogNotice("debug", "1"), LogNotice("notice", "2")};
  HttpAnswer a = Send(Request("tools/call",
                              R"("name":"x","_meta":{"io.modelcontextprotocol/logLevel":"info",)"
                              R"("io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
                              R"("io.modelcontextprotocol/clientCapabilities":{}})",
                              "x"));
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(events_, std::vector<std::string>{
                         R"({"jsonrpc":"2.0","method":"notifications/message","params":)"
                         R"({"level":"notice","data":2}})"});

  // Without the field: no logs, and the executor is not asked for any.
  a = Send(Request("tools/call", R"("name":"x")", "x"));
  EXPECT_TRUE(events_.empty());
  EXPECT_FALSE(backend_.jobs.back().stream_notices());

  const size_t runs = backend_.jobs.size();
  a = Send(Request("tools/call",
                   R"("name":"x","_meta":{"io.modelcontextprotocol/logLevel":"loud",)"
                   R"("io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
                   R"("io.modelcontextprotocol/clientCapabilities":{}})",
                   "x"));
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(ErrorCode(a), kJsonRpcInvalidParams);
  EXPECT_EQ(backend_.jobs.size(), runs);
}

TEST_F(StatelessTest, TheWorkspaceStreamsListChangesToItsListeners) {
  v1::WorkspaceTool* echo = backend_.tools.add_tools();
  echo->set_function_id("11111111-0000-4000-8000-000000000001");
  echo->set_name("Echo");
  McpHttpRequest listen = Request("subscriptions/listen",
                                  R"("notifications":{"toolsListChanged":true,)"
                                  R"("resourceSubscriptions":["test://x"]})",
                                  std::nullopt, 9);
  listen.workspace = true;
  std::optional<HttpAnswer> answer;
  std::vector<std::string> events;
  endpoint_->Handle(
      std::move(listen), [&answer](HttpAnswer a) { answer = std::move(a); },
      [&events](std::string json) { events.push_back(std::move(json)); });
  ASSERT_FALSE(answer.has_value());  // the stream stays open
  // The acknowledgment first, naming what is honoured (not resource updates).
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0], R"({"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged",)"
                       R"("params":{"_meta":{"io.modelcontextprotocol/subscriptionId":9},)"
                       R"("notifications":{"toolsListChanged":true}}})");

  endpoint_->FunctionChanged("22222222-0000-4000-8000-000000000002");  // not in its workspace
  EXPECT_EQ(events.size(), 1u);
  endpoint_->FunctionChanged("11111111-0000-4000-8000-000000000001");
  endpoint_->WorkspaceChanged("org-1");
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[1], WorkspaceListeners::ListChanged("tools", "9"));

  // Its lifetime up, it ends with the listen request's answer.
  ASSERT_EQ(backend_.timers.size(), 1u);
  backend_.timers[0].second();
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->body, R"({"jsonrpc":"2.0","id":9,"result":{"resultType":"complete",)"
                          R"("_meta":{"io.modelcontextprotocol/subscriptionId":9}}})");
  endpoint_->WorkspaceChanged("org-1");
  EXPECT_EQ(events.size(), 3u);  // nothing after the end
}

}  // namespace
}  // namespace toolgate::edge
