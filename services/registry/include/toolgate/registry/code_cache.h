// CodeCache: the code (or bundle) of published versions, for executors asking tg.registry.code.
//
// Versions are immutable, so an entry never goes stale; the cache only bounds its memory, evicting
// the least recently used entries once the code and bundles it holds exceed max_bytes. Thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "toolgate/base/status.h"

namespace toolgate::registry {
// What an executor needs to run a version: its single-file code, or its bundle.
struct VersionCode {
  std::string code;           // "" for a bundle
  std::string bundle;         // the .tar.gz as published; "" for single-file code
  std::string bundle_digest;  // lower-case hex SHA-256 of bundle
};

class CodeCache {
 public:
  // Reads the code of (function_id, version): nullopt when not published, Unavailable when the
  // store cannot answer. Called outside the cache's lock; must be thread-safe.
  using Loader = std::function<Result<std::optional<VersionCode>>(const std::string& function_id,
                                                                  const std::string& version)>;

  CodeCache(Loader loader, size_t max_bytes);

  // The code, nullptr when that version is not published, or the loader's error.
  Result<std::shared_ptr<const VersionCode>> Get(const std::string& function_id,
                                                 const std::string& version);

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const VersionCode> code;
  };
  static size_t Bytes(const VersionCode& code) { return code.code.size() + code.bundle.size(); }
  void InsertLocked(const std::string& key, std::shared_ptr<const VersionCode> code);

  Loader loader_;
  size_t max_bytes_;
  std::mutex mu_;
  std::list<Entry> lru_;  // guarded by mu_; most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;  // guarded by mu_
  size_t bytes_ = 0;                                                   // guarded by mu_
};

}  // namespace toolgate::registry
