// Process lifecycle: shutdown signals and a small worker pool.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace toolgate {

// Blocks SIGTERM, SIGINT and SIGPIPE in the calling thread and every thread it creates later.
// Call first in main(), before any library starts a thread.
void BlockShutdownSignals();
// Waits for SIGTERM or SIGINT (blocked by BlockShutdownSignals); returns the signal number.
int WaitForShutdownSignal();

// A fixed set of threads running submitted tasks in FIFO order. Thread-safe.
class ThreadPool {
 public:
  explicit ThreadPool(size_t threads);
  // Runs every queued task, then joins.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Submit(std::function<void()> task);
  // Blocks until no task is queued or running.
  void WaitIdle();
  size_t size() const { return threads_.size(); }

 private:
  void Loop();
  std::mutex mu_;
  std::condition_variable work_cv_;  // guarded by mu_: a task was queued or stopping_
  std::condition_variable idle_cv_;  // guarded by mu_: busy_ reached 0 with an empty queue
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  size_t busy_ = 0;                          // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace toolgate
