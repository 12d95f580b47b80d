#include "toolgate/webhook/dispatcher.h"

#include <cstring>

#include "toolgate/base/crypto.h"
#include "toolgate/base/log.h"
#include "toolgate/base/time.h"

namespace toolgate::webhook {
namespace {

std::string_view AttemptName(AttemptOutcome outcome) {
  switch (outcome) {
    case AttemptOutcome::kDelivered:
      return "delivered";
    case AttemptOutcome::kRejected:
      return "rejected";
    case AttemptOutcome::kRetryableHttp:
      return "retryable_status";
    case AttemptOutcome::kNetworkError:
      return "network_error";
    case AttemptOutcome::kRefused:
      return "refused";
  }
  return "unknown";
}

// The delivery's end as toolgate_webhook_deliveries_total names it.
std::string_view DeliveryName(AttemptOutcome last) {
  switch (last) {
    case AttemptOutcome::kDelivered:
      return "delivered";
    case AttemptOutcome::kRejected:
      return "rejected";
    case AttemptOutcome::kRefused:
      return "refused";
    case AttemptOutcome::kRetryableHttp:
    case AttemptOutcome::kNetworkError:
      return "failed";
  }
  return "failed";
}

uint64_t RandomSeed() {
  const std::string bytes = RandomBytes(sizeof(uint64_t));
  uint64_t seed = 0;
  std::memcpy(&seed, bytes.data(), sizeof seed);
  return seed;
}

int64_t SteadyMs() {
  return MonotonicUs() / 1000;
}

}  // namespace

Dispatcher::Dispatcher(Transport& transport, Options options, Finished finished)
    : transport_(transport),
      options_(std::move(options)),
      finished_(std::move(finished)),
      deliveries_(metrics::Registry::Global().Counter(
          "toolgate_webhook_deliveries_total",
          "Webhook messages by how their delivery ended (delivered, rejected, refused, failed "
          "after retries, dropped)",
          {"source", "outcome"})),
      attempts_(metrics::Registry::Global().Counter("toolgate_webhook_attempts_total",
                                                    "Webhook delivery attempts by outcome",
                                                    {"source", "outcome"})),
      jitter_(RandomSeed()),
      worker_([this] { Loop(); }) {}

Dispatcher::~Dispatcher() {
  Stop();
}

bool Dispatcher::Enqueue(Request request) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_ && queue_.size() < options_.max_queue) {
      const int64_t now = SteadyMs();
      queue_.push(Item{std::move(request), 0, now, now, next_seq_++});
      wake_.notify_one();
      return true;
    }
  }
  Count("dropped");
  log::Warn("webhook dropped: the delivery queue is full")
      .Str("source", options_.source)
      .Str("webhook_id", request.message_id);
  return false;
}

void Dispatcher::Stop() {
  size_t dropped = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !worker_.joinable()) return;
    stopping_ = true;
    dropped = queue_.size();
    queue_ = {};
    wake_.notify_all();
  }
  if (worker_.joinable()) worker_.join();
  if (dropped > 0) Count("dropped", static_cast<int64_t>(dropped));
}

size_t Dispatcher::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size() + (busy_ ? 1 : 0);
}

void Dispatcher::Count(std::string_view outcome, int64_t n) {
  deliveries_.With({options_.source, std::string(outcome)}).Inc(static_cast<uint64_t>(n));
}

void Dispatcher::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (stopping_) return;
    if (queue_.empty()) {
      wake_.wait(lock);
      continue;
    }
    const int64_t wait_ms = queue_.top().due_ms - SteadyMs();
    if (wait_ms > 0) {
      // A new message due earlier, or Stop, wakes it sooner.
      wake_.wait_for(lock, std::chrono::milliseconds(wait_ms));
      continue;
    }
    Item item = queue_.top();
    queue_.pop();
    busy_ = true;
    lock.unlock();
    const bool again = AttemptOnce(item);
    lock.lock();
    busy_ = false;
    if (!again) continue;
    if (stopping_) {
      lock.unlock();
      Count("dropped");
      lock.lock();
      continue;
    }
    item.seq = next_seq_++;
    queue_.push(std::move(item));
  }
}

bool Dispatcher::AttemptOnce(Item& item) {
  const AttemptResult result = transport_.Attempt(item.request, NowMs() / 1000);
  ++item.attempts;
  attempts_.With({options_.source, std::string(AttemptName(result.outcome))}).Inc();
  if (IsRetryable(result.outcome)) {
    const int64_t backoff = BackoffMs(options_.retry, item.attempts, jitter_());
    const int64_t due = SteadyMs() + backoff;
    if (ShouldRetry(options_.retry, result.outcome, item.attempts, due - item.first_ms)) {
      item.due_ms = due;
      log::Info("webhook attempt failed; retrying")
          .Str("source", options_.source)
          .Str("webhook_id", item.request.message_id)
          .Int("attempt", item.attempts)
          .Int("retry_in_ms", backoff)
          .Str("error", result.error);
      return true;
    }
  }
  Count(DeliveryName(result.outcome));
  if (result.outcome != AttemptOutcome::kDelivered) {
    log::Warn("webhook not delivered")
        .Str("source", options_.source)
        .Str("webhook_id", item.request.message_id)
        .Int("attempts", item.attempts)
        .Str("error", result.error);
  }
  if (finished_) finished_(item.request, result, item.attempts);
  return false;
}

}  // namespace toolgate::webhook
