// CodeStore: a version's code, from a byte-bounded LRU cache or, on a miss, from its source (the
// registry). Published versions are immutable, so an entry never goes stale; the cache only
// bounds memory.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "toolgate/base/status.h"
#include "toolgate/bus/bus.h"
#include "toolgate/executor/bundle_cache.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::executor {

using Code = std::shared_ptr<const std::string>;

// Where code comes from on a cache miss.
class CodeSource {
 public:
  virtual ~CodeSource() = default;
  // The code of a published version. NotFound when there is no such version; Unavailable or
  // Timeout when the source cannot answer. Called concurrently from workers.
  virtual Result<std::string> Fetch(const std::string& function_id, const std::string& version,
                                    std::string_view traceparent) = 0;
};

// Asks the registry: CodeRequest on tg.registry.code, answered with a CodeReply (its code, or
// its bundle's bytes for a bundle version).
class RegistryCodeSource : public CodeSource, public BundleSource {
 public:
  // bus must outlive this object.
  RegistryCodeSource(bus::Bus& bus, int timeout_ms) : bus_(bus), timeout_ms_(timeout_ms) {}
  Result<std::string> Fetch(const std::string& function_id, const std::string& version,
                            std::string_view traceparent) override;
  Result<std::string> FetchBundle(const std::string& function_id, const std::string& version,
                                  std::string_view traceparent) override;

 private:
  Result<v1::CodeReply> Ask(const std::string& function_id, const std::string& version,
                            std::string_view traceparent);

  bus::Bus& bus_;
  int timeout_ms_;
};

class CodeStore {
 public:
  // source must outlive the store. Keeps at most max_bytes of code; a single code larger than
  // that is served but not kept.
  CodeStore(size_t max_bytes, CodeSource& source) : max_bytes_(max_bytes), source_(source) {}

  // The code of function_id at version, from the cache or the source (whose failure is
  // returned as is). Thread-safe; concurrent misses of one version may both fetch it.
  Result<Code> Get(const std::string& function_id, const std::string& version,
                   std::string_view traceparent);

  // Bytes of code held now.
  size_t bytes() const;

 private:
  struct Entry {
    std::string key;
    Code code;
  };
  Code Lookup(const std::string& key);
  void Insert(const std::string& key, Code code);

  const size_t max_bytes_;
  CodeSource& source_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // guarded by mu_; most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;  // guarded by mu_
  size_t bytes_ = 0;                                                   // guarded by mu_
};

}  // namespace toolgate::executor
