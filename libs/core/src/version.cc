#include "toolgate/core/version.h"

namespace toolgate::core {

std::optional<Version> ParseVersion(std::string_view text) {
  Version v;
  size_t i = 0;
  while (true) {
    if (v.count == 4) return std::nullopt;
    size_t start = i;
    uint32_t value = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      value = value * 10 + static_cast<uint32_t>(text[i] - '0');
      ++i;
      if (i - start > 9) return std::nullopt;
    }
    if (i == start) return std::nullopt;
    v.parts[v.count++] = value;
    if (i == text.size()) return v;
    if (text[i] != '.') return std::nullopt;
    ++i;
  }
}

int CompareVersions(const Version& a, const Version& b) {
  for (size_t i = 0; i < a.parts.size(); ++i) {
    if (a.parts[i] != b.parts[i]) return a.parts[i] < b.parts[i] ? -1 : 1;
  }
  return 0;
}

}  // namespace toolgate::core
