// BatchQueue: many producers, one consumer thread that takes whatever has queued as one batch.
//
// Group commit needs exactly this: while the consumer writes one batch (a PostgreSQL transaction,
// a pipelined Redis round trip), the items arriving meanwhile queue up and become the next batch,
// so one fsync serves every item that waited for it. Under light load a batch is one item and
// nothing waits on a timer; under heavy load batches grow up to max_batch.
//
// A queue may be bounded (max_queue): a producer that must never wait, such as a span ending on
// an event loop, then loses the item when the consumer has fallen that far behind, and the loss
// is counted (dropped()). Unbounded by default: group commit must not lose a charge.
//
// A queue may linger: after each batch the consumer lets items gather for up to linger before
// it takes the next, so that a steady trickle wakes it once per linger instead of once per item
// (a log writer, whose lines may wait). Flush and Hurry end a linger at once. Off by default:
// group commit must not wait.
//
// Thread-safe. The consumer runs on the queue's own thread, one batch at a time, in push order.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
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

  // Starts the consumer thread. max_batch >= 1; max_queue: items waiting at most (0: no bound);
  // linger: how long items may gather after each batch (0: none).
  BatchQueue(size_t max_batch, Consumer consume, size_t max_queue = 0,
             std::chrono::milliseconds linger = std::chrono::milliseconds(0))
      : max_batch_(max_batch < 1 ? 1 : max_batch),
        max_queue_(max_queue),
        linger_(linger),
        consume_(std::move(consume)),
        thread_([this] { Loop(); }) {}
  // Stop().
  ~BatchQueue() { Stop(); }
  BatchQueue(const BatchQueue&) = delete;
  BatchQueue& operator=(const BatchQueue&) = delete;

  // Queues item; false (item dropped) once Stop() has begun, or when max_queue items already
  // wait (counted in dropped()). Never waits for the consumer.
  bool Push(T item) { return Offer(item, /*count_drop=*/true); }

  // Like Push, but a refused item stays with the caller (who will write it some other way) and
  // is not counted as dropped.
  bool TryPush(T& item) { return Offer(item, /*count_drop=*/false); }

  // Waits until every item pushed before the call has been consumed (returns at once on the
  // consumer's own thread, which would wait for itself). Ends a linger.
  void Flush() {
    if (std::this_thread::get_id() == thread_.get_id()) return;
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t target = pushed_;
    hurry_ = true;
    linger_cv_.notify_one();
    consumed_cv_.wait(lock, [&] { return consumed_ >= target || finished_; });
  }

  // Ends the current linger, or the next one if the consumer is not lingering now.
  void Hurry() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      hurry_ = true;
    }
    linger_cv_.notify_one();
  }

  // Items refused because the queue was full.
  uint64_t dropped() const {
    std::lock_guard<std::mutex> lock(mu_);
    return dropped_;
  }

  // Refuses new items, lets the consumer take everything already queued, and joins its thread.
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_one();
    linger_cv_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

 private:
  bool Offer(T& item, bool count_drop) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return false;
      if (max_queue_ > 0 && queue_.size() >= max_queue_) {
        if (count_drop) ++dropped_;
        return false;
      }
      queue_.push_back(std::move(item));
      ++pushed_;
    }
    cv_.notify_one();
    return true;
  }

  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) {  // stopping, and everything queued was consumed
        finished_ = true;
        consumed_cv_.notify_all();
        return;
      }
      std::vector<T> batch;
      while (!queue_.empty() && batch.size() < max_batch_) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      const size_t n = batch.size();
      lock.unlock();
      consume_(std::move(batch));
      lock.lock();
      consumed_ += n;
      consumed_cv_.notify_all();
      if (linger_.count() > 0) {
        // Items queued now wait here without waking this thread: producers notify cv_.
        linger_cv_.wait_for(lock, linger_, [this] { return hurry_ || stopping_; });
      }
      hurry_ = false;
    }
  }

  const size_t max_batch_;
  const size_t max_queue_;
  const std::chrono::milliseconds linger_;
  const Consumer consume_;
  mutable std::mutex mu_;
  std::condition_variable cv_;           // an item was queued, or stopping_
  std::condition_variable consumed_cv_;  // a batch was consumed, or the consumer finished
  std::condition_variable linger_cv_;    // hurry_ or stopping_ set
  std::deque<T> queue_;                  // guarded by mu_
  uint64_t pushed_ = 0;                  // guarded by mu_: items accepted so far
  uint64_t consumed_ = 0;                // guarded by mu_: items consumed so far
  uint64_t dropped_ = 0;                 // guarded by mu_
  bool stopping_ = false;                // guarded by mu_
  bool hurry_ = false;                   // guarded by mu_: end the linger
  bool finished_ = false;                // guarded by mu_: the consumer thread has returned
  std::thread thread_;                   // last: starts once the members above exist
};

}  // namespace toolgate
