// PeriodicTask: a function run every interval on a thread of its own, the one way a service runs
// background upkeep (flushing batched writes, pruning, reporting).
//
//   net::PeriodicTask flush(std::chrono::seconds(1), [this] { FlushUsage(); });
//   ...                     // FlushUsage runs once a second
//   // ~PeriodicTask: wakes the thread at once, waits for a tick in progress, joins; the last
//   // batch is the owner's to write after that (the task never ticks again).
//
// The first tick comes one interval after construction; ticks never overlap, and a tick that
// runs long delays the next one rather than piling up. Construct it last among its owner's
// members (or after what tick uses), so the thread starts once everything it touches exists,
// and the destructor runs first. Thread-safe; not copyable or movable.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace toolgate::net {

class PeriodicTask {
 public:
  PeriodicTask(std::chrono::milliseconds interval, std::function<void()> tick);
  ~PeriodicTask();
  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;

 private:
  void Loop();

  const std::chrono::milliseconds interval_;
  const std::function<void()> tick_;
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;     // last: starts once every member above exists
};

}  // namespace toolgate::net
