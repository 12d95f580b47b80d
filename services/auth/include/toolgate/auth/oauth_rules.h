// The rules of Toolgate's OAuth 2.1 authorization server that need no database or network
// (docs/oauth.md): form bodies, PKCE, redirect URIs, scopes, resource indicators, the
// authorization server's metadata, token generation and the answers' shapes. Pure and
// thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::auth {

// Lifetimes (docs/decisions.md, "OAuth tokens are opaque and short-lived").
inline constexpr int64_t kAuthorizationRequestTtlMs = 10 * 60 * 1000;
inline constexpr int64_t kAuthorizationCodeTtlMs = 60 * 1000;
inline constexpr int64_t kAccessTokenTtlMs = 15 * 60 * 1000;
inline constexpr int64_t kRefreshTokenTtlMs = 30LL * 24 * 3600 * 1000;

// The prefixes of what the server hands out; the rest is 32 random bytes in base64url.
inline constexpr std::string_view kAccessTokenPrefix = "tgo_";
inline constexpr std::string_view kRefreshTokenPrefix = "tgr_";
inline constexpr std::string_view kCodePrefix = "tgc_";
inline constexpr std::string_view kClientSecretPrefix = "tgs_";
inline constexpr std::string_view kRequestIdPrefix = "req_";

// A new random secret: prefix + base64url(32 bytes).
std::string NewOpaqueSecret(std::string_view prefix);

// An application/x-www-form-urlencoded body. InvalidArgument (message for the client) for a
// malformed escape or a parameter given twice (RFC 6749 §3.1: parameters MUST NOT repeat).
Result<std::map<std::string, std::string>> ParseForm(std::string_view body);
// Percent-encodes for a query component (RFC 3986 unreserved characters stay).
std::string FormEncode(std::string_view text);

// PKCE (RFC 7636), S256 only: whether code_verifier (43 to 128 unreserved characters) hashes to
// code_challenge. Constant time in the comparison.
bool VerifyPkceS256(std::string_view code_verifier, std::string_view code_challenge);
// A code_challenge has the form of an S256 one: 43 base64url characters.
bool IsS256Challenge(std::string_view code_challenge);

// A redirect URI a client may register: an https URL; an http URL whose host is a loopback
// literal (127.0.0.1, [::1]) or "localhost" (RFC 8252 §7.3); or a native app's private-use scheme
// ("com.example.app:/cb", "cursor://...", RFC 8252 §7.1). Never a fragment, userinfo, or
// javascript:, data:, file:, blob: and the like. nullopt when acceptable, else why not (for the
// client).
std::optional<std::string> CheckRedirectUri(std::string_view uri);
// The host of an http(s) redirect URI ("claude.ai"); for a private-use one its scheme and host
// ("cursor://anysphere.cursor-retrieval").
std::string RedirectHost(std::string_view uri);
// uri with the parameters appended to its query, in order (RFC 6749 §4.1.2: the query of a
// registered redirect URI is kept).
std::string WithQuery(std::string_view uri,
                      const std::vector<std::pair<std::string, std::string>>& params);

// The scopes of an authorization request ("mcp:read mcp:invoke"): every known scope when scope
// is absent or empty; offline_access is accepted and dropped (refresh tokens follow the client's
// grant types). InvalidArgument naming an unknown scope.
Result<std::vector<std::string>> ParseScopes(const std::optional<std::string>& scope);
std::string JoinScopes(const std::vector<std::string>& scopes);  // space-separated
// What each scope lets a client do, for the consent page.
std::string_view ScopeDescription(std::string_view scope);

// The MCP endpoint a resource indicator (RFC 8707) names.
struct ResourceTarget {
  std::string url;   // canonical: base + path, no trailing slash, no query
  std::string path;  // "/mcp", "/mcp/functions/<id>" or "/mcp/functions/<id>/<version>"
  bool workspace = false;
  std::string function_id;  // lower case; empty for the workspace
  std::string version;      // empty: the function's endpoint (every version)
};
// resource must be base (the system's public URL, "https://mcp.example.com") followed by an MCP
// endpoint path; one trailing slash is tolerated and dropped. InvalidArgument (for the client)
// otherwise. An absent resource means the workspace endpoint.
Result<ResourceTarget> ParseResource(const std::optional<std::string>& resource,
                                     std::string_view base);

// The system's public URL as auth sees it: public_url when configured, else "http://" + the
// Host the request came with (the edge passes it). No trailing slash.
std::string PublicBase(std::string_view public_url, const v1::HttpRequest& request);

// RFC 8414 metadata of the authorization server whose issuer (and endpoints' origin) is base.
std::string AuthorizationServerMetadata(std::string_view base);

// The token endpoint's answers (RFC 6749 §5.1, §5.2): JSON with Cache-Control: no-store.
v1::HttpResponse TokenResponse(std::string_view access_token, int64_t expires_in_s,
                               std::string_view refresh_token, std::string_view scope);
v1::HttpResponse OAuthError(int status, std::string_view error, std::string_view description);

}  // namespace toolgate::auth
