// OAuth 2.1 for MCP clients against a real system (docs/oauth.md): the MCP endpoints as protected
// resources, auth as the authorization server (registration, authorization with PKCE, consent,
// tokens, refresh rotation, revocation), and every hostile case we know: each refusal below
// reproduces an attack.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "mcp_client.h"
#include "system.h"
#include "toolgate/base/crypto.h"

namespace toolgate::testing {
namespace {

constexpr const char* kRedirect = "http://127.0.0.1:9/callback";
constexpr const char* kPreRegisteredId = "acme-cli";
constexpr const char* kPreRegisteredSecret = "tgs_preregistered-test-secret";

// The operator's file of pre-registered clients (docs/oauth.md), written before the system
// starts: one confidential client whose secret's SHA-256 it lists.
std::string PreRegisteredClientsEnv() {
  const std::string path = std::filesystem::temp_directory_path() /
                           ("toolgate-oauth-clients-" + std::to_string(getpid()) + ".json");
  std::ofstream(path) << R"({"clients": [{"client_id": ")" << kPreRegisteredId
                      << R"(", "client_name": "Acme CLI", "redirect_uris": [")" << kRedirect
                      << R"("], "grant_types": ["authorization_code"],)"
                      << R"( "token_endpoint_auth_method": "client_secret_basic",)"
                      << R"( "client_secret_sha256": ")"
                      << "89db13059be9316333536dc20d61ae45f3d55cf5e2fc5398718d5d1655ab1cb7"
                      << R"("}]})";
  return "TOOLGATE_OAUTH_CLIENTS_FILE=" + path;
}

const auto* const kEnv =
    ::testing::AddGlobalTestEnvironment(new SharedSystem({}, {PreRegisteredClientsEnv()}));
// The revocation bound every edge must meet (docs/oauth.md).
constexpr int kRevocationBoundMs = 5000;

std::string Form(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string out;
  for (const auto& [k, v] : params) {
    if (!out.empty()) out += '&';
    out += http::UrlEncode(k) + "=" + http::UrlEncode(v);
  }
  return out;
}

// A query parameter of a URL ("" when absent), decoded.
std::string QueryOf(const std::string& url, const std::string& name) {
  size_t q = url.find('?');
  if (q == std::string::npos) return "";
  std::string query = url.substr(q + 1);
  std::stringstream in(query);
  for (std::string pair; std::getline(in, pair, '&');) {
    size_t eq = pair.find('=');
    if (pair.substr(0, eq) != name) continue;
    std::string v = eq == std::string::npos ? "" : pair.substr(eq + 1), out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] == '%' && i + 2 < v.size()) {
        out += static_cast<char>(std::stoi(v.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        out += v[i] == '+' ? ' ' : v[i];
      }
    }
    return out;
  }
  return "";
}

struct Pkce {
  std::string verifier = Base64UrlEncode(RandomBytes(32));
  std::string challenge = Base64UrlEncode(Sha256(verifier));
};

struct Tokens {
  std::string access;
  std::string refresh;
};

class OAuthTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    owner_ = new Account(*g_system, "OAuth Owner");
    owner_->TopUp(50'000'000);
    owner_key_ = owner_->CreateKey(R"(["invoke","manage"])");
    function_ = PublishTemplate(owner_key_, "oauth-lua-mcp", "lua", true);
    other_function_ = PublishTemplate(owner_key_, "oauth-lua-mcp-2", "lua", true);
  }
  static void TearDownTestSuite() {
    delete owner_;
    owner_ = nullptr;
  }

  static http::HttpResponse Do(const std::string& method, const std::string& path,
                               const std::string& body = "", http::HeaderList headers = {}) {
    auto r = g_system->Client()->Send(method, path, body, headers);
    if (!r.ok()) {
      ADD_FAILURE() << method << " " << path << ": " << r.status().ToString();
      return {};
    }
    return *r;
  }

  // A public client registered dynamically, allowed refresh tokens.
  static std::string RegisterPublicClient(const std::string& name = "Test App") {
    auto r = Do("POST", "/oauth/register",
                R"({"client_name":")" + name + R"(","redirect_uris":[")" + kRedirect +
                    R"("],"grant_types":["authorization_code","refresh_token"],)"
                    R"("token_endpoint_auth_method":"none"})");
    EXPECT_EQ(r.status, 201) << r.body;
    return StringField(r.body, "client_id");
  }

  static std::string Resource(const std::string& path) { return g_system->url() + path; }

  // GET /oauth/authorize; returns the Location (the consent page, or the client's redirect).
  static http::HttpResponse Authorize(const std::string& client_id, const Pkce& pkce,
                                      const std::string& resource,
                                      std::vector<std::pair<std::string, std::string>> extra = {},
                                      const std::string& redirect = kRedirect) {
    std::vector<std::pair<std::string, std::string>> params = {{"response_type", "code"},
                                                               {"client_id", client_id},
                                                               {"redirect_uri", redirect},
                                                               {"code_challenge", pkce.challenge},
                                                               {"code_challenge_method", "S256"},
                                                               {"state", "st-123"},
                                                               {"resource", resource}};
    for (auto& e : extra) {
      std::erase_if(params, [&e](const auto& p) { return p.first == e.first; });
      if (!e.second.empty()) params.push_back(std::move(e));
    }
    return Do("GET", "/oauth/authorize?" + Form(params));
  }

  static std::string RequestIdOf(const http::HttpResponse& authorize) {
    EXPECT_EQ(authorize.status, 302) << authorize.body;
    std::string location = authorize.Header("location");
    EXPECT_EQ(location.rfind("/connect?request=", 0), 0u) << location;
    return QueryOf(location, "request");
  }

  // The member approves the request on the consent page; returns where the browser goes.
  static std::string Approve(Account& member, const std::string& request_id,
                             const std::string& cap = "null") {
    auto r = member.session().Post(
        "/api/v1/oauth/requests/" + request_id + "/approve",
        R"({"organization_id":")" + member.org_id() + R"(","spending_cap_micro_usd":)" + cap + "}");
    EXPECT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : r.status().ToString());
    return r.ok() ? StringField(r->body, "redirect_to") : "";
  }

  // basic: "id:secret" for a confidential client's Basic credentials; empty: a public client.
  static http::HttpResponse Exchange(const std::string& client_id, const std::string& code,
                                     const std::string& verifier, const std::string& basic = "") {
    std::vector<std::pair<std::string, std::string>> form = {{"grant_type", "authorization_code"},
                                                             {"code", code},
                                                             {"redirect_uri", kRedirect},
                                                             {"code_verifier", verifier}};
    http::HeaderList headers = {{"Content-Type", "application/x-www-form-urlencoded"}};
    if (basic.empty()) {
      form.emplace_back("client_id", client_id);
    } else {
      headers.emplace_back("Authorization", "Basic " + Base64Encode(basic));
    }
    return Do("POST", "/oauth/token", Form(form), headers);
  }

  static http::HttpResponse RefreshWith(const std::string& client_id, const std::string& token) {
    return Do(
        "POST", "/oauth/token",
        Form({{"grant_type", "refresh_token"}, {"refresh_token", token}, {"client_id", client_id}}),
        {{"Content-Type", "application/x-www-form-urlencoded"}});
  }

  // The whole flow for member: register, authorize resource_path, approve, exchange.
  static Tokens Connect(Account& member, const std::string& resource_path,
                        std::string* client_id_out = nullptr, const std::string& scope = "",
                        const std::string& cap = "null") {
    std::string client_id = RegisterPublicClient();
    if (client_id_out != nullptr) *client_id_out = client_id;
    Pkce pkce;
    std::vector<std::pair<std::string, std::string>> extra;
    if (!scope.empty()) extra.emplace_back("scope", scope);
    std::string request_id =
        RequestIdOf(Authorize(client_id, pkce, Resource(resource_path), extra));
    std::string redirect_to = Approve(member, request_id, cap);
    EXPECT_EQ(redirect_to.rfind(kRedirect, 0), 0u) << redirect_to;
    EXPECT_EQ(QueryOf(redirect_to, "state"), "st-123");
    EXPECT_EQ(QueryOf(redirect_to, "iss"), g_system->url());
    auto token = Exchange(client_id, QueryOf(redirect_to, "code"), pkce.verifier);
    EXPECT_EQ(token.status, 200) << token.body;
    EXPECT_EQ(token.Header("cache-control"), "no-store");
    return {StringField(token.body, "access_token"), StringField(token.body, "refresh_token")};
  }

  // initialize on an MCP endpoint with a bearer token; the HTTP status.
  static int InitializeWith(const std::string& path, const std::string& token) {
    McpHttp mcp(path, "Bearer " + token);
    return mcp.Initialize("2025-11-25").status;
  }

  static std::string FunctionPath(const std::string& id) { return "/mcp/functions/" + id; }

  static Account* owner_;
  static std::string owner_key_;
  static std::string function_;
  static std::string other_function_;
};

