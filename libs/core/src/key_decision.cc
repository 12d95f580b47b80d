#include "toolgate/core/key_decision.h"

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

std::optional<v1::Problem> CheckKeyForInvoke(const KeyRecord* record, int64_t now_ms) {
  if (auto problem = CheckKey(record, now_ms)) return problem;
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
  return r;
}

}  // namespace toolgate::core
