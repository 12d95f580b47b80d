// RegistryStore: a published version's life after publishing (deprecation, unpublishing).
#include "store_sql.h"
#include "toolgate/registry/store.h"

namespace toolgate::registry {

Result<bool> RegistryStore::SetVersionDeprecated(const std::string& function_id,
                                                 const std::string& version, bool deprecated) {
  auto rows = pool_.Exec(
      "UPDATE registry.versions SET deprecated = $3 WHERE function_id = $1 AND version = $2 "
      "RETURNING 1",
      {function_id, version, deprecated ? "true" : "false"});
  if (!rows.ok()) return rows.status();
  return !rows->empty();
}

Result<bool> RegistryStore::UnpublishVersion(const std::string& function_id,
                                             const std::string& version) {
  bool found = false;
  Status s = pool_.Transaction([&](pg::Conn& conn) -> Status {
    auto gone = conn.Exec(
        "DELETE FROM registry.versions WHERE function_id = $1 AND version = $2 "
        "RETURNING p1, p2, p3, p4, bundle_digest",
        {function_id, version});
    if (!gone.ok()) return gone.status();
    if (gone->empty()) return Status::Ok();
    found = true;
    // Its bundle goes too when no other version publishes it (as when a function is deleted).
    if (!gone->IsNull(0, 4)) {
      auto bundle = conn.Exec(
          "DELETE FROM registry.bundles b WHERE b.digest = $1 AND NOT EXISTS "
          "(SELECT 1 FROM registry.versions v WHERE v.bundle_digest = b.digest)",
          {gone->Str(0, 4)});
      if (!bundle.ok()) return bundle.status();
    }
    auto kept = conn.Exec(
        "INSERT INTO registry.unpublished_versions (function_id, version, p1, p2, p3, p4) "
        "VALUES ($1, $2, $3, $4, $5, $6)",
        {function_id, version, gone->Str(0, 0), gone->Str(0, 1), gone->Str(0, 2), gone->Str(0, 3)});
    if (!kept.ok()) return kept.status();
    auto touched =
        conn.Exec("UPDATE registry.functions SET updated_at = now() WHERE id = $1", {function_id});
    return touched.status();
  });
  if (!s.ok()) return s;
  return found;
}

}  // namespace toolgate::registry
