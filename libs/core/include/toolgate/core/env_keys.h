// The X-Env-Keys header: "NAME=<secret_id>" pairs separated by commas, with optional
// whitespace around ',' and '='. Names match [A-Za-z_][A-Za-z0-9_]*.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate::core {

struct EnvKeyMapping {
  std::string name;
  std::string secret_id;
};

// InvalidArgument (with a message fit for the caller) when the header is malformed, a name is
// invalid, a secret id is empty, or a name repeats.
Result<std::vector<EnvKeyMapping>> ParseEnvKeys(std::string_view header);

// True when name matches [A-Za-z_][A-Za-z0-9_]*.
bool IsValidEnvKeyName(std::string_view name);

}  // namespace toolgate::core
