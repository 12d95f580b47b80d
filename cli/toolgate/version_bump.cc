#include "version_bump.h"

#include "toolgate/core/version.h"

namespace toolgate::cli {

Result<std::string> BumpVersion(std::string_view latest, std::string_view part) {
  auto version = core::ParseVersion(latest);
  if (!version) return Status::InvalidArgument("\"" + std::string(latest) + "\" is not a version");
  int index = part == "major" ? 0 : part == "minor" ? 1 : part == "patch" ? 2 : -1;
  if (index < 0) return Status::InvalidArgument("--bump is one of patch, minor, major");
  constexpr uint32_t kMaxPart = 999'999'999;  // nine digits, the contract's limit
  std::array<uint32_t, 3> parts = {version->parts[0], version->parts[1], version->parts[2]};
  if (parts[static_cast<size_t>(index)] >= kMaxPart) {
    return Status::InvalidArgument("the " + std::string(part) + " part of " + std::string(latest) +
                                   " cannot grow any more");
  }
  ++parts[static_cast<size_t>(index)];
  for (size_t i = static_cast<size_t>(index) + 1; i < parts.size(); ++i) parts[i] = 0;
  return std::to_string(parts[0]) + "." + std::to_string(parts[1]) + "." + std::to_string(parts[2]);
}

std::string HighestVersion(const std::vector<std::string>& versions) {
  std::string best;
  std::optional<core::Version> best_version;
  for (const auto& text : versions) {
    auto v = core::ParseVersion(text);
    if (!v) continue;
    if (!best_version || core::CompareVersions(*v, *best_version) > 0) {
      best = text;
      best_version = v;
    }
  }
  return best;
}

}  // namespace toolgate::cli
