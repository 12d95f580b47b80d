// `toolgate publish --bump patch|minor|major`: the version to publish next, from the highest
// one published. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate::cli {

// The version after `latest` for part "major", "minor" or "patch", in three parts:
// 1.4.2 -> 2.0.0, 1.5.0, 1.4.3. A shorter version counts its missing parts as 0 (1.4 patch ->
// 1.4.1); a fourth part is dropped (1.4.2.7 patch -> 1.4.3). InvalidArgument for another part,
// a latest that is not a version, or a part that would pass 999999999.
Result<std::string> BumpVersion(std::string_view latest, std::string_view part);

// The highest of versions by version order (1.10 > 1.9); "" when versions is empty. Strings
// that are not versions are ignored.
std::string HighestVersion(const std::vector<std::string>& versions);

}  // namespace toolgate::cli
