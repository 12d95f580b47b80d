#include "toolgate/core/function_model.h"

#include "toolgate/base/json.h"

namespace toolgate::core {

std::string NormalizeFunctionId(std::string_view function_id) {
  std::string out(function_id);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string FirstExampleEvent(std::string_view examples_json) {
  auto doc = ParseJson(examples_json);
  simdjson::dom::array examples;
  simdjson::dom::element event;
  if (!doc.ok() || doc->root.get_array().get(examples) != simdjson::SUCCESS ||
      examples.size() == 0 || examples.at(0)["event"].get(event) != simdjson::SUCCESS) {
    return "{}";
  }
  return ToJson(event);
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
