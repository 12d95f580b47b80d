#include "toolgate/auth/oauth_rules.h"

#include <gtest/gtest.h>

#include "toolgate/base/crypto.h"
#include "toolgate/base/json.h"

namespace toolgate::auth {
namespace {

TEST(OAuthFormTest, DecodesAndRefusesRepeatedParameters) {
  auto form = ParseForm("grant_type=authorization_code&code=a%2Bb+c&empty=");
  ASSERT_TRUE(form.ok());
  EXPECT_EQ((*form)["grant_type"], "authorization_code");
  EXPECT_EQ((*form)["code"], "a+b c");
  EXPECT_EQ((*form)["empty"], "");
  EXPECT_FALSE(ParseForm("code=a&code=b").ok());
  EXPECT_FALSE(ParseForm("code=%zz").ok());
  EXPECT_FALSE(ParseForm("code=%4").ok());
}

TEST(OAuthPkceTest, VerifiesS256Only) {
  const std::string verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";  // RFC 7636 App. B
  const std::string challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
  EXPECT_TRUE(IsS256Challenge(challenge));
  EXPECT_TRUE(VerifyPkceS256(verifier, challenge));
  EXPECT_FALSE(VerifyPkceS256(verifier + "x", challenge));
  EXPECT_FALSE(VerifyPkceS256("", challenge));
  EXPECT_FALSE(VerifyPkceS256("short", Base64UrlEncode(Sha256("short"))));  // under 43 chars
  // "plain" would be the verifier itself: never accepted.
  EXPECT_FALSE(VerifyPkceS256(verifier, verifier));
  EXPECT_FALSE(IsS256Challenge("plain"));
}

TEST(OAuthRedirectUriTest, AcceptsHttpsLoopbackAndPrivateUseSchemes) {
  EXPECT_FALSE(CheckRedirectUri("https://claude.ai/api/mcp/auth_callback"));
  EXPECT_FALSE(CheckRedirectUri("http://127.0.0.1:33418/callback"));
  EXPECT_FALSE(CheckRedirectUri("http://localhost:6274/oauth/callback"));
  EXPECT_FALSE(CheckRedirectUri("http://[::1]:8080/cb"));
  EXPECT_FALSE(CheckRedirectUri("cursor.anysphere://oauth/callback"));
  EXPECT_TRUE(CheckRedirectUri("http://example.com/cb"));
  EXPECT_TRUE(CheckRedirectUri("https://example.com/cb#frag"));
  EXPECT_TRUE(CheckRedirectUri("https://user@example.com/cb"));
  EXPECT_TRUE(CheckRedirectUri("javascript:alert(1)"));
  EXPECT_TRUE(CheckRedirectUri("data:text/html,hi"));
  EXPECT_FALSE(
      CheckRedirectUri("cursor://anysphere.cursor-retrieval/oauth/user-toolgate/callback"));
  EXPECT_TRUE(CheckRedirectUri("file:///etc/passwd"));
  EXPECT_TRUE(CheckRedirectUri("JavaScript:alert(1)"));
  EXPECT_TRUE(CheckRedirectUri("https://example.com/a b"));
  EXPECT_TRUE(CheckRedirectUri(""));
  EXPECT_EQ(RedirectHost("https://Claude.AI/api/cb"), "claude.ai");
  EXPECT_EQ(RedirectHost("http://127.0.0.1:3000/cb"), "127.0.0.1");
  EXPECT_EQ(RedirectHost("cursor://anysphere.cursor-retrieval/oauth/cb"),
            "cursor://anysphere.cursor-retrieval");
  EXPECT_EQ(RedirectHost("com.example.app:/cb"), "com.example.app:");
}

TEST(OAuthRedirectUriTest, AppendsToAnExistingQuery) {
  EXPECT_EQ(WithQuery("https://a.example/cb", {{"code", "x y"}, {"state", "s&t"}}),
            "https://a.example/cb?code=x%20y&state=s%26t");
  EXPECT_EQ(WithQuery("https://a.example/cb?app=1", {{"code", "c"}}),
            "https://a.example/cb?app=1&code=c");
}

TEST(OAuthScopeTest, DefaultsToEveryScopeAndRefusesUnknownOnes) {
  auto all = ParseScopes(std::nullopt);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(JoinScopes(*all), "mcp:read mcp:invoke");
  auto some = ParseScopes(std::string("mcp:invoke offline_access mcp:read mcp:invoke"));
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(JoinScopes(*some), "mcp:read mcp:invoke");
  auto read = ParseScopes(std::string("mcp:read"));
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(JoinScopes(*read), "mcp:read");
  EXPECT_FALSE(ParseScopes(std::string("manage")).ok());
}

TEST(OAuthResourceTest, NamesOneOfTheServersMcpEndpoints) {
  const std::string base = "https://mcp.example.com";
  const std::string id = "0f8fad5b-d9cb-469f-a165-70867728950e";
  auto workspace = ParseResource(base + "/mcp/", base);
  ASSERT_TRUE(workspace.ok());
  EXPECT_TRUE(workspace->workspace);
  EXPECT_EQ(workspace->path, "/mcp");
  EXPECT_EQ(workspace->url, base + "/mcp");
  auto function = ParseResource(base + "/mcp/functions/" + id, base);
  ASSERT_TRUE(function.ok());
  EXPECT_EQ(function->path, "/mcp/functions/" + id);
  EXPECT_EQ(function->function_id, id);
  auto version = ParseResource(base + "/mcp/functions/" + id + "/1.2.0", base);
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(version->version, "1.2.0");
  auto absent = ParseResource(std::nullopt, base);
  ASSERT_TRUE(absent.ok());
  EXPECT_EQ(absent->path, "/mcp");

  EXPECT_FALSE(ParseResource(std::string("https://evil.example/mcp"), base).ok());
  EXPECT_FALSE(ParseResource(base + ".evil.example/mcp", base).ok());
  EXPECT_FALSE(ParseResource(base + "/api/v1/me", base).ok());
  EXPECT_FALSE(ParseResource(base + "/mcp/functions/not-a-uuid", base).ok());
  EXPECT_FALSE(ParseResource(base + "/mcp?x=1", base).ok());
  EXPECT_FALSE(ParseResource(base + "/mcp//functions", base).ok());
  EXPECT_FALSE(ParseResource(base + "/mcp/functions/" + id + "/1.0/extra", base).ok());
}

TEST(OAuthMetadataTest, IssuerIsTheBaseAndEndpointsHangOffIt) {
  auto doc = ParseJson(AuthorizationServerMetadata("http://127.0.0.1:8080"));
  ASSERT_TRUE(doc.ok());
  simdjson::dom::object obj;
  ASSERT_FALSE(doc->root.get_object().get(obj));
  std::string issuer, token;
  bool cimd = false;
  ASSERT_EQ(GetString(obj, "issuer", &issuer), Field::kOk);
  ASSERT_EQ(GetString(obj, "token_endpoint", &token), Field::kOk);
  ASSERT_EQ(GetBool(obj, "client_id_metadata_document_supported", &cimd), Field::kOk);
  EXPECT_EQ(issuer, "http://127.0.0.1:8080");
  EXPECT_EQ(token, "http://127.0.0.1:8080/oauth/token");
  EXPECT_TRUE(cimd);
  std::vector<std::string> methods;
  ASSERT_EQ(GetStringArray(obj, "code_challenge_methods_supported", &methods), Field::kOk);
  EXPECT_EQ(methods, std::vector<std::string>{"S256"});
}

TEST(OAuthTokenResponseTest, IsNeverCached) {
  auto r = TokenResponse("tgo_a", 900, "tgr_b", "mcp:read");
  EXPECT_EQ(r.status(), 200);
  EXPECT_EQ(r.headers().at("Cache-Control"), "no-store");
  auto e = OAuthError(400, "invalid_grant", "no");
  EXPECT_EQ(e.headers().at("Cache-Control"), "no-store");
}

}  // namespace
}  // namespace toolgate::auth
