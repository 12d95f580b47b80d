#include "toolgate/registry/execution_counter.h"

#include "toolgate/base/log.h"

namespace toolgate::registry {

ExecutionCounter::ExecutionCounter(Writer writer, std::chrono::milliseconds interval)
    : writer_(std::move(writer)), interval_(interval) {
  if (interval_.count() > 0) {
    thread_ = std::jthread([this](std::stop_token stop) { Loop(stop); });
  }
}

ExecutionCounter::~ExecutionCounter() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
  Status s = Flush();
  if (!s.ok()) log::Error("execution counts lost at shutdown").Str("error", s.ToString());
}

void ExecutionCounter::Add(const std::string& function_id, const std::string& caller_org_id,
                           int64_t at_ms) {
  constexpr int64_t kDayMs = 86'400'000;
  // Floor division: a (clock-skewed) time before 1970 still lands on its own day.
  int64_t day = at_ms >= 0 ? at_ms / kDayMs : (at_ms - kDayMs + 1) / kDayMs;
  std::lock_guard<std::mutex> lock(mu_);
  ++pending_[ExecutionKey{function_id, caller_org_id, day}];
}

Status ExecutionCounter::Flush() {
  std::lock_guard<std::mutex> flush_lock(flush_mu_);
  Counts batch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    batch.swap(pending_);
  }
  if (batch.empty()) return Status::Ok();
  Status s = writer_(batch);
  if (!s.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, n] : batch) pending_[key] += n;
  }
  return s;
}

void ExecutionCounter::Loop(std::stop_token stop) {
  std::mutex sleep_mu;
  while (!stop.stop_requested()) {
    {
      std::unique_lock<std::mutex> lock(sleep_mu);
      wake_.wait_for(lock, stop, interval_, [] { return false; });
    }
    if (stop.stop_requested()) return;  // the destructor flushes
    Status s = Flush();
    if (!s.ok()) log::Warn("execution counts not written; will retry").Str("error", s.ToString());
  }
}

}  // namespace toolgate::registry
