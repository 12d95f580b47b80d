// KeyStore: API keys in PostgreSQL (schema `auth`).
//
// Keys are found by their SHA-256 (32 raw bytes); the keys themselves are never stored. Every
// method blocks on PostgreSQL; failures of the database come back as Unavailable or Internal.
// Thread-safe (the pool is).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "toolgate/auth/key_rules.h"
#include "toolgate/base/status.h"
#include "toolgate/pg/pg.h"

namespace toolgate::auth {

// A key to insert; its expiry and scopes already validated (key_rules.h).
struct NewKey {
  std::string org_id;
  std::string user_id;  // empty: created with a key that has no user
  std::string name;
  std::string prefix;
  std::string key_sha256;
  std::vector<std::string> scopes;
  int64_t expires_at_ms = 0;
};

// One row of GET /api-keys.
struct KeyListing {
  std::string id;
  std::string name;
  std::string prefix;
  std::vector<std::string> scopes;
  int64_t expires_at_ms = 0;
  int64_t created_at_ms = 0;
  std::optional<int64_t> last_used_at_ms;
  bool revoked = false;
};

// A page of listings, newest first; next_after is the position to pass for the next page, or
// empty when this page is the last.
struct KeyPage {
  std::vector<KeyListing> items;
  std::string next_after;
};

class KeyStore {
 public:
  // pool must outlive the store.
  explicit KeyStore(pg::Pool& pool) : pool_(pool) {}

  // The key with this hash, with its organization's name; nullopt when there is none.
  Result<std::optional<KeyRecord>> FindByHash(std::string_view key_sha256);
  // Inserts key; returns its listing (new id, created_at).
  Result<KeyListing> Insert(const NewKey& key);
  // Up to limit keys of org_id, newest first, after the position `after` (empty: from the
  // newest). InvalidArgument for a position this store did not produce.
  Result<KeyPage> List(std::string_view org_id, int limit, std::string_view after);
  // Marks key_id of org_id revoked (a second revocation keeps the first time) and returns its
  // hash; nullopt when org_id has no such key.
  Result<std::optional<std::string>> Revoke(std::string_view org_id, std::string_view key_id);
  // Sets last_used_at of each key id to its time (epoch ms) unless the row has a later one.
  Status TouchLastUsed(const std::unordered_map<std::string, int64_t>& last_used_ms);

 private:
  pg::Pool& pool_;
};

}  // namespace toolgate::auth
