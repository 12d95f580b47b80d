// CallbackSender: delivers the final state of asynchronous executions made with X-Callback-Url
// (docs/api.md "Callbacks"). Every replica runs one; due callbacks are taken from PostgreSQL
// with a lease (ExecutionStates::TakeDueCallbacks: FOR UPDATE SKIP LOCKED), so each attempt is
// made by one replica and a replica that dies mid-attempt leaves it to be tried again when the
// lease ends. Durable: what is due, and every attempt, is in PostgreSQL.
//
// Each attempt POSTs the execution's status document (what GET /api/v1/executions/{id} shows of
// it) signed the Standard Webhooks way with the organization's webhook secret, and with the
// previous one too for a day after a rotation (webhook-id: the execution id, the same on every
// attempt). The target is judged at connect time against the operator's egress rules
// (webhook::EndpointRefusal: no private or loopback address outside --egress-allow-cidr, never
// the platform's own endpoints). Retried after a network failure, a 5xx or a 429, on
// CallbackRetryDelayMs's schedule, for 24 hours after the execution finished; another answer
// (2xx delivered, any other) ends it.
//
// Thread-safe; ticks on a thread of its own from Start until destruction.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "toolgate/billing/execution_states.h"
#include "toolgate/billing/webhook_secrets.h"
#include "toolgate/net/periodic_task.h"
#include "toolgate/webhook/transport.h"

namespace toolgate::billing {

// How long a callback is retried after its execution finished.
inline constexpr int64_t kCallbackRetryWindowMs = 24LL * 3600 * 1000;

// The wait after failed attempt number `attempts` (1-based) before the next: 1 s, 5 s, 30 s,
// 2 min, 10 min, 30 min, then hourly; nullopt once that would start more than
// kCallbackRetryWindowMs after the execution finished (elapsed_ms ago).
std::optional<int64_t> CallbackRetryDelayMs(int attempts, int64_t elapsed_ms);

class CallbackSender {
 public:
  // Every reference must outlive the sender. now_ms: the wall clock (Unix ms).
  CallbackSender(ExecutionStates& states, WebhookSecrets& secrets, webhook::Transport& transport,
                 std::function<int64_t()> now_ms = {});
  ~CallbackSender();

  // Starts ticking every interval_ms.
  void Start(int64_t interval_ms);
  void Stop();
  // One round: takes what is due and attempts each once. Returns how many were attempted.
  int RunOnce();

 private:
  void Attempt(const ExecutionState& state);

  ExecutionStates& states_;
  WebhookSecrets& secrets_;
  webhook::Transport& transport_;
  std::function<int64_t()> now_ms_;
  std::unique_ptr<net::PeriodicTask> task_;
};

}  // namespace toolgate::billing
