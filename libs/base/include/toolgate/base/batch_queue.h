// BatchQueue: many producers, one consumer thread that takes whatever has queued as one batch.
//
// Group commit needs exactly this: while the consumer writes one batch (a PostgreSQL transaction,
// a pipelined Redis round trip), the items arriving meanwhile queue up and become the next batch,
// so one fsync serves every item that waited for it. Under light load a batch is one item and
// nothing waits on a timer; under heavy load batches grow up to max_batch.
//
// Thread-safe. The consumer runs on the queue's own thread, one batch at a time, in push order.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace toolgate {

template <typename T>
class BatchQueue {
 public:
  using Consumer = std::function<void(std::vector<T>)>;

  // Starts the consumer thread. max_batch >= 1.
  BatchQueue(size_t max_batch, Consumer consume)
      : max_batch_(max_batch < 1 ? 1 : max_batch),
        consume_(std::move(consume)),
        thread_([this] { Loop(); }) {}
  // Stop().
  ~BatchQueue() { Stop(); }
  BatchQueue(const BatchQueue&) = delete;
  BatchQueue& operator=(const BatchQueue&) = delete;

  // Queues item; false (item dropped) once Stop() has begun.
  bool Push(T item) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return false;
      queue_.push_back(std::move(item));
    }
    cv_.notify_one();
    return true;
  }

  // Refuses new items, lets the consumer take everything already queued, and joins its thread.
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued was consumed
      std::vector<T> batch;
      while (!queue_.empty() && batch.size() < max_batch_) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      lock.unlock();
      consume_(std::move(batch));
      lock.lock();
    }
  }

  const size_t max_batch_;
  const Consumer consume_;
  std::mutex mu_;
  std::condition_variable cv_;  // an item was queued, or stopping_
  std::deque<T> queue_;         // guarded by mu_
  bool stopping_ = false;       // guarded by mu_
  std::thread thread_;          // last: starts once the members above exist
};

}  // namespace toolgate
