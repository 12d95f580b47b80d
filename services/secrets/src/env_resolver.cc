#include "toolgate/secrets/env_resolver.h"

#include "toolgate/base/crypto.h"
#include "toolgate/base/log.h"
#include "toolgate/core/problem.h"

namespace toolgate::secrets {
namespace {

// Wipes every clear value the EnvMap and its serialization hold.
class ClearValues {
 public:
  ~ClearValues() {
    for (auto& [key, value] : *env.mutable_values()) Wipe(value);
    Wipe(serialized);
  }
  v1::EnvMap env;
  std::string serialized;
};

}  // namespace

std::variant<v1::Problem, std::vector<core::EnvKeyMapping>> DeclaredMappings(
    const v1::InvokeJob& job) {
  auto parsed = core::ParseEnvKeys(job.env_keys_header());
  if (!parsed.ok()) return core::MakeProblem("invalid_env_keys", parsed.status().message());
  std::vector<core::EnvKeyMapping> out;
  for (const auto& key : job.function().declared_keys()) {
    const core::EnvKeyMapping* found = nullptr;
    for (const auto& m : *parsed) {
      if (m.name == key) found = &m;
    }
    if (found == nullptr) {
      return core::MakeProblem(
          "missing_env_key",
          "This version declares " + key + "; send X-Env-Keys: " + key + "=<secret_id>.");
    }
    out.push_back({found->name, CanonicalSecretId(found->secret_id)});
  }
  return out;
}

std::vector<std::string> LookupIds(const std::vector<core::EnvKeyMapping>& mappings) {
  std::vector<std::string> ids;
  for (const auto& m : mappings) {
    if (IsUuid(m.secret_id)) ids.push_back(m.secret_id);
  }
  return ids;
}

std::variant<v1::Problem, std::string> SealEnv(const std::vector<core::EnvKeyMapping>& mappings,
                                               const std::string& org_id,
                                               const SecretCache::Rows& rows, const SecretBox& box,
                                               std::string_view executor_public_key) {
  ClearValues clear;
  for (const auto& m : mappings) {
    auto it = rows.find(m.secret_id);
    if (it == rows.end() || it->second.org_id != org_id) {
      return core::MakeProblem("unknown_secret",
                               "X-Env-Keys maps " + m.name +
                                   " to an id that is not a secret of your organization; "
                                   "GET /api/v1/secrets lists yours.");
    }
    const EncryptedSecret& row = it->second;
    auto value = box.Decrypt(row.org_id, row.id, row.nonce, row.ciphertext);
    if (!value.ok()) {
      log::Error("secret does not decrypt; is the master key the one it was stored under?")
          .Str("secret_id", row.id);
      return core::MakeProblem("internal_error",
                               "A secret could not be decrypted; the operator has been told.");
    }
    // Copied, then the source wiped: moving a short string would leave its characters behind.
    (*clear.env.mutable_values())[m.name].assign(value->data(), value->size());
    Wipe(*value);
  }
  clear.env.SerializeToString(&clear.serialized);
  return SealTo(executor_public_key, clear.serialized);
}

}  // namespace toolgate::secrets
