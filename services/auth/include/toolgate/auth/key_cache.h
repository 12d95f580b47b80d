// KeyCache: API key records by key SHA-256, so that auth answers the edges' key lookups and
// authenticates management requests from memory without a PostgreSQL round trip.
//
// An entry is served for at most ttl_us after it was loaded; after that the caller reloads it.
// Revocations reach every replica as a KeyRevoked broadcast and Invalidate() drops the entry
// at once. A load that raced with an invalidation (read the row before the revocation, finished
// after it) must not put the stale record back: callers take generation() before reading
// PostgreSQL and pass it to Put(), which ignores the record when any invalidation happened in
// between.
//
// Hashes that matched no key are remembered too, for the same ttl_us, so that a stream of bad
// keys (a misconfigured client, or someone guessing) costs one PostgreSQL read per distinct key
// and ttl, not one per request. Their number is bounded: when max_unknown is reached the
// unknown set is cleared. A key created later cannot be shadowed by this in practice: its hash
// is that of 32 random bytes nobody could have sent before.
//
// Times are monotonic microseconds supplied by the caller, so tests drive the clock.
// Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "toolgate/auth/key_rules.h"

namespace toolgate::auth {

class KeyCache {
 public:
  explicit KeyCache(int64_t ttl_us, size_t max_unknown = 100'000)
      : ttl_us_(ttl_us), max_unknown_(max_unknown) {}

  // The record loaded less than ttl_us before now_us, or nullopt.
  std::optional<KeyRecord> Get(std::string_view key_sha256, int64_t now_us) const;
  // The current invalidation generation; take it before loading a record.
  uint64_t generation() const;
  // Stores record, loaded at now_us, unless an invalidation happened after generation_at_load.
  void Put(const std::string& key_sha256, KeyRecord record, uint64_t generation_at_load,
           int64_t now_us);
  // Whether key_sha256 was found to match no key less than ttl_us before now_us.
  bool KnownUnknown(std::string_view key_sha256, int64_t now_us) const;
  // Remembers that key_sha256 matched no key at now_us, unless an invalidation happened after
  // generation_at_load.
  void PutUnknown(const std::string& key_sha256, uint64_t generation_at_load, int64_t now_us);
  // Drops the entry (known or unknown), and makes every load that started before this call
  // ineffective.
  void Invalidate(std::string_view key_sha256);
  // Drops every entry too old to be served, so keys no longer used do not stay in memory.
  void Prune(int64_t now_us);
  // Entries of known keys; unknown_size(): of hashes that matched no key.
  size_t size() const;
  size_t unknown_size() const;

 private:
  struct Entry {
    KeyRecord record;
    int64_t loaded_at_us;
  };
  const int64_t ttl_us_;
  const size_t max_unknown_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;    // guarded by mu_
  std::unordered_map<std::string, int64_t> unknown_;  // guarded by mu_; hash -> looked up at
  uint64_t generation_ = 0;                           // guarded by mu_
};

}  // namespace toolgate::auth
