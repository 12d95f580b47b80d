// The verdict on an API key presented with a call, shared by auth (the owner of keys, which
// decides management requests and answers the edge's lookups) and the edge (which decides warm
// invocations from its cache): one rule, so both answer with the same problems. Pure: no I/O,
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::core {

inline constexpr std::string_view kScopeInvoke = "invoke";
inline constexpr std::string_view kScopeManage = "manage";
// The scopes of OAuth access tokens (docs/oauth.md): discovering an MCP endpoint's tools,
// resources and prompts, and calling them.
inline constexpr std::string_view kScopeMcpRead = "mcp:read";
inline constexpr std::string_view kScopeMcpInvoke = "mcp:invoke";

// What auth knows about one API key.
struct KeyRecord {
  std::string key_id;
  std::string org_id;
  std::string org_name;
  std::string user_id;  // the creator; empty when a key without a user created it
  std::vector<std::string> scopes;
  int64_t expires_at_ms = 0;
  bool revoked = false;
  // Set for an OAuth access token (key_id is empty then): its grant, the client's name, the
  // MCP endpoint path it is bound to and the grant's spending cap (0: none).
  std::string grant_id;
  std::string client_name;
  std::string resource_path;
  int64_t grant_cap_micro_usd = 0;

  bool is_oauth_token() const { return !grant_id.empty(); }
};

bool HasScope(const std::vector<std::string>& scopes, std::string_view scope);

// The verdict on a presented key (record null: unknown): nullopt when it may authenticate,
// else the 401 problem (invalid_api_key, api_key_revoked, api_key_expired). Expiry is judged
// against now_ms, so a cached record of a key that has since expired is refused at once.
std::optional<v1::Problem> CheckKey(const KeyRecord* record, int64_t now_ms);
// CheckKey, then for an API key 403 insufficient_scope without the invoke scope; for an OAuth
// access token 401 invalid_token unless its resource covers audience (the MCP endpoint path the
// call came through: "" for the REST invoke route, which takes no tokens), and 403
// insufficient_scope without an mcp scope.
std::optional<v1::Problem> CheckKeyForInvoke(const KeyRecord* record, int64_t now_ms,
                                             std::string_view audience = {});

// Whether a token bound to the MCP endpoint path resource_path may be used at the endpoint path
// audience: the same endpoint, or a version endpoint of the function endpoint it names
// ("/mcp/functions/a" covers "/mcp/functions/a/1.0.0"; "/mcp" covers only "/mcp"). Function ids
// compare without regard to case.
bool ResourceCovers(std::string_view resource_path, std::string_view audience);

// The scope an OAuth token needs for a JSON-RPC method of an MCP endpoint: mcp:invoke for what
// runs a tool's work (tools/call, prompts/get, resources/read, completion/complete), mcp:read
// for the rest (initialize, the lists, ping, ...).
std::string_view McpScopeFor(std::string_view method);
// Whether a credential is an OAuth access token by its form ("tgo_..."); API keys are "tg_...".
bool IsOAuthAccessToken(std::string_view credential);

// The principal of an accepted key (its expiry included, for X-Api-Key-Expires-At).
v1::Principal PrincipalForKey(const KeyRecord& record);
// The record back from PrincipalForKey's principal plus the revocation flag (the bus form of a
// key, v1::KeyLookupReply).
KeyRecord KeyRecordFromPrincipal(const v1::Principal& principal, bool revoked);

}  // namespace toolgate::core
