// FunctionCache: the registry's view of functions and workspace adds, in memory, from which it
// answers the edges' function views (tg.registry.function_view) and the MCP tool lists.
//
// Entries are filled on a miss from a FunctionSource (PostgreSQL in production) and dropped by the
// broadcast events tg.events.function_changed and tg.events.workspace_changed, so a warm call
// touches no database. Two guards keep an entry from going stale:
//   * a load that overlaps any drop is returned to its caller but not kept, so a slow read that
//     began before a change can never re-insert what the change invalidated;
//   * entries older than max_age_ms are reloaded, which bounds staleness should an event be lost
//     (for example while this replica was disconnected from NATS).
// Unknown function ids are cached too (as absent), so a stream of calls to a deleted or mistyped
// id does not reach the database; the map is cleared when it grows past max_entries.
//
// Thread-safe. Loads run outside the lock; two threads missing the same key may both load.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "toolgate/base/status.h"
#include "toolgate/registry/model.h"

namespace toolgate::registry {

// Where the cache reads on a miss. Implementations must be thread-safe.
class FunctionSource {
 public:
  virtual ~FunctionSource() = default;
  // nullopt when no function has that id; Unavailable when the store cannot answer.
  virtual Result<std::optional<CachedFunction>> LoadFunction(const std::string& function_id) = 0;
  // The ids of the functions org_id has added to its workspace.
  virtual Result<std::unordered_set<std::string>> LoadAdded(const std::string& org_id) = 0;
};

class FunctionCache {
 public:
  struct Options {
    int64_t max_age_ms = 60'000;
    size_t max_entries = 100'000;     // per map
    std::function<int64_t()> now_ms;  // monotonic milliseconds; defaults to the system clock
  };

  // source must outlive the cache.
  FunctionCache(FunctionSource& source, Options options);
  explicit FunctionCache(FunctionSource& source) : FunctionCache(source, Options{}) {}

  // The function, nullptr when none has that id (function_id must be lower-case), or the
  // source's error.
  Result<std::shared_ptr<const CachedFunction>> Function(const std::string& function_id);
  // Whether org_id has added function_id, or the source's error.
  Result<bool> IsAdded(const std::string& org_id, const std::string& function_id);

  // Event handlers: forget what a change made stale.
  void DropFunction(const std::string& function_id);
  void DropWorkspace(const std::string& org_id);

 private:
  template <typename T>
  struct Entry {
    std::shared_ptr<const T> value;  // nullptr: known to be absent
    int64_t loaded_at_ms = 0;
  };
  using AddedSet = std::unordered_set<std::string>;

  FunctionSource& source_;
  Options options_;
  std::mutex mu_;
  uint64_t generation_ = 0;  // guarded by mu_; bumped by every drop
  std::unordered_map<std::string, Entry<CachedFunction>> functions_;  // guarded by mu_
  std::unordered_map<std::string, Entry<AddedSet>> added_;            // guarded by mu_
};

}  // namespace toolgate::registry
