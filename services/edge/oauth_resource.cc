#include "oauth_resource.h"

#include "mcp_endpoint.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/strings.h"
#include "toolgate/core/http.h"

namespace toolgate::edge {

std::string EndpointPathOf(const McpHttpRequest& request) {
  if (request.workspace) return "/mcp";
  return "/mcp/functions/" + AsciiLower(request.function_id) +
         (request.version.empty() ? "" : "/" + request.version);
}

std::string PublicBase(std::string_view public_url, std::string_view host) {
  std::string base = public_url.empty() ? "http://" + std::string(host) : std::string(public_url);
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base;
}

std::string ResourceMetadataUrl(std::string_view base, std::string_view endpoint_path) {
  return std::string(base) + "/.well-known/oauth-protected-resource" + std::string(endpoint_path);
}

std::string BearerChallenge(std::string_view base, std::string_view endpoint_path,
                            std::string_view problem_code) {
  const std::string metadata =
      "resource_metadata=\"" + ResourceMetadataUrl(base, endpoint_path) + "\"";
  const std::string scope = "scope=\"" + std::string(kMcpScopes) + "\"";
  if (problem_code == "insufficient_scope") {
    return "Bearer error=\"insufficient_scope\", " + scope + ", " + metadata;
  }
  if (problem_code == "invalid_token" || problem_code == "invalid_api_key" ||
      problem_code == "api_key_expired" || problem_code == "api_key_revoked") {
    return "Bearer error=\"invalid_token\", " + metadata + ", " + scope;
  }
  return "Bearer " + metadata + ", " + scope;
}

std::optional<std::string> EndpointOfMetadataPath(std::string_view path) {
  constexpr std::string_view kPrefix = "/.well-known/oauth-protected-resource";
  if (path.rfind(kPrefix, 0) != 0) return std::nullopt;
  std::string_view rest = path.substr(kPrefix.size());
  if (rest.empty() || rest == "/") return std::string("/mcp");
  auto segments = core::SplitPath(rest);
  if (segments.empty() || segments[0] != "mcp") return std::nullopt;
  if (segments.size() == 1) return std::string("/mcp");
  if (segments[1] != "functions" || segments.size() < 3 || segments.size() > 4) {
    return std::nullopt;
  }
  if (!IsUuid(segments[2])) return std::nullopt;
  McpHttpRequest r;
  r.function_id = segments[2];
  if (segments.size() == 4) r.version = segments[3];
  return EndpointPathOf(r);
}

std::string ProtectedResourceMetadata(std::string_view base, std::string_view endpoint_path) {
  JsonWriter w;
  w.BeginObject().Field("resource", std::string(base) + std::string(endpoint_path));
  w.Key("authorization_servers").BeginArray().String(base).EndArray();
  w.Key("scopes_supported").BeginArray().String("mcp:read").String("mcp:invoke").EndArray();
  w.Key("bearer_methods_supported").BeginArray().String("header").EndArray();
  w.Field("resource_name", endpoint_path == "/mcp" ? "Toolgate workspace" : "Toolgate MCP function")
      .Field("resource_documentation", std::string(base) + "/docs/mcp");
  w.EndObject();
  return w.Take();
}

}  // namespace toolgate::edge
