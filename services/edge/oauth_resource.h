// The MCP endpoints as OAuth protected resources (RFC 9728, docs/oauth.md): which endpoint a
// request is at, its canonical resource URL, its metadata document and the WWW-Authenticate
// challenge of a 401 or 403. Auth is the authorization server; the edge only points at it. Pure
// and thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace toolgate::edge {

struct McpHttpRequest;

// The scopes an MCP endpoint's tokens may carry, space-separated, as challenges and metadata
// name them.
inline constexpr std::string_view kMcpScopes = "mcp:read mcp:invoke";

// "/mcp", "/mcp/functions/<id lower-cased>" or "/mcp/functions/<id>/<version>".
std::string EndpointPathOf(const McpHttpRequest& request);
// The system's public URL: public_url when configured (trailing slashes dropped), else
// "http://" + host (the request's Host header).
std::string PublicBase(std::string_view public_url, std::string_view host);
// Where the metadata of the endpoint at endpoint_path is: the path-aware well-known URL
// (RFC 9728 §3.1), base + "/.well-known/oauth-protected-resource" + endpoint_path.
std::string ResourceMetadataUrl(std::string_view base, std::string_view endpoint_path);

// WWW-Authenticate for a refusal with problem code (RFC 6750 §3, RFC 9728 §5.1):
//   Bearer resource_metadata="...", scope="mcp:read mcp:invoke"             (no or bad key)
//   Bearer error="invalid_token", resource_metadata="...", scope="..."      (token refused)
//   Bearer error="insufficient_scope", scope="...", resource_metadata="..." (step-up)
std::string BearerChallenge(std::string_view base, std::string_view endpoint_path,
                            std::string_view problem_code);

// The endpoint path a well-known path names: "/.well-known/oauth-protected-resource" alone is
// the workspace ("/mcp", the root fallback); with "/mcp..." appended, that endpoint. nullopt for
// a path that names no MCP endpoint.
std::optional<std::string> EndpointOfMetadataPath(std::string_view path);
// The protected resource metadata document of the endpoint at endpoint_path.
std::string ProtectedResourceMetadata(std::string_view base, std::string_view endpoint_path);

}  // namespace toolgate::edge
