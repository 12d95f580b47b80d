#include "toolgate/executor/worker_pool.h"

#include <algorithm>
#include <chrono>

#include "toolgate/base/time.h"

namespace toolgate::executor {

WorkerPool::WorkerPool(WorkerPoolOptions options, Clock clock)
    : options_(options),
      clock_(clock ? std::move(clock) : Clock([] { return MonotonicUs() / 1000; })) {
  // Slots are handed out lowest first, so uids stay in a small, predictable range.
  for (size_t i = options_.max_workers; i > 0; --i) free_slots_.push_back(static_cast<int>(i - 1));
  if (options_.reap_interval_ms > 0) reaper_ = std::thread([this] { ReapLoop(); });
}

WorkerPool::~WorkerPool() {
  IdleList doomed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    doomed.splice(doomed.end(), idle_);
    by_key_.clear();
  }
  stop_cv_.notify_all();
  if (reaper_.joinable()) reaper_.join();
  // doomed's workers stop here, outside the lock.
}

void WorkerPool::Unindex(IdleList::iterator it) {
  auto k = by_key_.find(it->key);
  auto& list = k->second;
  list.erase(std::find(list.begin(), list.end(), it));
  if (list.empty()) by_key_.erase(k);
}

Result<WorkerPool::Lease> WorkerPool::Acquire(const std::string& key, const Factory& start,
                                              int64_t deadline_ms) {
  Lease lease;
  lease.key = key;
  std::unique_ptr<Worker> victim;  // stopped outside the lock
  {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      auto k = by_key_.find(key);
      if (k != by_key_.end()) {
        IdleList::iterator it = k->second.back();  // the most recently used
        Unindex(it);
        lease.worker = std::move(it->worker);
        lease.slot = it->slot;
        lease.calls = it->calls;
        idle_.erase(it);
        ++stats_.busy;
        --stats_.idle;
        ++stats_.reused;
        return lease;
      }
      if (!free_slots_.empty()) {
        lease.slot = free_slots_.back();
        free_slots_.pop_back();
        break;
      }
      if (!idle_.empty()) {
        IdleList::iterator it = std::prev(idle_.end());  // the least recently used
        Unindex(it);
        victim = std::move(it->worker);
        lease.slot = it->slot;
        idle_.erase(it);
        --stats_.idle;
        ++stats_.evicted;
        break;
      }
      int64_t left_ms = deadline_ms - clock_();
      if (left_ms <= 0 || returned_cv_.wait_for(lock, std::chrono::milliseconds(left_ms)) ==
                              std::cv_status::timeout) {
        if (clock_() >= deadline_ms) {
          return Status::Unavailable("every worker of this executor is busy");
        }
      }
    }
    ++stats_.busy;
    ++stats_.started;
  }
  victim.reset();
  auto worker = start(lease.slot);
  if (!worker.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    free_slots_.push_back(lease.slot);
    --stats_.busy;
    --stats_.started;
    returned_cv_.notify_one();
    return worker.status();
  }
  lease.worker = std::move(*worker);
  lease.fresh = true;
  return lease;
}

void WorkerPool::Release(Lease lease, bool reusable) {
  ++lease.calls;
  bool keep = reusable && lease.calls < options_.max_calls_per_worker;
  {
    std::lock_guard<std::mutex> lock(mu_);
    --stats_.busy;
    if (keep && !stopping_) {
      idle_.push_front(Idle{lease.key, std::move(lease.worker), lease.slot, lease.calls, clock_()});
      by_key_[lease.key].push_back(idle_.begin());
      ++stats_.idle;
    } else {
      if (reusable) ++stats_.recycled;
      free_slots_.push_back(lease.slot);
    }
  }
  returned_cv_.notify_one();
  // A worker not kept stops here, as lease goes out of scope, outside the lock.
}

size_t WorkerPool::CloseIdle() {
  IdleList doomed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t now = clock_();
    while (!idle_.empty() && now - idle_.back().idle_since_ms >= options_.max_idle_ms) {
      IdleList::iterator it = std::prev(idle_.end());
      Unindex(it);
      free_slots_.push_back(it->slot);
      doomed.splice(doomed.begin(), idle_, it);
      --stats_.idle;
      ++stats_.expired;
    }
  }
  if (!doomed.empty()) returned_cv_.notify_all();
  return doomed.size();
}

WorkerPool::Stats WorkerPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void WorkerPool::ReapLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    stop_cv_.wait_for(lock, std::chrono::milliseconds(options_.reap_interval_ms));
    if (stopping_) break;
    lock.unlock();
    CloseIdle();
    lock.lock();
  }
}

}  // namespace toolgate::executor
