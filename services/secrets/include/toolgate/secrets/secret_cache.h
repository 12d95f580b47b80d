// SecretCache: the encrypted rows of secrets, in memory, so that a warm invocation reads no
// database. Only ciphertext is cached; values are decrypted per invocation and wiped.
//
// Missing ids are loaded in one batch. Entries are dropped by tg.events.secret_changed (a value
// replaced or a secret deleted, on any replica); a load that overlaps a drop is returned but not
// kept, and entries older than max_age_ms are reloaded, which bounds staleness should an event be
// lost. Ids that name no secret are not cached. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "toolgate/secrets/store.h"

namespace toolgate::secrets {

class SecretCache {
 public:
  // Reads the rows of ids (lower-case UUIDs); absent ids are left out. Must be thread-safe.
  using Loader =
      std::function<Result<std::vector<EncryptedSecret>>(const std::vector<std::string>& ids)>;
  using Rows = std::unordered_map<std::string, EncryptedSecret>;  // by id

  struct Options {
    int64_t max_age_ms = 60'000;
    size_t max_entries = 100'000;
    std::function<int64_t()> now_ms;  // monotonic milliseconds; defaults to the system clock
  };

  SecretCache(Loader loader, Options options);
  explicit SecretCache(Loader loader) : SecretCache(std::move(loader), Options{}) {}

  // The rows of those ids that exist, or the loader's error.
  Result<Rows> Get(const std::vector<std::string>& ids);
  // Event handler: the secret changed or is gone.
  void Drop(const std::string& id);

 private:
  struct Entry {
    EncryptedSecret row;
    int64_t loaded_at_ms = 0;
  };

  Loader loader_;
  Options options_;
  std::mutex mu_;
  uint64_t generation_ = 0;                         // guarded by mu_; bumped by every drop
  std::unordered_map<std::string, Entry> entries_;  // guarded by mu_
};

}  // namespace toolgate::secrets
