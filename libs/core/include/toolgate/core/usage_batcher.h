// UsageBatcher: remembers which API keys were used, so last_used_at travels and is written in
// batches off the hot path rather than once per call. The edge gathers the uses of the keys it
// decided and reports them to auth once a second (tg.auth.keys_used); auth gathers those reports
// and its own uses and writes them to PostgreSQL.
//
// Record() is a map update under a mutex; Take() hands over the latest use of each key since the
// previous Take(). Taken once a second, each key's row is written at most once a second.
// Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace toolgate::core {

class UsageBatcher {
 public:
  // key_id was used at now_ms (wall clock, epoch milliseconds).
  void Record(std::string_view key_id, int64_t now_ms);
  // key_id -> latest use since the previous Take(); the batcher is empty afterwards.
  std::unordered_map<std::string, int64_t> Take();

 private:
  std::mutex mu_;
  std::unordered_map<std::string, int64_t> last_used_ms_;  // guarded by mu_
};

}  // namespace toolgate::core
