#include "toolgate/core/usage_batcher.h"

#include <algorithm>
#include <utility>

namespace toolgate::core {

void UsageBatcher::Record(std::string_view key_id, int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = last_used_ms_.try_emplace(std::string(key_id), now_ms);
  if (!inserted) it->second = std::max(it->second, now_ms);
}

std::unordered_map<std::string, int64_t> UsageBatcher::Take() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(last_used_ms_, {});
}

}  // namespace toolgate::core