Account* OAuthTest::owner_ = nullptr;
std::string OAuthTest::owner_key_;
std::string OAuthTest::function_;
std::string OAuthTest::other_function_;

TEST_F(OAuthTest, EndpointsAreProtectedResourcesThatPointAtTheAuthorizationServer) {
  const std::string path = FunctionPath(function_);
  auto unauthenticated = McpHttp(path, "").Initialize("2025-11-25");
  EXPECT_EQ(unauthenticated.status, 401);
  EXPECT_EQ(unauthenticated.Header("www-authenticate"),
            "Bearer resource_metadata=\"" + g_system->url() +
                "/.well-known/oauth-protected-resource" + path +
                "\", scope=\"mcp:read mcp:invoke\"");

  auto metadata = Do("GET", "/.well-known/oauth-protected-resource" + path);
  ASSERT_EQ(metadata.status, 200) << metadata.body;
  EXPECT_EQ(StringField(metadata.body, "resource"), g_system->url() + path);
  EXPECT_NE(metadata.body.find("\"authorization_servers\":[\"" + g_system->url() + "\"]"),
            std::string::npos)
      << metadata.body;
  // The root fallback describes the workspace.
  auto root = Do("GET", "/.well-known/oauth-protected-resource");
  EXPECT_EQ(StringField(root.body, "resource"), g_system->url() + "/mcp");

  for (const char* at :
       {"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"}) {
    auto as = Do("GET", at);
    ASSERT_EQ(as.status, 200) << at << as.body;
    EXPECT_EQ(StringField(as.body, "issuer"), g_system->url());
    EXPECT_EQ(StringField(as.body, "token_endpoint"), g_system->url() + "/oauth/token");
    EXPECT_EQ(as.Header("access-control-allow-origin"), "*");
  }
}

