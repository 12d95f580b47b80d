// Turning an invocation's X-Env-Keys into the sealed environment of its handler (contract
// section 3, row 6, the part after the registry's checks). Pure functions.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "toolgate/core/env_keys.h"
#include "toolgate/secrets/crypto.h"
#include "toolgate/secrets/secret_cache.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::secrets {

// The mapping of each key job.function declares, in declared order, secret ids lower-cased.
// The registry has already checked the header; a job that slipped past it gets
// invalid_env_keys or missing_env_key all the same.
std::variant<v1::Problem, std::vector<core::EnvKeyMapping>> DeclaredMappings(
    const v1::InvokeJob& job);

// The ids worth looking up: those of mappings that are UUIDs (others cannot name a secret).
std::vector<std::string> LookupIds(const std::vector<core::EnvKeyMapping>& mappings);

// Decrypts the secret of each mapping from rows and returns the serialized v1::EnvMap
// {KEY: value} sealed to executor_public_key. The first mapping whose id is not a row of org_id
// (malformed, missing, or another organization's: one answer for all) gives 400 unknown_secret
// naming the key; a row that does not decrypt gives 500 internal_error. Clear values are wiped
// before returning.
std::variant<v1::Problem, std::string> SealEnv(const std::vector<core::EnvKeyMapping>& mappings,
                                               const std::string& org_id,
                                               const SecretCache::Rows& rows, const SecretBox& box,
                                               std::string_view executor_public_key);

}  // namespace toolgate::secrets
