// The one route whose requests may carry a body larger than the edge's general limit: publishing
// a version, whose bundle (a .tar.gz of up to 50 MiB by default) comes as base64 JSON or as a
// multipart/form-data upload. Every other route keeps the small limit, so that a large body
// cannot tie up the edge anywhere else. Pure; thread-safe.
#pragma once

#include <string_view>

namespace toolgate::edge {

// True for POST /api/v1/functions/{id}/versions (any query string). target is the request
// target as sent (origin form).
inline bool IsUploadRoute(std::string_view method, std::string_view target) {
  if (method != "POST") return false;
  target = target.substr(0, target.find('?'));
  constexpr std::string_view kPrefix = "/api/v1/functions/";
  constexpr std::string_view kSuffix = "/versions";
  if (!target.starts_with(kPrefix) || !target.ends_with(kSuffix)) return false;
  std::string_view id = target.substr(kPrefix.size());
  if (id.size() <= kSuffix.size()) return false;
  id.remove_suffix(kSuffix.size());
  return id.find('/') == std::string_view::npos;
}

}  // namespace toolgate::edge
