#include "oauth_resource.h"

#include <gtest/gtest.h>

#include "mcp_endpoint.h"
#include "toolgate/base/json.h"

namespace toolgate::edge {
namespace {

constexpr const char* kId = "0f8fad5b-d9cb-469f-a165-70867728950e";

TEST(OAuthResourceTest, EndpointPathsAreCanonical) {
  McpHttpRequest r;
  r.workspace = true;
  EXPECT_EQ(EndpointPathOf(r), "/mcp");
  r.workspace = false;
  r.function_id = "0F8FAD5B-D9CB-469F-A165-70867728950E";
  EXPECT_EQ(EndpointPathOf(r), std::string("/mcp/functions/") + kId);
  r.version = "1.0.0";
  EXPECT_EQ(EndpointPathOf(r), std::string("/mcp/functions/") + kId + "/1.0.0");
  EXPECT_EQ(PublicBase("", "127.0.0.1:8080"), "http://127.0.0.1:8080");
  EXPECT_EQ(PublicBase("https://mcp.example.com/", "ignored"), "https://mcp.example.com");
}

TEST(OAuthResourceTest, MetadataPathsNameEndpointsAndTheRootIsTheWorkspace) {
  EXPECT_EQ(EndpointOfMetadataPath("/.well-known/oauth-protected-resource"), "/mcp");
  EXPECT_EQ(EndpointOfMetadataPath("/.well-known/oauth-protected-resource/mcp"), "/mcp");
  EXPECT_EQ(EndpointOfMetadataPath(
                std::string("/.well-known/oauth-protected-resource/mcp/functions/") + kId),
            std::string("/mcp/functions/") + kId);
  EXPECT_EQ(
      EndpointOfMetadataPath(std::string("/.well-known/oauth-protected-resource/mcp/functions/") +
                             kId + "/2.0.0"),
      std::string("/mcp/functions/") + kId + "/2.0.0");
  EXPECT_FALSE(EndpointOfMetadataPath("/.well-known/oauth-protected-resource/api/v1"));
  EXPECT_FALSE(EndpointOfMetadataPath("/.well-known/oauth-protected-resource/mcp/functions/x"));
  EXPECT_FALSE(EndpointOfMetadataPath("/.well-known/other"));
}

TEST(OAuthResourceTest, MetadataResourceIsExactlyTheEndpointUrl) {
  auto doc = ParseJson(
      ProtectedResourceMetadata("https://mcp.example.com", std::string("/mcp/functions/") + kId));
  ASSERT_TRUE(doc.ok());
  simdjson::dom::object obj;
  ASSERT_FALSE(doc->root.get_object().get(obj));
  std::string resource;
  std::vector<std::string> servers;
  ASSERT_EQ(GetString(obj, "resource", &resource), Field::kOk);
  ASSERT_EQ(GetStringArray(obj, "authorization_servers", &servers), Field::kOk);
  EXPECT_EQ(resource, std::string("https://mcp.example.com/mcp/functions/") + kId);
  EXPECT_EQ(servers, std::vector<std::string>{"https://mcp.example.com"});
}

TEST(OAuthResourceTest, ChallengesPointAtTheMetadataAndNameTheScope) {
  const std::string base = "http://127.0.0.1:8080";
  EXPECT_EQ(BearerChallenge(base, "/mcp", "missing_api_key"),
            "Bearer resource_metadata=\"http://127.0.0.1:8080/.well-known/"
            "oauth-protected-resource/mcp\", scope=\"mcp:read mcp:invoke\"");
  EXPECT_EQ(BearerChallenge(base, "/mcp", "invalid_token"),
            "Bearer error=\"invalid_token\", resource_metadata=\"http://127.0.0.1:8080/"
            ".well-known/oauth-protected-resource/mcp\", scope=\"mcp:read mcp:invoke\"");
  EXPECT_EQ(BearerChallenge(base, "/mcp", "insufficient_scope"),
            "Bearer error=\"insufficient_scope\", scope=\"mcp:read mcp:invoke\", "
            "resource_metadata=\"http://127.0.0.1:8080/.well-known/oauth-protected-resource/"
            "mcp\"");
}

}  // namespace
}  // namespace toolgate::edge
