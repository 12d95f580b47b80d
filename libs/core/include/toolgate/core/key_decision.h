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

// What auth knows about one API key.
struct KeyRecord {
  std::string key_id;
  std::string org_id;
  std::string org_name;
  std::string user_id;  // the creator; empty when a key without a user created it
  std::vector<std::string> scopes;
  int64_t expires_at_ms = 0;
  bool revoked = false;
};

bool HasScope(const std::vector<std::string>& scopes, std::string_view scope);

// The verdict on a presented key (record null: unknown): nullopt when it may authenticate,
// else the 401 problem (invalid_api_key, api_key_revoked, api_key_expired). Expiry is judged
// against now_ms, so a cached record of a key that has since expired is refused at once.
std::optional<v1::Problem> CheckKey(const KeyRecord* record, int64_t now_ms);
// CheckKey, then 403 insufficient_scope for a key without the invoke scope.
std::optional<v1::Problem> CheckKeyForInvoke(const KeyRecord* record, int64_t now_ms);

// The principal of an accepted key (its expiry included, for X-Api-Key-Expires-At).
v1::Principal PrincipalForKey(const KeyRecord& record);
// The record back from PrincipalForKey's principal plus the revocation flag (the bus form of a
// key, v1::KeyLookupReply).
KeyRecord KeyRecordFromPrincipal(const v1::Principal& principal, bool revoked);

}  // namespace toolgate::core
