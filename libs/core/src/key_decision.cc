#include "toolgate/core/key_decision.h"

#include "toolgate/base/strings.h"
#include "toolgate/base/time.h"
#include "toolgate/core/problem.h"

namespace toolgate::core {

bool HasScope(const std::vector<std::string>& scopes, std::string_view scope) {
  for (const auto& s : scopes) {
    if (s == scope) return true;
  }
  return false;
}

std::optional<v1::Problem> CheckKey(const KeyRecord* record, int64_t now_ms) {
  if (record == nullptr) {
    return MakeProblem("invalid_api_key",
                       "Send a valid API key in the Authorization header; create one under "
                       "API Keys.");
  }
  if (record->is_oauth_token() && (record->revoked || now_ms >= record->expires_at_ms)) {
    return MakeProblem("invalid_token", record->revoked
                                            ? "This access token was revoked; authorize again."
                                            : "This access token expired; refresh it or authorize "
                                              "again.");
  }
  if (record->revoked) {
    return MakeProblem("api_key_revoked", "This API key was revoked; use another key.");
  }
  if (now_ms >= record->expires_at_ms) {
    return MakeProblem(
        "api_key_expired",
        "This API key expired on " + FormatRfc3339(record->expires_at_ms) + "; create a new key.");
  }
  return std::nullopt;
}

bool ResourceCovers(std::string_view resource_path, std::string_view audience) {
  if (resource_path.empty() || audience.empty()) return false;
  std::string resource = AsciiLower(resource_path), at = AsciiLower(audience);
  if (resource == at) return true;
  // A function endpoint (exactly /mcp/functions/<id>) covers its version endpoints.
  constexpr std::string_view kFunctions = "/mcp/functions/";
  if (resource.rfind(kFunctions, 0) != 0) return false;
  if (resource.find('/', kFunctions.size()) != std::string::npos) return false;
  if (at.size() <= resource.size() + 1 || at.rfind(resource + "/", 0) != 0) return false;
  return at.find('/', resource.size() + 1) == std::string::npos;
}

std::string_view McpScopeFor(std::string_view method) {
  for (std::string_view m :
       {"tools/call", "prompts/get", "resources/read", "completion/complete"}) {
    if (method == m) return kScopeMcpInvoke;
  }
  return kScopeMcpRead;
}

bool IsOAuthAccessToken(std::string_view credential) {
  return credential.rfind("tgo_", 0) == 0;
}

std::optional<v1::Problem> CheckKeyForInvoke(const KeyRecord* record, int64_t now_ms,
                                             std::string_view audience) {
  if (auto problem = CheckKey(record, now_ms)) return problem;
  if (record->is_oauth_token()) {
    if (!ResourceCovers(record->resource_path, audience)) {
      return MakeProblem("invalid_token",
                         "This access token was issued for the MCP endpoint " +
                             record->resource_path +
                             "; it is accepted there only. Authorize this endpoint to get a "
                             "token for it.");
    }
    if (!HasScope(record->scopes, kScopeMcpInvoke) && !HasScope(record->scopes, kScopeMcpRead)) {
      return MakeProblem("insufficient_scope", "This access token grants no MCP scope.");
    }
    return std::nullopt;
  }
  if (!HasScope(record->scopes, kScopeInvoke)) {
    return MakeProblem("insufficient_scope",
                       "This API key lacks the invoke scope; create one that has it.");
  }
  return std::nullopt;
}

v1::Principal PrincipalForKey(const KeyRecord& record) {
  v1::Principal p;
  p.set_org_id(record.org_id);
  p.set_org_name(record.org_name);
  p.set_user_id(record.user_id);
  p.set_key_id(record.key_id);
  for (const auto& scope : record.scopes) p.add_scopes(scope);
  p.set_key_expires_at_ms(record.expires_at_ms);
  p.set_grant_id(record.grant_id);
  p.set_client_name(record.client_name);
  p.set_resource_path(record.resource_path);
  p.set_grant_cap_micro_usd(record.grant_cap_micro_usd);
  return p;
}

KeyRecord KeyRecordFromPrincipal(const v1::Principal& principal, bool revoked) {
  KeyRecord r;
  r.key_id = principal.key_id();
  r.org_id = principal.org_id();
  r.org_name = principal.org_name();
  r.user_id = principal.user_id();
  r.scopes.assign(principal.scopes().begin(), principal.scopes().end());
  r.expires_at_ms = principal.key_expires_at_ms();
  r.revoked = revoked;
  r.grant_id = principal.grant_id();
  r.client_name = principal.client_name();
  r.resource_path = principal.resource_path();
  r.grant_cap_micro_usd = principal.grant_cap_micro_usd();
  return r;
}

}  // namespace toolgate::core
