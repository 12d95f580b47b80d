// Dispatcher: delivers webhooks in the background, with retries, through a Transport.
//
//   webhook::HttpTransport transport(options);
//   webhook::Dispatcher dispatcher(transport, {.source = "budget_alerts"});
//   dispatcher.Enqueue({url, webhook::NewMessageId(), body, key});  // never waits
//
// A bounded queue and one worker thread: Enqueue never waits (a full queue drops the message
// and counts it), the worker makes one attempt at a time, earliest due first, and a retryable
// failure (RetryPolicy) is queued again for later, so an endpoint that fails holds up the others
// for one attempt's timeout, not for its whole backoff. Each attempt is signed anew with its own
// webhook-timestamp; the webhook-id stays the message's, so a receiver can drop a repeat.
//
// Metrics: toolgate_webhook_deliveries_total{source, outcome} once per message (delivered,
// rejected, refused, failed: retries exhausted, dropped: queue full or stopped before its
// delivery ended) and toolgate_webhook_attempts_total{source, outcome} per attempt.
// Logs name the source, the message id and the outcome; never the key or the URL's path
// (which may carry a token of the receiver's).
//
// Thread-safe. The transport must outlive the dispatcher.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <queue>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "toolgate/metrics/metrics.h"
#include "toolgate/webhook/retry_policy.h"
#include "toolgate/webhook/transport.h"

namespace toolgate::webhook {

class Dispatcher {
 public:
  struct Options {
    // The metrics' and logs' name for what sends through this dispatcher.
    std::string source = "webhooks";
    RetryPolicy retry = {};
    // Messages waiting (first attempts and retries) at most.
    size_t max_queue = 10'000;
  };
  // Told once per message how its delivery ended, on the worker thread (must not block long):
  // the last attempt's result and how many attempts were made.
  using Finished = std::function<void(const Request&, const AttemptResult&, int attempts)>;

  // Starts the worker.
  Dispatcher(Transport& transport, Options options, Finished finished = {});
  // Stop().
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // Queues request for delivery now; false (dropped and counted) when max_queue messages wait
  // or Stop() has begun.
  bool Enqueue(Request request);
  // Waits for the attempt in progress (bounded by the transport's timeout), drops what waits
  // (counted) and joins the worker.
  void Stop();
  // Messages queued or being attempted.
  size_t pending() const;

 private:
  struct Item {
    Request request;
    int attempts = 0;  // made so far
    int64_t first_ms = 0;
    int64_t due_ms = 0;
    uint64_t seq = 0;  // ties on due_ms keep arrival order
  };
  struct Later {
    bool operator()(const Item& a, const Item& b) const {
      return a.due_ms != b.due_ms ? a.due_ms > b.due_ms : a.seq > b.seq;
    }
  };

  void Loop();
  // Makes item's next attempt; returns true when it is to be queued again.
  bool AttemptOnce(Item& item);
  void Count(std::string_view outcome, int64_t n = 1);

  Transport& transport_;
  const Options options_;
  const Finished finished_;
  metrics::CounterFamily& deliveries_;
  metrics::CounterFamily& attempts_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::priority_queue<Item, std::vector<Item>, Later> queue_;  // guarded by mu_
  bool stopping_ = false;                                      // guarded by mu_
  bool busy_ = false;                                          // guarded by mu_: an attempt runs
  uint64_t next_seq_ = 0;                                      // guarded by mu_
  std::mt19937_64 jitter_;                                     // worker thread only
  std::thread worker_;  // last: starts once every member above exists
};

}  // namespace toolgate::webhook
