// Validation of the secrets API's request bodies. Pure functions.
#pragma once

#include <string>
#include <string_view>
#include <variant>

#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::secrets {

inline constexpr size_t kMaxNameChars = 128;
inline constexpr size_t kMaxValueBytes = 64 * 1024;

// A name is 1 to 128 characters of [A-Za-z0-9_.-], starting with a letter or '_': readable in
// a list, and safe in logs, URLs and shell snippets.
bool IsValidSecretName(std::string_view name);

// A value is a string of 1 to 64 KiB (UTF-8 bytes) without NUL characters: it becomes an
// environment variable of the handler, and environment strings cannot hold NUL.
bool IsValidSecretValue(std::string_view value);

struct SecretInput {
  std::string name;   // empty for an update
  std::string value;  // the caller wipes it after use
};

// POST /secrets {name, value} (with_name) or PUT /secrets/{id} {value}. The problem is 400 for a
// body that is not a JSON object and 422 with field errors otherwise; messages never quote the
// value.
std::variant<v1::Problem, SecretInput> ParseSecretInput(std::string_view body, bool with_name);

}  // namespace toolgate::secrets
