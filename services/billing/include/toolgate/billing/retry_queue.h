// RetryQueue: steps that must eventually apply, retried in the background until they do.
//
// Used for Redis updates that follow a durable ledger write (a capture, a top-up credit) when
// Redis is briefly unreachable: the caller has its answer already, and the step catches up.
// Every step must be idempotent, because a step whose reply was lost is run again. Steps live in
// memory; those still pending when the process stops are logged, and the reaper (captures) or
// `toolgate-billing reconcile` (balances) repairs them. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "toolgate/base/status.h"

namespace toolgate::billing {

class RetryQueue {
 public:
  using Step = std::function<Status()>;

  // Starts the retry thread; interval_ms is the pause between rounds.
  explicit RetryQueue(int64_t interval_ms = 500);
  // Tries every pending step once more, logs what is left, and joins the thread.
  ~RetryQueue();
  RetryQueue(const RetryQueue&) = delete;
  RetryQueue& operator=(const RetryQueue&) = delete;

  // what names the step in logs (an execution id, a ledger id), never a secret. A step is
  // retried while it fails with a transient status (see IsTransient) and dropped, logged, when
  // it fails otherwise.
  void Add(std::string what, Step step);
  size_t pending() const;

  // Unavailable and Timeout: the store may answer later.
  static bool IsTransient(const Status& status);

 private:
  struct Entry {
    std::string what;
    Step step;
  };
  void Loop();
  // Runs each step of entries; returns those that failed.
  static std::deque<Entry> RunAll(std::deque<Entry> entries);

  const int64_t interval_ms_;
  mutable std::mutex mu_;
  std::condition_variable cv_;  // stopping_ was set
  std::deque<Entry> entries_;   // guarded by mu_
  bool stopping_ = false;       // guarded by mu_
  std::thread thread_;
};

}  // namespace toolgate::billing
