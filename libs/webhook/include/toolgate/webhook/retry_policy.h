// When a webhook delivery is tried again: after a network failure (no connection, a timeout, a
// broken answer), a 5xx or a 429, up to max_attempts attempts in all, waiting exponentially
// longer between them with random jitter, and never past max_total_ms after the first attempt.
// Any other answer (2xx delivered; 3xx, since redirects are not followed; other 4xx) and a
// refused target end the delivery. Pure, thread-safe.
#pragma once

#include <cstdint>

namespace toolgate::webhook {

// What one attempt came to.
enum class AttemptOutcome {
  kDelivered,      // a 2xx answer
  kRejected,       // another answer that retrying would not change (3xx, 4xx but 429)
  kRetryableHttp,  // 5xx or 429
  kNetworkError,   // no answer: connection refused or reset, timeout, TLS failure
  kRefused,        // the target is not allowed (TargetPolicy): nothing was sent
};

struct RetryPolicy {
  int max_attempts = 4;
  int64_t initial_backoff_ms = 1'000;
  int64_t max_backoff_ms = 30'000;
  // No attempt starts later than this after the first one.
  int64_t max_total_ms = 120'000;
};

// The outcome of an attempt that got HTTP status.
AttemptOutcome OutcomeOfStatus(int status);
bool IsRetryable(AttemptOutcome outcome);

// The wait before attempt number `attempt + 1`, after attempt number `attempt` (1-based)
// failed: base = min(max_backoff_ms, initial_backoff_ms * 2^(attempt-1)), jittered to
// [base/2, base] by random (any 64-bit value; uniform random gives uniform jitter), so
// deliveries failing together spread out instead of returning in step.
int64_t BackoffMs(const RetryPolicy& policy, int attempt, uint64_t random);

// Whether attempt number `attempt + 1` may start elapsed_ms after the first one, after
// `outcome` of attempt number `attempt`.
bool ShouldRetry(const RetryPolicy& policy, AttemptOutcome outcome, int attempt,
                 int64_t elapsed_ms);

}  // namespace toolgate::webhook
