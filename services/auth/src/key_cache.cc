#include "toolgate/auth/key_cache.h"

namespace toolgate::auth {

std::optional<KeyRecord> KeyCache::Get(std::string_view key_sha256, int64_t now_us) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(std::string(key_sha256));
  if (it == entries_.end() || now_us - it->second.loaded_at_us >= ttl_us_) return std::nullopt;
  return it->second.record;
}

uint64_t KeyCache::generation() const {
  std::lock_guard<std::mutex> lock(mu_);
  return generation_;
}

void KeyCache::Put(const std::string& key_sha256, KeyRecord record, uint64_t generation_at_load,
                   int64_t now_us) {
  std::lock_guard<std::mutex> lock(mu_);
  if (generation_at_load != generation_) return;
  entries_[key_sha256] = Entry{std::move(record), now_us};
}

bool KeyCache::KnownUnknown(std::string_view key_sha256, int64_t now_us) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = unknown_.find(std::string(key_sha256));
  return it != unknown_.end() && now_us - it->second < ttl_us_;
}

void KeyCache::PutUnknown(const std::string& key_sha256, uint64_t generation_at_load,
                          int64_t now_us) {
  std::lock_guard<std::mutex> lock(mu_);
  if (generation_at_load != generation_) return;
  if (unknown_.size() >= max_unknown_) unknown_.clear();
  unknown_[key_sha256] = now_us;
}

void KeyCache::Invalidate(std::string_view key_sha256) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.erase(std::string(key_sha256));
  unknown_.erase(std::string(key_sha256));
  ++generation_;
}

void KeyCache::Prune(int64_t now_us) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(entries_,
                [&](const auto& kv) { return now_us - kv.second.loaded_at_us >= ttl_us_; });
  std::erase_if(unknown_, [&](const auto& kv) { return now_us - kv.second >= ttl_us_; });
}

size_t KeyCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

size_t KeyCache::unknown_size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return unknown_.size();
}

}  // namespace toolgate::auth
