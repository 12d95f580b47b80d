#include "toolgate/billing/retry_queue.h"

#include <chrono>

#include "toolgate/base/log.h"

namespace toolgate::billing {

bool RetryQueue::IsTransient(const Status& status) {
  return status.code() == Status::Code::kUnavailable || status.code() == Status::Code::kTimeout;
}

RetryQueue::RetryQueue(int64_t interval_ms)
    : interval_ms_(interval_ms), thread_([this] { Loop(); }) {}

RetryQueue::~RetryQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
  std::deque<Entry> left = RunAll(std::move(entries_));
  for (const Entry& e : left) {
    log::Error("pending balance update abandoned at shutdown; the reaper or reconcile repairs it")
        .Str("step", e.what);
  }
}

void RetryQueue::Add(std::string what, Step step) {
  log::Warn("balance update deferred; retrying in the background").Str("step", what);
  std::lock_guard<std::mutex> lock(mu_);
  entries_.push_back({std::move(what), std::move(step)});
}

size_t RetryQueue::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

std::deque<RetryQueue::Entry> RetryQueue::RunAll(std::deque<Entry> entries) {
  std::deque<Entry> failed;
  for (Entry& e : entries) {
    Status s = e.step();
    if (s.ok()) {
      log::Info("deferred balance update applied").Str("step", e.what);
    } else if (IsTransient(s)) {
      failed.push_back(std::move(e));
    } else {
      // Retrying cannot help; reconcile repairs the balance.
      log::Error("deferred balance update failed for good")
          .Str("step", e.what)
          .Str("error", s.ToString());
    }
  }
  return failed;
}

void RetryQueue::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait_for(lock, std::chrono::milliseconds(interval_ms_), [this] { return stopping_; });
    if (stopping_) return;
    if (entries_.empty()) continue;
    std::deque<Entry> batch = std::move(entries_);
    entries_.clear();
    lock.unlock();
    std::deque<Entry> failed = RunAll(std::move(batch));
    lock.lock();
    // Failed steps go back in front of any added meanwhile, oldest first.
    entries_.insert(entries_.begin(), std::make_move_iterator(failed.begin()),
                    std::make_move_iterator(failed.end()));
  }
}

}  // namespace toolgate::billing