TEST_F(OAuthTest, AGrantedTokenCallsItsEndpointAndItsVersionsOnly) {
  // The owner's function is private: only its own organization may be granted it.
  Tokens tokens = Connect(*owner_, FunctionPath(function_));
  ASSERT_FALSE(tokens.access.empty());
  ASSERT_FALSE(tokens.refresh.empty());

  McpHttp mcp(FunctionPath(function_), "Bearer " + tokens.access);
  ASSERT_EQ(mcp.Initialize("2025-11-25").status, 200);
  auto call = mcp.CallTool("echo", R"({"text":"via oauth"})");
  ASSERT_EQ(call.status, 200) << call.body;
  EXPECT_NE(call.body.find("via oauth"), std::string::npos) << call.body;
  // A version endpoint of the function is covered; the workspace and another function are not.
  EXPECT_EQ(InitializeWith(FunctionPath(function_) + "/0.1.0", tokens.access), 200);
  for (const std::string& elsewhere : {std::string("/mcp"), FunctionPath(other_function_)}) {
    auto refused = McpHttp(elsewhere, "Bearer " + tokens.access).Initialize("2025-11-25");
    EXPECT_EQ(refused.status, 401) << elsewhere;
    EXPECT_EQ(Code(refused), "invalid_token") << elsewhere;
    EXPECT_NE(refused.Header("www-authenticate").find("error=\"invalid_token\""),
              std::string::npos);
  }
  // Nor the REST invoke route, nor the management API.
  auto rest = Invoke(*g_system, "Bearer " + tokens.access, function_, "", R"({"event":{}})");
  EXPECT_EQ(rest.status, 401) << rest.body;
  EXPECT_EQ(Code(rest), "invalid_token");
  auto me = Do("GET", "/api/v1/me", "", {{"Authorization", "Bearer " + tokens.access}});
  EXPECT_EQ(me.status, 401) << me.body;

  // The call was billed to the grant's organization and names the client.
  auto executions = owner_->session().Get("/api/v1/executions?limit=5");
  ASSERT_TRUE(executions.ok());
  EXPECT_NE(executions->body.find("\"client_name\":\"Test App\""), std::string::npos)
      << executions->body;
}

TEST_F(OAuthTest, AWorkspaceTokenIsRefusedAtPerToolEndpoints) {
  Tokens tokens = Connect(*owner_, "/mcp");
  EXPECT_EQ(InitializeWith("/mcp", tokens.access), 200);
  EXPECT_EQ(InitializeWith(FunctionPath(function_), tokens.access), 401);
}

TEST_F(OAuthTest, AReadOnlyTokenMustStepUpToCallATool) {
  Tokens tokens = Connect(*owner_, FunctionPath(function_), nullptr, "mcp:read");
  McpHttp mcp(FunctionPath(function_), "Bearer " + tokens.access);
  ASSERT_EQ(mcp.Initialize("2025-11-25").status, 200);
  auto call = mcp.CallTool("echo", R"({"text":"x"})");
  EXPECT_EQ(call.status, 403) << call.body;
  EXPECT_EQ(Code(call), "insufficient_scope");
  EXPECT_EQ(call.Header("www-authenticate"),
            "Bearer error=\"insufficient_scope\", scope=\"mcp:read mcp:invoke\", "
            "resource_metadata=\"" +
                g_system->url() + "/.well-known/oauth-protected-resource" +
                FunctionPath(function_) + "\"");
}

TEST_F(OAuthTest, ACodeUsedTwiceRevokesWhatItsFirstUseIssued) {
  std::string client_id = RegisterPublicClient();
  Pkce pkce;
  std::string redirect_to =
      Approve(*owner_, RequestIdOf(Authorize(client_id, pkce, Resource(FunctionPath(function_)))));
  const std::string code = QueryOf(redirect_to, "code");
  auto first = Exchange(client_id, code, pkce.verifier);
  ASSERT_EQ(first.status, 200) << first.body;
  const std::string access = StringField(first.body, "access_token");
  const std::string refresh = StringField(first.body, "refresh_token");
  ASSERT_EQ(InitializeWith(FunctionPath(function_), access), 200);

  auto second = Exchange(client_id, code, pkce.verifier);
  EXPECT_EQ(second.status, 400);
  EXPECT_EQ(StringField(second.body, "error"), "invalid_grant");
  EXPECT_TRUE(WaitUntil([&] { return InitializeWith(FunctionPath(function_), access) == 401; },
                        kRevocationBoundMs, "the first use's access token to be refused"));
  EXPECT_EQ(StringField(RefreshWith(client_id, refresh).body, "error"), "invalid_grant");
}

