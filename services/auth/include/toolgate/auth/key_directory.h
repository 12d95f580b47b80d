// KeyDirectory: where auth finds API key records, and how a revocation reaches every replica.
//
// Reads go to the KeyCache first and to PostgreSQL on a miss; Cached() never blocks. The edges
// keep their own cache of the answers (tg.auth.key_lookup) and hear the same revocations. A
// revocation is applied to the local cache at once and broadcast on tg.events.key_revoked, which
// every replica (this one included) listens to without a queue group.
//
// Thread-safe. store, cache and bus must outlive the directory.
#pragma once

#include <optional>
#include <string_view>

#include "toolgate/auth/key_cache.h"
#include "toolgate/auth/key_store.h"
#include "toolgate/base/status.h"
#include "toolgate/bus/bus.h"
#include "toolgate/core/subjects.h"

namespace toolgate::auth {

using core::kKeyRevokedSubject;

class KeyDirectory {
 public:
  KeyDirectory(KeyStore& store, KeyCache& cache, bus::Bus& bus)
      : store_(store), cache_(cache), bus_(bus) {}

  // The cached record of key_sha256 when fresh; nullopt means "not cached", not "unknown".
  // Never blocks on PostgreSQL.
  std::optional<KeyRecord> Cached(std::string_view key_sha256) const;
  // Whether key_sha256 recently matched no key (cached too, see KeyCache). Never blocks.
  bool KnownUnknown(std::string_view key_sha256) const;
  // Reads PostgreSQL (blocking) and caches what it finds. The inner nullopt: no such key.
  Result<std::optional<KeyRecord>> Load(std::string_view key_sha256);
  // Cached() (nullopt inside when KnownUnknown()), else Load().
  Result<std::optional<KeyRecord>> Find(std::string_view key_sha256);

  // Drops key_sha256 from this replica's cache and broadcasts KeyRevoked so every replica
  // drops it. Unavailable when the broadcast could not be sent.
  Status BroadcastRevoked(std::string_view key_sha256);
  // Subscribes to the KeyRevoked broadcasts; call once at start.
  Status ListenForRevocations();

 private:
  KeyStore& store_;
  KeyCache& cache_;
  bus::Bus& bus_;
};

}  // namespace toolgate::auth
