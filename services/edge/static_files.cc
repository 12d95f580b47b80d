#include "static_files.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace toolgate::edge {

StaticFiles::StaticFiles(const std::string& root) {
  std::error_code ec;
  if (root.empty() || !fs::is_directory(root, ec)) return;
  fs::path base = fs::canonical(root, ec);
  for (auto it = fs::recursive_directory_iterator(base, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string rel = "/" + fs::relative(it->path(), base).generic_string();
    files_[rel] = StaticFile{ContentTypeFor(rel), ss.str()};
  }
}

std::optional<StaticFile> StaticFiles::Find(const std::string& path) const {
  if (files_.empty()) return std::nullopt;
  // Only paths that were loaded can be answered, so ".." or a symlink cannot reach outside.
  std::string key = path == "/" ? "/index.html" : path;
  if (auto it = files_.find(key); it != files_.end()) return it->second;
  if (IsAppRoute(path)) {
    // A directory with a page of its own ("/docs" is /docs/index.html), else the app's.
    std::string dir = key.ends_with('/') ? key : key + "/";
    if (auto page = files_.find(dir + "index.html"); page != files_.end()) return page->second;
    if (auto index = files_.find("/index.html"); index != files_.end()) return index->second;
  }
  return std::nullopt;
}

std::string StaticFiles::ContentTypeFor(const std::string& path) {
  static const std::map<std::string, std::string> kTypes = {
      {".html", "text/html; charset=utf-8"},  {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"}, {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},          {".svg", "image/svg+xml"},
      {".png", "image/png"},                  {".ico", "image/x-icon"},
      {".woff2", "font/woff2"},               {".txt", "text/plain; charset=utf-8"},
      {".map", "application/json"}};
  size_t dot = path.rfind('.');
  if (dot != std::string::npos) {
    if (auto it = kTypes.find(path.substr(dot)); it != kTypes.end()) return it->second;
  }
  return "application/octet-stream";
}

bool StaticFiles::IsAppRoute(const std::string& path) {
  if (path.empty() || path[0] != '/') return false;
  size_t end = path.find('/', 1);
  std::string first = path.substr(1, end == std::string::npos ? end : end - 1);
  // The API's, MCP's and operators' paths are never pages: a scraper or client that asks the
  // public port for them must get a 404, not the app's HTML with a 200.
  static const char* const kNotPages[] = {"api", "mcp", "metrics", "healthz", "readyz", "livez"};
  for (const char* reserved : kNotPages) {
    if (first == reserved) return false;
  }
  // A path whose last segment has a dot asks for a file ("/app.js", "/.env"), which is missing.
  std::string last = path.substr(path.rfind('/') + 1);
  return last.find('.') == std::string::npos;
}

}  // namespace toolgate::edge