TEST_F(OAuthTest, RefreshTokensRotateAndAReusedOneRevokesTheFamily) {
  std::string client_id;
  Tokens first = Connect(*owner_, FunctionPath(function_), &client_id);
  auto rotated = RefreshWith(client_id, first.refresh);
  ASSERT_EQ(rotated.status, 200) << rotated.body;
  Tokens second{StringField(rotated.body, "access_token"),
                StringField(rotated.body, "refresh_token")};
  EXPECT_NE(second.refresh, first.refresh);
  EXPECT_EQ(InitializeWith(FunctionPath(function_), second.access), 200);

  // The old refresh token again: someone else has it. Everything of the grant ends.
  auto reused = RefreshWith(client_id, first.refresh);
  EXPECT_EQ(StringField(reused.body, "error"), "invalid_grant");
  EXPECT_TRUE(
      WaitUntil([&] { return InitializeWith(FunctionPath(function_), second.access) == 401; },
                kRevocationBoundMs, "the rotated access token to be refused"));
  EXPECT_EQ(StringField(RefreshWith(client_id, second.refresh).body, "error"), "invalid_grant");
}

TEST_F(OAuthTest, PkceIsRequiredAndTheVerifierMustMatch) {
  std::string client_id = RegisterPublicClient();
  Pkce pkce;
  // No challenge, or the plain method: sent back to the client as an error, nothing pending.
  for (auto extra : std::vector<std::vector<std::pair<std::string, std::string>>>{
           {{"code_challenge", ""}}, {{"code_challenge_method", "plain"}}}) {
    auto r = Authorize(client_id, pkce, Resource("/mcp"), extra);
    ASSERT_EQ(r.status, 302);
    EXPECT_EQ(QueryOf(r.Header("location"), "error"), "invalid_request") << r.Header("location");
    EXPECT_EQ(QueryOf(r.Header("location"), "state"), "st-123");
  }
  std::string redirect_to =
      Approve(*owner_, RequestIdOf(Authorize(client_id, pkce, Resource("/mcp"))));
  const std::string code = QueryOf(redirect_to, "code");
  auto wrong = Exchange(client_id, code, Pkce().verifier);
  EXPECT_EQ(wrong.status, 400);
  EXPECT_EQ(StringField(wrong.body, "error"), "invalid_grant");
  // The code is spent by the attempt: the right verifier afterwards gets nothing either.
  EXPECT_EQ(StringField(Exchange(client_id, code, pkce.verifier).body, "error"), "invalid_grant");
  auto missing =
      Do("POST", "/oauth/token",
         Form({{"grant_type", "authorization_code"}, {"code", "tgc_x"}, {"client_id", client_id}}),
         {{"Content-Type", "application/x-www-form-urlencoded"}});
  EXPECT_EQ(StringField(missing.body, "error"), "invalid_grant");
}

