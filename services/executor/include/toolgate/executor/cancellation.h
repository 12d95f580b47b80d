// Cancelling a running call (POST /api/v1/executions/{id}/cancel reaches every executor as
// tg.exec.cancel): the call's wait polls a CancelSignal beside its worker's pipes, and kills the
// worker's sandbox the moment it fires.
//
//   RunningCalls running;
//   auto signal = running.Begin(job.execution_id());   // before the call starts
//   invocation.cancel = signal.get();                   // ProcessWorker::Call polls signal->fd()
//   ... run ...
//   running.End(job.execution_id());
//   // on tg.exec.cancel: running.Cancel(execution_id)
//
// A cancel that arrives before its call began (the job waits for a slot) is remembered for a
// while, and Begin then returns a signal that has fired: the call does not start.
// Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "toolgate/base/bounded_ttl_cache.h"

namespace toolgate::executor {

// A one-shot signal: an eventfd that becomes readable, for good, once Cancel is called.
class CancelSignal {
 public:
  CancelSignal();
  ~CancelSignal();
  CancelSignal(const CancelSignal&) = delete;
  CancelSignal& operator=(const CancelSignal&) = delete;

  void Cancel();
  bool cancelled() const;
  // For poll(2): POLLIN once cancelled. -1 if no eventfd could be made (then cancelled() alone
  // tells, and a running call is not interrupted).
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  mutable std::mutex mu_;
  bool cancelled_ = false;  // guarded by mu_
};

class RunningCalls {
 public:
  // How long a cancel of a call not running here is remembered: longer than a job waits for a
  // slot (the scheduler's queue timeout).
  static constexpr int64_t kEarlyCancelMemoryMs = 10 * 60 * 1000;

  // The signal of the call of execution_id, fired already when a cancel came first.
  std::shared_ptr<CancelSignal> Begin(const std::string& execution_id);
  void End(const std::string& execution_id);
  // Fires the signal of the call running here; otherwise remembers the cancel. True when a
  // call running here was signalled.
  bool Cancel(const std::string& execution_id);

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<CancelSignal>> running_;  // guarded by mu_
  BoundedTtlCache<std::string, bool> early_{4096};
};

}  // namespace toolgate::executor
