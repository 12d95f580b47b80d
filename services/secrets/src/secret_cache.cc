#include "toolgate/secrets/secret_cache.h"

#include "toolgate/base/time.h"

namespace toolgate::secrets {

SecretCache::SecretCache(Loader loader, Options options)
    : loader_(std::move(loader)), options_(std::move(options)) {
  if (!options_.now_ms) options_.now_ms = [] { return MonotonicUs() / 1000; };
}

Result<SecretCache::Rows> SecretCache::Get(const std::vector<std::string>& ids) {
  Rows found;
  std::vector<std::string> missing;
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t now = options_.now_ms();
    for (const auto& id : ids) {
      auto it = entries_.find(id);
      if (it != entries_.end() && now - it->second.loaded_at_ms < options_.max_age_ms) {
        found.emplace(id, it->second.row);
      } else {
        missing.push_back(id);
      }
    }
    generation = generation_;
  }
  if (missing.empty()) return found;
  auto loaded = loader_(missing);
  if (!loaded.ok()) return loaded.status();
  std::lock_guard<std::mutex> lock(mu_);
  const bool keep = generation == generation_;
  if (keep && entries_.size() + loaded->size() > options_.max_entries) entries_.clear();
  for (auto& row : *loaded) {
    if (keep) entries_[row.id] = {row, options_.now_ms()};
    std::string id = row.id;
    found.emplace(std::move(id), std::move(row));
  }
  return found;
}

void SecretCache::Drop(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  ++generation_;
  entries_.erase(id);
}

}  // namespace toolgate::secrets
