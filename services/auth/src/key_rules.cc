#include "toolgate/auth/key_rules.h"

#include "toolgate/auth/account_rules.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/strings.h"
#include "toolgate/base/time.h"
#include "toolgate/core/problem.h"

namespace toolgate::auth {

GeneratedKey GenerateApiKey() {
  GeneratedKey out;
  out.key = "tg_" + Base64UrlEncode(RandomBytes(32));
  out.prefix = KeyPrefix(out.key);
  out.sha256 = Sha256(out.key);
  return out;
}

std::string KeyPrefix(std::string_view key) {
  return std::string(key.substr(0, kKeyPrefixChars));
}

KeyStatus ComputeKeyStatus(int64_t expires_at_ms, bool revoked, int64_t now_ms) {
  if (revoked) return KeyStatus::kRevoked;
  if (now_ms >= expires_at_ms) return KeyStatus::kExpired;
  if (expires_at_ms - now_ms <= kExpiringWindowMs) return KeyStatus::kExpiring;
  return KeyStatus::kActive;
}

std::string_view KeyStatusName(KeyStatus status) {
  switch (status) {
    case KeyStatus::kActive:
      return "active";
    case KeyStatus::kExpiring:
      return "expiring";
    case KeyStatus::kExpired:
      return "expired";
    case KeyStatus::kRevoked:
      return "revoked";
  }
  return "revoked";
}

Result<int64_t> ResolveKeyExpiry(const std::optional<std::string>& requested, int64_t now_ms) {
  // Whole seconds: the time shown (RFC 3339, seconds) is exactly the time enforced.
  auto whole_seconds = [](int64_t ms) { return ms - ms % 1000; };
  if (!requested) return whole_seconds(now_ms + kDefaultKeyLifetimeMs);
  std::optional<int64_t> parsed = ParseRfc3339(*requested);
  if (!parsed) {
    return Status::InvalidArgument("must be an RFC 3339 time such as 2027-01-31T00:00:00Z");
  }
  int64_t expires_at_ms = whole_seconds(*parsed);
  if (expires_at_ms <= now_ms) return Status::InvalidArgument("must be in the future");
  if (expires_at_ms - now_ms > kMaxKeyLifetimeMs) {
    return Status::InvalidArgument("must be at most two years from now");
  }
  return expires_at_ms;
}

Result<std::vector<std::string>> ResolveScopes(
    const std::optional<std::vector<std::string>>& requested) {
  if (!requested) return std::vector<std::string>{std::string(kScopeInvoke)};
  if (requested->empty()) return Status::InvalidArgument("must name at least one scope");
  bool invoke = false, manage = false;
  for (const auto& scope : *requested) {
    if (scope == kScopeInvoke) {
      invoke = true;
    } else if (scope == kScopeManage) {
      manage = true;
    } else {
      return Status::InvalidArgument("each scope must be \"invoke\" or \"manage\"");
    }
  }
  std::vector<std::string> out;
  if (invoke) out.emplace_back(kScopeInvoke);
  if (manage) out.emplace_back(kScopeManage);
  return out;
}

std::optional<std::string> CheckKeyName(std::string_view name) {
  std::string_view trimmed = TrimAsciiWhitespace(name);
  if (trimmed.empty()) return "is required";
  if (Utf8Length(trimmed) > kMaxKeyNameChars) return "must be at most 100 characters";
  return std::nullopt;
}

v1::Principal PrincipalForSession(std::string user_id, std::string org_id, std::string org_name) {
  v1::Principal p;
  p.set_user_id(std::move(user_id));
  p.set_org_id(std::move(org_id));
  p.set_org_name(std::move(org_name));
  p.add_scopes(std::string(kScopeInvoke));
  p.add_scopes(std::string(kScopeManage));
  return p;
}

}  // namespace toolgate::auth
