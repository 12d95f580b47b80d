// ExecutionCounter: counts executions per function in memory and writes them in batches, so the
// registry does one UPDATE a second rather than one per execution.
//
// A background thread flushes every interval; the destructor stops it and flushes what is left.
// A failed flush keeps its counts for the next one, so a PostgreSQL outage delays counters
// without losing them (short of a crash). Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "toolgate/base/status.h"

namespace toolgate::registry {

class ExecutionCounter {
 public:
  using Counts = std::unordered_map<std::string, int64_t>;  // function_id -> executions
  // Adds the counts to the store; on a non-OK status they are kept and retried.
  using Writer = std::function<Status(const Counts&)>;

  // interval zero: no background thread; call Flush() yourself (tests).
  ExecutionCounter(Writer writer, std::chrono::milliseconds interval);
  ~ExecutionCounter();
  ExecutionCounter(const ExecutionCounter&) = delete;
  ExecutionCounter& operator=(const ExecutionCounter&) = delete;

  void Add(const std::string& function_id);
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
