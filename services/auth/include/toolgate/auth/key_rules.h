// The rules for API keys that need no database: key format, expiry and scope validation, the
// status shown in lists, and the verdict on a key presented by a caller. Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"
#include "toolgate/core/key_decision.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::auth {

inline constexpr int64_t kDayMs = 24LL * 3600 * 1000;
inline constexpr int64_t kDefaultKeyLifetimeMs = 90 * kDayMs;
// Two years, counting one leap day, so any date up to two calendar years ahead is accepted.
inline constexpr int64_t kMaxKeyLifetimeMs = 731 * kDayMs;
// A key this close to its expiry is listed as "expiring" and invocations carry
// X-Api-Key-Expires-At.
inline constexpr int64_t kExpiringWindowMs = 14 * kDayMs;
inline constexpr size_t kKeyPrefixChars = 11;
inline constexpr size_t kMaxKeyNameChars = 100;

// The verdict on a presented key is shared with the edge's cache (toolgate/core/key_decision.h).
using core::CheckKey;
using core::CheckKeyForInvoke;
using core::HasScope;
using core::KeyRecord;
using core::kScopeInvoke;
using core::kScopeManage;
using core::PrincipalForKey;

// A freshly generated key. `key` is shown to its creator once and never stored.
struct GeneratedKey {
  std::string key;     // "tg_" + base64url(32 random bytes): 46 characters
  std::string prefix;  // the first kKeyPrefixChars characters, stored to recognise the key
  std::string sha256;  // 32 raw bytes, the only form stored
};
GeneratedKey GenerateApiKey();
// The first kKeyPrefixChars characters of key (all of it when shorter).
std::string KeyPrefix(std::string_view key);

enum class KeyStatus { kActive, kExpiring, kExpired, kRevoked };
// Revoked wins; a key is expired from expires_at_ms on, and expiring while at most
// kExpiringWindowMs remain.
KeyStatus ComputeKeyStatus(int64_t expires_at_ms, bool revoked, int64_t now_ms);
// "active", "expiring", "expired", "revoked".
std::string_view KeyStatusName(KeyStatus status);

// The expiry of a new key from the requested RFC 3339 time (nullopt: none requested), truncated
// to whole seconds. InvalidArgument, whose message is the field error shown to the user, when
// the time does not parse, is not in the future, or is more than kMaxKeyLifetimeMs away.
Result<int64_t> ResolveKeyExpiry(const std::optional<std::string>& requested, int64_t now_ms);
// The scopes of a new key: ["invoke"] when none are requested; otherwise a non-empty subset of
// {"invoke", "manage"}, duplicates removed, in that canonical order. InvalidArgument (message
// for the user) for an empty list or an unknown scope.
Result<std::vector<std::string>> ResolveScopes(
    const std::optional<std::vector<std::string>>& requested);
// Not blank and at most kMaxKeyNameChars characters: nullopt, else the field error.
std::optional<std::string> CheckKeyName(std::string_view name);

// A signed-in user may do everything: scopes invoke and manage.
v1::Principal PrincipalForSession(std::string user_id, std::string org_id, std::string org_name);

}  // namespace toolgate::auth
