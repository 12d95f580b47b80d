#include "toolgate/registry/function_cache.h"

#include "toolgate/base/time.h"

namespace toolgate::registry {

FunctionCache::FunctionCache(FunctionSource& source, Options options)
    : source_(source), options_(std::move(options)) {
  if (!options_.now_ms) options_.now_ms = [] { return MonotonicUs() / 1000; };
}

Result<std::shared_ptr<const CachedFunction>> FunctionCache::Function(
    const std::string& function_id) {
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = functions_.find(function_id);
    if (it != functions_.end() &&
        options_.now_ms() - it->second.loaded_at_ms < options_.max_age_ms) {
      return it->second.value;
    }
    generation = generation_;
  }
  auto loaded = source_.LoadFunction(function_id);
  if (!loaded.ok()) return loaded.status();
  std::shared_ptr<const CachedFunction> value;
  if (loaded->has_value()) value = std::make_shared<const CachedFunction>(std::move(**loaded));
  std::lock_guard<std::mutex> lock(mu_);
  if (generation == generation_) {
    if (functions_.size() >= options_.max_entries) functions_.clear();
    functions_[function_id] = {value, options_.now_ms()};
  }
  return value;
}

Result<bool> FunctionCache::IsAdded(const std::string& org_id, const std::string& function_id) {
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = added_.find(org_id);
    if (it != added_.end() && options_.now_ms() - it->second.loaded_at_ms < options_.max_age_ms) {
      return it->second.value->count(function_id) > 0;
    }
    generation = generation_;
  }
  auto loaded = source_.LoadAdded(org_id);
  if (!loaded.ok()) return loaded.status();
  auto value = std::make_shared<const AddedSet>(std::move(loaded).value());
  bool added = value->count(function_id) > 0;
  std::lock_guard<std::mutex> lock(mu_);
  if (generation == generation_) {
    if (added_.size() >= options_.max_entries) added_.clear();
    added_[org_id] = {std::move(value), options_.now_ms()};
  }
  return added;
}

void FunctionCache::DropFunction(const std::string& function_id) {
  std::lock_guard<std::mutex> lock(mu_);
  ++generation_;
  functions_.erase(function_id);
}

void FunctionCache::DropWorkspace(const std::string& org_id) {
  std::lock_guard<std::mutex> lock(mu_);
  ++generation_;
  added_.erase(org_id);
}

}  // namespace toolgate::registry
