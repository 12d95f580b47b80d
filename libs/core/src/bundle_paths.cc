#include "toolgate/core/bundle_paths.h"

namespace toolgate::core {
namespace {

// Calls visit(component) for each '/'-separated component of path, empty ones included; stops
// at the first failure visit returns.
template <typename Visit>
Status ForEachComponent(std::string_view path, Visit&& visit) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (Status s = visit(path.substr(start, slash - start)); !s.ok()) return s;
    start = slash + 1;
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::string>> SplitBundlePath(std::string_view path) {
  if (!path.empty() && path.front() == '/') {
    return Status::InvalidArgument("a path may not be absolute");
  }
  std::vector<std::string> parts;
  Status s = ForEachComponent(path, [&](std::string_view part) {
    if (part.empty() || part == ".") return Status::Ok();
    if (part == "..") return Status::InvalidArgument("a path may not leave the bundle");
    for (char c : part) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        return Status::InvalidArgument("a path may not hold control characters");
      }
    }
    parts.emplace_back(part);
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return parts;
}

std::string JoinBundlePath(const std::vector<std::string>& parts, size_t n) {
  std::string out;
  for (size_t i = 0; i < n && i < parts.size(); ++i) {
    if (i > 0) out += '/';
    out += parts[i];
  }
  return out;
}

Result<std::vector<std::string>> ResolveBundleLink(const std::vector<std::string>& link,
                                                   std::string_view target) {
  if (target.empty()) return Status::InvalidArgument("a link needs a target");
  if (target.front() == '/') {
    return Status::InvalidArgument("a link may not point to an absolute path");
  }
  std::vector<std::string> resolved(link.begin(), link.empty() ? link.end() : link.end() - 1);
  std::vector<std::string> visited;
  Status s = ForEachComponent(target, [&](std::string_view part) {
    if (part.empty() || part == ".") return Status::Ok();
    if (part == "..") {
      if (resolved.empty())
        return Status::InvalidArgument("a link may not point out of the bundle");
      resolved.pop_back();
      return Status::Ok();
    }
    resolved.emplace_back(part);
    visited.push_back(JoinBundlePath(resolved, resolved.size()));
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return visited;
}

std::string DefaultBundleHandler(std::string_view runtime) {
  if (runtime == "python") return "handler.py";
  if (runtime == "javascript") return "handler.js";
  return "handler.lua";
}

}  // namespace toolgate::core
