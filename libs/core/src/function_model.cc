#include "toolgate/core/function_model.h"

namespace toolgate::core {

std::string NormalizeFunctionId(std::string_view function_id) {
  std::string out(function_id);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

const PublishedVersion* LatestVersion(const std::vector<PublishedVersion>& versions) {
  const PublishedVersion* best = nullptr;
  for (const auto& v : versions) {
    if (best == nullptr || CompareVersions(v.parsed, best->parsed) > 0) best = &v;
  }
  return best;
}

const PublishedVersion* FindVersion(const std::vector<PublishedVersion>& versions,
                                    std::string_view version) {
  for (const auto& v : versions) {
    if (v.version == version) return &v;
  }
  return nullptr;
}

}  // namespace toolgate::core
