// StaticFiles: the web app's files, served by the edge from one directory.
//
// Paths are resolved inside the root only (no "..", no symlink escape). An unknown path that is
// an app route (IsAppRoute) gets its directory's index.html when there is one ("/docs": the API
// reference, rendered at build time), else the root's index.html, so the single-page app's own
// routes work on reload. Files are read once and kept in memory: the app is small and
// immutable per release. Thread-safe after construction.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace toolgate::edge {

struct StaticFile {
  std::string content_type;
  std::string body;
};

class StaticFiles {
 public:
  // Loads every regular file under root. An empty or missing root serves nothing.
  explicit StaticFiles(const std::string& root);

  // The file for a request path ("/", "/app.js", "/tools/123", "/docs"), or nullopt.
  std::optional<StaticFile> Find(const std::string& path) const;
  bool empty() const { return files_.empty(); }

  static std::string ContentTypeFor(const std::string& path);
  // Whether path may be one of the app's own routes: not under /api, /mcp or an operator's path
  // (/metrics, /healthz, /readyz, /livez), and with no dot in its last segment.
  static bool IsAppRoute(const std::string& path);

 private:
  std::map<std::string, StaticFile> files_;  // keyed by "/relative/path"
};

}  // namespace toolgate::edge
