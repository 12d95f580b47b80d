#include "toolgate/core/env_keys.h"

#include <set>

#include "toolgate/base/strings.h"

namespace toolgate::core {
namespace {}  // namespace

bool IsValidEnvKeyName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

Result<std::vector<EnvKeyMapping>> ParseEnvKeys(std::string_view header) {
  std::vector<EnvKeyMapping> out;
  std::set<std::string, std::less<>> seen;
  if (TrimBlanks(header).empty()) return Status::InvalidArgument("X-Env-Keys is empty");
  size_t start = 0;
  while (start <= header.size()) {
    size_t comma = header.find(',', start);
    if (comma == std::string_view::npos) comma = header.size();
    std::string_view pair = TrimBlanks(header.substr(start, comma - start));
    start = comma + 1;
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos) {
      return Status::InvalidArgument("X-Env-Keys entry '" + std::string(pair) +
                                     "' is not NAME=<secret_id>");
    }
    std::string_view name = TrimBlanks(pair.substr(0, eq));
    std::string_view id = TrimBlanks(pair.substr(eq + 1));
    if (!IsValidEnvKeyName(name)) {
      return Status::InvalidArgument("X-Env-Keys name '" + std::string(name) +
                                     "' must match [A-Za-z_][A-Za-z0-9_]*");
    }
    if (id.empty() || id.find_first_of(" \t=") != std::string_view::npos) {
      return Status::InvalidArgument("X-Env-Keys entry for " + std::string(name) +
                                     " has no valid secret id");
    }
    if (!seen.insert(std::string(name)).second) {
      return Status::InvalidArgument("X-Env-Keys maps " + std::string(name) + " twice");
    }
    out.push_back({std::string(name), std::string(id)});
  }
  return out;
}

}  // namespace toolgate::core
