#include "toolgate/billing/callbacks.h"

#include <array>

#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/billing/execution_api.h"
#include "toolgate/metrics/metrics.h"
#include "toolgate/webhook/signature.h"

namespace toolgate::billing {
namespace {

constexpr std::array<int64_t, 6> kFirstDelaysMs = {1'000,   5'000,   30'000,
                                                   120'000, 600'000, 1'800'000};
constexpr int64_t kHourMs = 3'600'000;
// Taken at once, per round; and how long one is leased while it is attempted (an attempt takes
// at most the transport's 10 s timeout).
constexpr int kBatch = 16;
constexpr int64_t kLeaseMs = 60'000;

std::string_view OutcomeName(webhook::AttemptOutcome outcome) {
  switch (outcome) {
    case webhook::AttemptOutcome::kDelivered:
      return "delivered";
    case webhook::AttemptOutcome::kRejected:
      return "rejected";
    case webhook::AttemptOutcome::kRetryableHttp:
      return "retryable";
    case webhook::AttemptOutcome::kNetworkError:
      return "network_error";
    case webhook::AttemptOutcome::kRefused:
      return "refused";
  }
  return "network_error";
}

metrics::Counter& Attempts(std::string_view outcome) {
  static auto& family = metrics::Registry::Global().Counter(
      "toolgate_callback_attempts_total",
      "Attempts to deliver asynchronous executions' callbacks, by outcome: delivered, rejected, "
      "retryable, network_error or refused.",
      {"outcome"});
  return family.With({std::string(outcome)});
}

metrics::Counter& Failures() {
  static auto& failed = metrics::Registry::Global()
                            .Counter("toolgate_callback_failures_total",
                                     "Callbacks given up on: rejected by their receiver, refused, "
                                     "or not delivered within 24 hours.")
                            .With({});
  return failed;
}

}  // namespace

std::optional<int64_t> CallbackRetryDelayMs(int attempts, int64_t elapsed_ms) {
  if (attempts < 1) return 0;
  const int64_t delay = static_cast<size_t>(attempts) <= kFirstDelaysMs.size()
                            ? kFirstDelaysMs[static_cast<size_t>(attempts) - 1]
                            : kHourMs;
  if (elapsed_ms + delay > kCallbackRetryWindowMs) return std::nullopt;
  return delay;
}

CallbackSender::CallbackSender(ExecutionStates& states, WebhookSecrets& secrets,
                               webhook::Transport& transport, std::function<int64_t()> now_ms)
    : states_(states),
      secrets_(secrets),
      transport_(transport),
      now_ms_(now_ms ? std::move(now_ms) : [] { return NowMs(); }) {}

CallbackSender::~CallbackSender() {
  Stop();
}

void CallbackSender::Start(int64_t interval_ms) {
  task_ = std::make_unique<net::PeriodicTask>(std::chrono::milliseconds(interval_ms),
                                              [this] { RunOnce(); });
}

void CallbackSender::Stop() {
  task_.reset();
}

int CallbackSender::RunOnce() {
  auto due = states_.TakeDueCallbacks(kBatch, kLeaseMs);
  if (!due.ok()) {
    log::Warn("callbacks not taken").Str("error", due.status().ToString());
    return 0;
  }
  for (const ExecutionState& state : *due) Attempt(state);
  return static_cast<int>(due->size());
}

void CallbackSender::Attempt(const ExecutionState& state) {
  CallbackAttempt attempt;
  attempt.attempt = state.callback_attempts + 1;
  auto secret = secrets_.Signing(state.org_id);
  if (!secret.ok()) return;  // PostgreSQL is away: the lease ends and it is taken again
  webhook::AttemptResult result;
  if (!secret->has_value()) {
    // Made with a secret that has since gone (nothing deletes one today): nothing to sign with.
    result.outcome = webhook::AttemptOutcome::kRefused;
    result.error = "the organization has no webhook secret";
  } else {
    webhook::Request request;
    request.url = state.callback_url;
    request.message_id = state.execution_id;
    request.body = ExecutionStatusJson(state, std::nullopt, false);
    request.signing_key = webhook::SigningKey((*secret)->secret).value_or("");
    if (!(*secret)->previous_secret.empty()) {
      request.previous_signing_key = webhook::SigningKey((*secret)->previous_secret).value_or("");
    }
    result = transport_.Attempt(request, now_ms_() / 1000);
  }
  attempt.status_code = result.status;
  attempt.error = result.error;
  attempt.outcome = std::string(OutcomeName(result.outcome));
  Attempts(attempt.outcome).Inc();
  std::optional<int64_t> next;
  std::string_view final_outcome;
  if (result.outcome == webhook::AttemptOutcome::kDelivered) {
    final_outcome = "delivered";
  } else if (webhook::IsRetryable(result.outcome)) {
    if (auto delay = CallbackRetryDelayMs(attempt.attempt, now_ms_() - state.finished_ms)) {
      next = now_ms_() + *delay;
    } else {
      final_outcome = "failed";
    }
  } else {
    final_outcome = "failed";
  }
  if (final_outcome == "failed") Failures().Inc();
  Status recorded = states_.RecordCallbackAttempt(state.execution_id, attempt, next, final_outcome);
  if (!recorded.ok()) {
    log::Warn("callback attempt not recorded")
        .Str("execution_id", state.execution_id)
        .Str("error", recorded.ToString());
  }
}

}  // namespace toolgate::billing