TEST_F(OAuthTest, ARedirectUriOtherThanTheRegisteredOneIsNeverRedirectedTo) {
  std::string client_id = RegisterPublicClient();
  Pkce pkce;
  for (const std::string& uri :
       {std::string("https://evil.example/callback"), std::string(kRedirect) + "/../evil",
        std::string(kRedirect) + "x",
        std::string("http://127.0.0.1:9/callback?next=https://evil.example")}) {
    auto r = Authorize(client_id, pkce, Resource("/mcp"), {}, uri);
    EXPECT_EQ(r.status, 400) << uri;
    EXPECT_EQ(r.Header("location"), "") << uri;
  }
  // An unknown client likewise.
  auto unknown = Authorize("no-such-client", pkce, Resource("/mcp"));
  EXPECT_EQ(unknown.status, 400);
  EXPECT_EQ(unknown.Header("location"), "");
  // Registration refuses redirect URIs a browser could be abused through.
  for (const char* uri : {"javascript:alert(1)", "http://evil.example/cb", "https://a.example/#x",
                          "data:text/html,x"}) {
    auto r = Do(
        "POST", "/oauth/register",
        std::string(R"({"redirect_uris":[")") + uri + R"("],"token_endpoint_auth_method":"none"})");
    EXPECT_EQ(r.status, 400) << uri;
    EXPECT_EQ(StringField(r.body, "error"), "invalid_redirect_uri") << uri;
  }
}

TEST_F(OAuthTest, RevocationReachesTheEdgeWithinTheBound) {
  std::string client_id;
  Tokens tokens = Connect(*owner_, FunctionPath(function_), &client_id);
  ASSERT_EQ(InitializeWith(FunctionPath(function_), tokens.access), 200);  // cached at the edge
  auto revoked =
      Do("POST", "/oauth/revoke", Form({{"token", tokens.access}, {"client_id", client_id}}),
         {{"Content-Type", "application/x-www-form-urlencoded"}});
  EXPECT_EQ(revoked.status, 200) << revoked.body;
  EXPECT_TRUE(
      WaitUntil([&] { return InitializeWith(FunctionPath(function_), tokens.access) == 401; },
                kRevocationBoundMs, "the revoked token to be refused"));
  // An unknown token is no error (RFC 7009).
  EXPECT_EQ(Do("POST", "/oauth/revoke", Form({{"token", "tgo_unknown"}, {"client_id", client_id}}),
               {{"Content-Type", "application/x-www-form-urlencoded"}})
                .status,
            200);
}

TEST_F(OAuthTest, ConnectedAppsListsGrantsAndRevokesThem) {
  Tokens tokens = Connect(*owner_, FunctionPath(function_));
  ASSERT_EQ(InitializeWith(FunctionPath(function_), tokens.access), 200);
  auto list = owner_->session().Get("/api/v1/oauth/grants");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->status, 200) << list->body;
  auto doc = Json(list->body);
  simdjson::dom::array items;
  ASSERT_EQ(doc.root["items"].get_array().get(items), simdjson::SUCCESS);
  std::string grant_id;
  for (auto item : items) {
    std::string_view resource, id, status;
    if (item["resource"].get(resource) || item["grant_id"].get(id) || item["status"].get(status)) {
      continue;
    }
    // Newest first: the first active grant of the endpoint is this test's.
    if (resource == Resource(FunctionPath(function_)) && status == "active") {
      grant_id = id;
      break;
    }
  }
  ASSERT_FALSE(grant_id.empty()) << list->body;
  // Another organization cannot see or revoke it.
  Account stranger(*g_system, "OAuth Stranger");
  auto theirs = stranger.session().Send("DELETE", "/api/v1/oauth/grants/" + grant_id);
  ASSERT_TRUE(theirs.ok());
  EXPECT_EQ(theirs->status, 404);
  EXPECT_EQ(InitializeWith(FunctionPath(function_), tokens.access), 200);

  auto deleted = owner_->session().Send("DELETE", "/api/v1/oauth/grants/" + grant_id);
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted->status, 204) << deleted->body;
  EXPECT_TRUE(
      WaitUntil([&] { return InitializeWith(FunctionPath(function_), tokens.access) == 401; },
                kRevocationBoundMs, "the revoked grant's token to be refused"));
}

TEST_F(OAuthTest, AnotherOrganizationsPrivateToolCannotBeGranted) {
  Account stranger(*g_system, "OAuth Outsider");
  std::string client_id = RegisterPublicClient();
  Pkce pkce;
  std::string request_id =
      RequestIdOf(Authorize(client_id, pkce, Resource(FunctionPath(function_))));
  auto shown = stranger.session().Get("/api/v1/oauth/requests/" + request_id);
  ASSERT_TRUE(shown.ok());
  EXPECT_EQ(shown->status, 404) << shown->body;
  EXPECT_EQ(Code(*shown), "function_not_found");
  auto approved = stranger.session().Post(
      "/api/v1/oauth/requests/" + request_id + "/approve",
      R"({"organization_id":")" + stranger.org_id() + R"(","spending_cap_micro_usd":null})");
  ASSERT_TRUE(approved.ok());
  EXPECT_EQ(approved->status, 404) << approved->body;
  // Nor may a member approve on behalf of an organization they do not belong to.
  auto foreign = stranger.session().Post("/api/v1/oauth/requests/" + request_id + "/approve",
                                         R"({"organization_id":")" + owner_->org_id() + R"("})");
  ASSERT_TRUE(foreign.ok());
  EXPECT_EQ(foreign->status, 422) << foreign->body;
}

