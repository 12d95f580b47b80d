#include "toolgate/registry/code_cache.h"

namespace toolgate::registry {

CodeCache::CodeCache(Loader loader, size_t max_bytes)
    : loader_(std::move(loader)), max_bytes_(max_bytes) {}

Result<std::shared_ptr<const VersionCode>> CodeCache::Get(const std::string& function_id,
                                                          const std::string& version) {
  // '/' appears in neither a UUID nor a version string, so keys cannot collide.
  const std::string key = function_id + "/" + version;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      return it->second->code;
    }
  }
  auto loaded = loader_(function_id, version);
  if (!loaded.ok()) return loaded.status();
  if (!loaded->has_value()) return std::shared_ptr<const VersionCode>();
  auto code = std::make_shared<const VersionCode>(std::move(**loaded));
  std::lock_guard<std::mutex> lock(mu_);
  InsertLocked(key, code);
  return code;
}

void CodeCache::InsertLocked(const std::string& key, std::shared_ptr<const VersionCode> code) {
  if (index_.count(key) > 0) return;  // another thread loaded it meanwhile
  bytes_ += Bytes(*code);
  lru_.push_front({key, std::move(code)});
  index_[key] = lru_.begin();
  while (bytes_ > max_bytes_ && lru_.size() > 1) {
    bytes_ -= Bytes(*lru_.back().code);
    index_.erase(lru_.back().key);
    lru_.pop_back();
  }
}

}  // namespace toolgate::registry
