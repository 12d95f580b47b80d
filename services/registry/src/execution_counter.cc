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

int LatencyBucket(int64_t runtime_ms) {
  if (runtime_ms < 1) return 0;
  int b = 1;
  while (b < kLatencyBuckets - 1 && runtime_ms >= (int64_t{1} << b)) ++b;
  return b;
}

int64_t MedianUpperBoundMs(const std::array<int64_t, kLatencyBuckets>& histogram) {
  int64_t total = 0;
  for (int64_t n : histogram) total += n;
  if (total == 0) return -1;
  int64_t seen = 0;
  for (int b = 0; b < kLatencyBuckets; ++b) {
    seen += histogram[b];
    if (seen * 2 >= total) {
      if (b == kLatencyBuckets - 1) return int64_t{1} << (b - 1);
      return int64_t{1} << b;  // bucket 0: under 1 ms; bucket b: under 2^b ms
    }
  }
  return -1;
}

namespace {

int64_t DayOf(int64_t at_ms) {
  constexpr int64_t kDayMs = 86'400'000;
  // Floor division: a (clock-skewed) time before 1970 still lands on its own day.
  return at_ms >= 0 ? at_ms / kDayMs : (at_ms - kDayMs + 1) / kDayMs;
}

}  // namespace

void ExecutionCounter::Add(const std::string& function_id, const std::string& caller_org_id,
                           int64_t at_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  ++pending_[ExecutionKey{function_id, caller_org_id, DayOf(at_ms)}].executions;
}

void ExecutionCounter::Add(const std::string& function_id, const std::string& caller_org_id,
                           int64_t at_ms, int64_t runtime_ms, bool succeeded) {
  std::lock_guard<std::mutex> lock(mu_);
  Tally& t = pending_[ExecutionKey{function_id, caller_org_id, DayOf(at_ms)}];
  ++t.executions;
  if (succeeded) ++t.succeeded;
  ++t.latency[static_cast<size_t>(LatencyBucket(runtime_ms))];
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
