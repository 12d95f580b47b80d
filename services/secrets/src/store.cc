#include "toolgate/secrets/store.h"

#include <sodium.h>

#include "SecretsMigrations.h"
#include "toolgate/base/crypto.h"

namespace toolgate::secrets {
namespace {

// Timestamps are read as epoch milliseconds; the API formats them (RFC 3339).
#define TG_EPOCH_MS(column) "floor(extract(epoch FROM " column ") * 1000)::bigint"

constexpr const char* kMetaColumns =
    "id::text, name, " TG_EPOCH_MS("created_at") ", " TG_EPOCH_MS("updated_at");

SecretMeta ReadMeta(const pg::Rows& rows, int r) {
  return {rows.Str(r, 0), rows.Str(r, 1), rows.Int(r, 2), rows.Int(r, 3)};
}

// bytea crosses libpq as hex text (encode/decode in SQL), whatever the server's bytea_output.
std::string FromHex(const std::string& hex) {
  std::string out(hex.size() / 2, '\0');
  size_t len = 0;
  sodium_hex2bin(reinterpret_cast<unsigned char*>(out.data()), out.size(), hex.data(), hex.size(),
                 nullptr, &len, nullptr);
  out.resize(len);
  return out;
}

}  // namespace

std::string CanonicalSecretId(std::string_view id) {
  std::string out(id);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

Status SecretStore::Migrate() {
  return pg::Migrate(pool_, "secrets", SecretsMigrations());
}

Result<SecretMeta> SecretStore::Create(const std::string& org_id, const std::string& name,
                                       std::string_view value) {
  const std::string id = NewUuid();
  SecretBox::Sealed sealed = box_.Encrypt(org_id, id, value);
  auto rows = pool_.Exec(
      std::string("INSERT INTO secrets.secrets (id, org_id, name, nonce, ciphertext) "
                  "VALUES ($1, $2, $3, decode($4, 'hex'), decode($5, 'hex')) RETURNING ") +
          kMetaColumns,
      {id, org_id, name, HexEncode(sealed.nonce), HexEncode(sealed.ciphertext)});
  if (!rows.ok()) return rows.status();
  return ReadMeta(*rows, 0);
}

Result<std::vector<SecretMeta>> SecretStore::List(const std::string& org_id,
                                                  const std::string& after_name, int limit) {
  auto rows = pool_.Exec(std::string("SELECT ") + kMetaColumns +
                             " FROM secrets.secrets WHERE org_id = $1 AND name > $2 "
                             "ORDER BY name LIMIT $3",
                         {org_id, after_name, std::to_string(limit)});
  if (!rows.ok()) return rows.status();
  std::vector<SecretMeta> out;
  for (int r = 0; r < rows->size(); ++r) out.push_back(ReadMeta(*rows, r));
  return out;
}

Result<std::optional<SecretMeta>> SecretStore::Update(const std::string& org_id,
                                                      const std::string& id,
                                                      std::string_view value) {
  if (!IsUuid(id)) return std::optional<SecretMeta>();
  // The additional data binds the ciphertext to the stored (lower-case) id.
  const std::string canonical = CanonicalSecretId(id);
  SecretBox::Sealed sealed = box_.Encrypt(org_id, canonical, value);
  auto rows = pool_.Exec(
      std::string(
          "UPDATE secrets.secrets SET nonce = decode($3, 'hex'), ciphertext = decode($4, 'hex'), "
          "updated_at = now() WHERE org_id = $1 AND id = $2 RETURNING ") +
          kMetaColumns,
      {org_id, canonical, HexEncode(sealed.nonce), HexEncode(sealed.ciphertext)});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<SecretMeta>();
  return std::optional<SecretMeta>(ReadMeta(*rows, 0));
}

Result<bool> SecretStore::Delete(const std::string& org_id, const std::string& id) {
  if (!IsUuid(id)) return false;
  auto rows = pool_.Exec("DELETE FROM secrets.secrets WHERE org_id = $1 AND id = $2", {org_id, id});
  if (!rows.ok()) return rows.status();
  return rows->affected() > 0;
}

Result<std::vector<EncryptedSecret>> SecretStore::Fetch(const std::vector<std::string>& ids) {
  // UUIDs need no quoting inside an array literal.
  std::string list = "{";
  for (const auto& id : ids) {
    if (list.size() > 1) list += ',';
    list += id;
  }
  list += '}';
  auto rows = pool_.Exec(
      "SELECT id::text, org_id, encode(nonce, 'hex'), encode(ciphertext, 'hex') "
      "FROM secrets.secrets WHERE id = ANY($1::uuid[])",
      {list});
  if (!rows.ok()) return rows.status();
  std::vector<EncryptedSecret> out;
  for (int r = 0; r < rows->size(); ++r) {
    out.push_back(
        {rows->Str(r, 0), rows->Str(r, 1), FromHex(rows->Str(r, 2)), FromHex(rows->Str(r, 3))});
  }
  return out;
}

Result<int64_t> SecretStore::Rekey(const SecretBox& to) {
  int64_t rekeyed = 0;
  Status s = pool_.Transaction([&](pg::Conn& conn) -> Status {
    // FOR UPDATE: a value written meanwhile waits for the commit rather than being lost.
    auto rows = conn.Exec(
        "SELECT id::text, org_id, encode(nonce, 'hex'), encode(ciphertext, 'hex') "
        "FROM secrets.secrets ORDER BY id FOR UPDATE");
    if (!rows.ok()) return rows.status();
    for (int r = 0; r < rows->size(); ++r) {
      const std::string id = rows->Str(r, 0), org_id = rows->Str(r, 1);
      auto plain = box_.Decrypt(org_id, id, FromHex(rows->Str(r, 2)), FromHex(rows->Str(r, 3)));
      if (!plain.ok()) {
        return Status::InvalidArgument("secret " + id +
                                       " does not decrypt under the current master key; nothing "
                                       "was changed");
      }
      SecretBox::Sealed sealed = to.Encrypt(org_id, id, *plain);
      Wipe(*plain);
      auto updated = conn.Exec(
          "UPDATE secrets.secrets SET nonce = decode($2, 'hex'), ciphertext = decode($3, 'hex') "
          "WHERE id = $1::uuid",
          {id, HexEncode(sealed.nonce), HexEncode(sealed.ciphertext)});
      if (!updated.ok()) return updated.status();
      ++rekeyed;
    }
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return rekeyed;
}

}  // namespace toolgate::secrets
