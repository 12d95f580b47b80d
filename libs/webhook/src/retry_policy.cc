#include "toolgate/webhook/retry_policy.h"

#include <algorithm>

namespace toolgate::webhook {

AttemptOutcome OutcomeOfStatus(int status) {
  if (status >= 200 && status < 300) return AttemptOutcome::kDelivered;
  if (status == 429 || (status >= 500 && status < 600)) return AttemptOutcome::kRetryableHttp;
  return AttemptOutcome::kRejected;
}

bool IsRetryable(AttemptOutcome outcome) {
  return outcome == AttemptOutcome::kRetryableHttp || outcome == AttemptOutcome::kNetworkError;
}

int64_t BackoffMs(const RetryPolicy& policy, int attempt, uint64_t random) {
  int64_t base = std::max<int64_t>(policy.initial_backoff_ms, 1);
  // Doubling stops at the cap, so a large attempt number cannot overflow.
  for (int i = 1; i < attempt && base < policy.max_backoff_ms; ++i) base *= 2;
  base = std::min(base, std::max<int64_t>(policy.max_backoff_ms, 1));
  const int64_t half = base / 2;
  const int64_t spread = base - half + 1;  // [half, base], inclusive
  return half + static_cast<int64_t>(random % static_cast<uint64_t>(spread));
}

bool ShouldRetry(const RetryPolicy& policy, AttemptOutcome outcome, int attempt,
                 int64_t elapsed_ms) {
  return IsRetryable(outcome) && attempt < policy.max_attempts && elapsed_ms < policy.max_total_ms;
}

}  // namespace toolgate::webhook