TEST_F(OAuthTest, TheConsentFormRefusesCrossSiteRequests) {
  std::string client_id = RegisterPublicClient();
  Pkce pkce;
  std::string request_id = RequestIdOf(Authorize(client_id, pkce, Resource("/mcp")));
  // The member's cookie, as a forged form on another site would send it: no CSRF header, a
  // foreign Origin, a form content type.
  auto client = g_system->Client();
  std::string cookie = "tg_session=" + owner_->session().Cookie("tg_session");
  auto forged = client->Send("POST", "/api/v1/oauth/requests/" + request_id + "/approve",
                             "organization_id=" + owner_->org_id(),
                             {{"Cookie", cookie},
                              {"Origin", "https://evil.example"},
                              {"Content-Type", "application/x-www-form-urlencoded"}});
  ASSERT_TRUE(forged.ok());
  EXPECT_EQ(forged->status, 403) << forged->body;
  EXPECT_EQ(Code(*forged), "csrf_rejected");
  // An API key cannot consent either: consent is a person's, signed in.
  auto by_key =
      Do("POST", "/api/v1/oauth/requests/" + request_id + "/approve",
         R"({"organization_id":")" + owner_->org_id() + R"("})", {{"Authorization", owner_key_}});
  EXPECT_EQ(by_key.status, 403) << by_key.body;
  // The request is still pending for the member.
  EXPECT_EQ(owner_->session().Get("/api/v1/oauth/requests/" + request_id)->status, 200);
}

TEST_F(OAuthTest, MetadataDocumentsOnPrivateAddressesAreNotFetched) {
  Pkce pkce;
  for (const char* client_id : {"https://127.0.0.1:1/client.json", "https://10.0.0.1/client.json",
                                "https://169.254.169.254/latest/meta-data/client.json"}) {
    auto r = Authorize(client_id, pkce, Resource("/mcp"));
    EXPECT_EQ(r.status, 400) << client_id << r.body;
    EXPECT_EQ(r.Header("location"), "") << client_id;
    EXPECT_NE(r.body.find("address"), std::string::npos) << client_id << r.body;
  }
}

TEST_F(OAuthTest, ACappedGrantStopsAtItsCap) {
  // Each echo costs the tool's compute; a cap of one micro-dollar covers none.
  Tokens tokens = Connect(*owner_, FunctionPath(function_), nullptr, "", "1");
  // A per-tool initialize runs the handler, so it is the first call the cap refuses.
  auto refused =
      McpHttp(FunctionPath(function_), "Bearer " + tokens.access).Initialize("2025-11-25");
  EXPECT_EQ(refused.status, 402) << refused.body;
  EXPECT_EQ(Code(refused), "grant_cap_exceeded") << refused.body;
  // The same organization's API key is not held to the grant's cap.
  EXPECT_EQ(McpHttp(FunctionPath(function_), owner_key_).Initialize("2025-11-25").status, 200);
}

