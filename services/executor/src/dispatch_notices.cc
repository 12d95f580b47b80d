#include "toolgate/executor/dispatch_notices.h"

#include <chrono>
#include <cstdint>

#include "toolgate/base/time.h"

namespace toolgate::executor {

DispatchNotices::DispatchNotices(Send send, int64_t notice_after_ms, Flush flush)
    : send_(std::move(send)),
      flush_(std::move(flush)),
      notice_after_us_(notice_after_ms * 1000),
      thread_([this] { Loop(); }) {}

DispatchNotices::~DispatchNotices() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

uint64_t DispatchNotices::Arrived(const v1::InvokeJob& job, const std::string& traceparent) {
  Notice notice{MonotonicUs() + notice_after_us_, job.edge_reply(), traceparent,
                job.function().timeout_ms()};
  bool earlier;
  uint64_t ticket;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ticket = next_ticket_++;
    // Otherwise the timer already sleeps until a due time no later than this one.
    earlier = notice.due_us < armed_until_us_;
    if (earlier) {
      armed_until_us_ = notice.due_us;
      ++wakeups_;
    }
    pending_.emplace(ticket, std::move(notice));
  }
  if (earlier) cv_.notify_one();
  return ticket;
}

void DispatchNotices::Done(uint64_t ticket) {
  std::lock_guard<std::mutex> lock(mu_);
  pending_.erase(ticket);
}

uint64_t DispatchNotices::sent() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sent_;
}

uint64_t DispatchNotices::wakeups() const {
  std::lock_guard<std::mutex> lock(mu_);
  return wakeups_;
}

void DispatchNotices::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    const int64_t now_us = MonotonicUs();
    if (pending_.empty()) {
      // The alarm stays set until it rings even when the jobs it was for have finished: an
      // arrival meanwhile is due later and need not wake the timer.
      if (armed_until_us_ != INT64_MAX && armed_until_us_ > now_us) {
        cv_.wait_for(lock, std::chrono::microseconds(armed_until_us_ - now_us));
      } else {
        armed_until_us_ = INT64_MAX;
        cv_.wait(lock);
      }
      continue;
    }
    auto first = pending_.begin();
    int64_t wait_us = first->second.due_us - now_us;
    if (wait_us > 0) {
      // Done() may remove the first notice meanwhile: the timer still wakes at its due time,
      // finds the next one and sleeps again.
      armed_until_us_ = first->second.due_us;
      cv_.wait_for(lock, std::chrono::microseconds(wait_us));
      continue;
    }
    Notice notice = std::move(first->second);
    pending_.erase(first);
    // An asynchronous execution has no edge waiting for it (its edge_reply is empty).
    if (notice.edge_reply.empty()) continue;
    ++sent_;
    lock.unlock();
    v1::InvokeReply dispatched;
    dispatched.mutable_dispatched()->set_timeout_ms(notice.timeout_ms);
    send_(notice.edge_reply, dispatched.SerializeAsString(), notice.traceparent);
    lock.lock();
  }
}

}  // namespace toolgate::executor
