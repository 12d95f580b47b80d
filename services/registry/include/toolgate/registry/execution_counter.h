// ExecutionCounter: counts executions per function, calling organization and UTC day in memory
// and writes them in batches, so the registry writes once a second rather than once per
// execution. The counts feed the functions' execution totals, the Trending highlight (per day)
// and the "has run" rule of ratings (per organization).
//
// A background thread flushes every interval; the destructor stops it and flushes what is left.
// A failed flush keeps its counts for the next one, so a PostgreSQL outage delays counters
// without losing them (short of a crash). Thread-safe.
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>

#include "toolgate/base/status.h"

namespace toolgate::registry {

// What one count is about.
struct ExecutionKey {
  std::string function_id;
  std::string caller_org_id;
  int64_t day = 0;  // UTC days since 1970-01-01

  bool operator<(const ExecutionKey& o) const {
    return std::tie(function_id, caller_org_id, day) <
           std::tie(o.function_id, o.caller_org_id, o.day);
  }
};

// Latency histogram buckets: 0 holds runs under 1 ms, b (1 .. kLatencyBuckets - 2) holds
// [2^(b-1), 2^b) ms, and the last one everything longer.
constexpr int kLatencyBuckets = 20;
int LatencyBucket(int64_t runtime_ms);
// The upper bound, in ms, of the bucket that holds the median of histogram (a p50 "at most");
// -1 when it is empty. The last bucket has no bound: it reports its lower one.
int64_t MedianUpperBoundMs(const std::array<int64_t, kLatencyBuckets>& histogram);

// What the executions of one key came to: how many, how many succeeded (the handler answered
// below 500), and their runtimes (only for executions whose outcome was known).
struct Tally {
  int64_t executions = 0;
  int64_t succeeded = 0;
  std::array<int64_t, kLatencyBuckets> latency{};
  Tally& operator+=(const Tally& o) {
    executions += o.executions;
    succeeded += o.succeeded;
    for (int b = 0; b < kLatencyBuckets; ++b) latency[b] += o.latency[b];
    return *this;
  }
};

class ExecutionCounter {
 public:
  using Counts = std::map<ExecutionKey, Tally>;
  // Adds the counts to the store; on a non-OK status they are kept and retried.
  using Writer = std::function<Status(const Counts&)>;

  // interval zero: no background thread; call Flush() yourself (tests).
  ExecutionCounter(Writer writer, std::chrono::milliseconds interval);
  ~ExecutionCounter();
  ExecutionCounter(const ExecutionCounter&) = delete;
  ExecutionCounter& operator=(const ExecutionCounter&) = delete;

  // Counts one execution of function_id by caller_org_id at at_ms (epoch milliseconds).
  void Add(const std::string& function_id, const std::string& caller_org_id, int64_t at_ms);
  // The same, with its outcome: runtime_ms for the latency, and whether it succeeded.
  void Add(const std::string& function_id, const std::string& caller_org_id, int64_t at_ms,
           int64_t runtime_ms, bool succeeded);
  // Writes the pending counts now; returns the writer's status (OK when nothing was pending).
  Status Flush();

 private:
  void Loop(std::stop_token stop);

  Writer writer_;
  std::chrono::milliseconds interval_;
  std::mutex mu_;
  Counts pending_;       // guarded by mu_
  std::mutex flush_mu_;  // one flush at a time, so a retried batch is never written twice
  std::condition_variable_any wake_;
  std::jthread thread_;  // last: starts after, and stops before, the members above go
};

}  // namespace toolgate::registry