TEST_F(OAuthTest, ConfidentialClientsMustAuthenticateWithTheirSecret) {
  auto registered = Do("POST", "/oauth/register",
                       std::string(R"({"client_name":"Server App","redirect_uris":[")") +
                           kRedirect + R"("],"token_endpoint_auth_method":"client_secret_basic"})");
  ASSERT_EQ(registered.status, 201) << registered.body;
  const std::string id = StringField(registered.body, "client_id");
  const std::string secret = StringField(registered.body, "client_secret");
  ASSERT_EQ(secret.rfind("tgs_", 0), 0u) << registered.body;
  // Registered without the refresh_token grant: no refresh token.
  auto code_for = [&] {
    Pkce pkce;
    std::string to = Approve(*owner_, RequestIdOf(Authorize(id, pkce, Resource("/mcp"))));
    return std::make_pair(QueryOf(to, "code"), pkce.verifier);
  };
  auto [code, verifier] = code_for();
  for (const std::string& wrong : {std::string(), id + ":tgs_wrong"}) {
    auto refused = Exchange(id, code, verifier, wrong);
    EXPECT_EQ(refused.status, 401) << wrong << refused.body;
    EXPECT_EQ(StringField(refused.body, "error"), "invalid_client");
  }
  // A refused client never reached the code: it is still good for the client itself.
  auto granted = Exchange(id, code, verifier, id + ":" + secret);
  ASSERT_EQ(granted.status, 200) << granted.body;
  EXPECT_EQ(StringField(granted.body, "refresh_token"), "");
  EXPECT_EQ(InitializeWith("/mcp", StringField(granted.body, "access_token")), 200);
}

TEST_F(OAuthTest, TheOperatorsPreRegisteredClientSignsIn) {
  Pkce pkce;
  std::string request_id = RequestIdOf(Authorize(kPreRegisteredId, pkce, Resource("/mcp")));
  auto shown = owner_->session().Get("/api/v1/oauth/requests/" + request_id);
  ASSERT_TRUE(shown.ok());
  EXPECT_NE(shown->body.find("\"kind\":\"pre_registered\""), std::string::npos) << shown->body;
  EXPECT_NE(shown->body.find("Acme CLI"), std::string::npos);
  std::string to = Approve(*owner_, request_id);
  auto granted = Exchange(kPreRegisteredId, QueryOf(to, "code"), pkce.verifier,
                          std::string(kPreRegisteredId) + ":" + kPreRegisteredSecret);
  ASSERT_EQ(granted.status, 200) << granted.body;
  EXPECT_EQ(InitializeWith("/mcp", StringField(granted.body, "access_token")), 200);
}

TEST_F(OAuthTest, CodesAndTokensNeverReachALog) {
  std::string client_id = RegisterPublicClient();
  Pkce pkce;
  std::string redirect_to =
      Approve(*owner_, RequestIdOf(Authorize(client_id, pkce, Resource(FunctionPath(function_)))));
  const std::string code = QueryOf(redirect_to, "code");
  auto token = Exchange(client_id, code, pkce.verifier);
  ASSERT_EQ(token.status, 200);
  const std::string access = StringField(token.body, "access_token");
  const std::string refresh = StringField(token.body, "refresh_token");
  EXPECT_EQ(InitializeWith(FunctionPath(function_), access), 200);
  EXPECT_EQ(Exchange(client_id, code, pkce.verifier).status, 400);  // a refusal is logged
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(g_system->data_dir() + "/logs")) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    for (const std::string* secret :
         std::initializer_list<const std::string*>{&code, &access, &refresh, &pkce.verifier}) {
      EXPECT_EQ(text.str().find(*secret), std::string::npos) << entry.path();
    }
  }
}

// Last in the suite: it leaves this address locked out of registration for a while.
TEST_F(OAuthTest, MassRegistrationFromOneAddressIsThrottled) {
  // The threshold is the sign-up one (50 an hour per address); this suite has used some already.
  int registered = 0;
  http::HttpResponse last;
  for (int i = 0; i < 60; ++i) {
    last = Do("POST", "/oauth/register",
              std::string(R"({"redirect_uris":[")") + kRedirect +
                  R"("],"token_endpoint_auth_method":"none"})");
    if (last.status != 201) break;
    ++registered;
  }
  EXPECT_EQ(last.status, 429) << "after " << registered << " registrations: " << last.body;
  EXPECT_EQ(Code(last), "rate_limited");
  EXPECT_NE(last.Header("retry-after"), "");
}

}  // namespace
}  // namespace toolgate::testing
