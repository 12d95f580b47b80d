// SecretStore: the secrets table in PostgreSQL (schema `secrets`), values encrypted by a
// SecretBox before they are written.
//
// Failures: Unavailable when PostgreSQL cannot be reached, Internal for anything unexpected;
// documented outcomes (absent rows, duplicate names) are values. Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/pg/pg.h"
#include "toolgate/secrets/crypto.h"

namespace toolgate::secrets {

// What the API shows of a secret: never its value.
struct SecretMeta {
  std::string id;
  std::string name;
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
};

// What the invoke path needs to decrypt a secret.
struct EncryptedSecret {
  std::string id;
  std::string org_id;
  std::string nonce;
  std::string ciphertext;
};

// Secret ids are UUIDs stored in lower case; this is the form for comparisons and cache keys.
std::string CanonicalSecretId(std::string_view id);

class SecretStore {
 public:
  // pool and box must outlive the store.
  SecretStore(pg::Pool& pool, const SecretBox& box) : pool_(pool), box_(box) {}

  // Creates the schema and applies the embedded migrations.
  Status Migrate();

  // Conflict when org_id already has a secret called name.
  Result<SecretMeta> Create(const std::string& org_id, const std::string& name,
                            std::string_view value);
  // Up to limit secrets of org_id ordered by name, starting after after_name ("" from the start).
  Result<std::vector<SecretMeta>> List(const std::string& org_id, const std::string& after_name,
                                       int limit);
  // Replaces the value; nullopt when org_id has no secret id (or id is not a UUID).
  Result<std::optional<SecretMeta>> Update(const std::string& org_id, const std::string& id,
                                           std::string_view value);
  // False when org_id has no secret id.
  Result<bool> Delete(const std::string& org_id, const std::string& id);
  // The rows with these ids, whatever their organization (the caller checks); ids must be
  // UUIDs. Missing ids are simply absent from the result.
  Result<std::vector<EncryptedSecret>> Fetch(const std::vector<std::string>& ids);
  // Re-encrypts every stored value from this store's box to `to` (a new master key), in one
  // transaction: either every row is under the new key afterwards, or none changed. Returns
  // how many rows were re-encrypted; InvalidArgument, changing nothing, when a row does not
  // decrypt under this store's key (it is not the key the values were stored under).
  Result<int64_t> Rekey(const SecretBox& to);

 private:
  pg::Pool& pool_;
  const SecretBox& box_;
};

}  // namespace toolgate::secrets
