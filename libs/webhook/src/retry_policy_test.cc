#include "toolgate/webhook/retry_policy.h"

#include <gtest/gtest.h>

namespace toolgate::webhook {
namespace {

TEST(RetryPolicyTest, RetriesNetworkErrors5xxAnd429Only) {
  EXPECT_EQ(OutcomeOfStatus(200), AttemptOutcome::kDelivered);
  EXPECT_EQ(OutcomeOfStatus(204), AttemptOutcome::kDelivered);
  EXPECT_EQ(OutcomeOfStatus(301), AttemptOutcome::kRejected);
  EXPECT_EQ(OutcomeOfStatus(400), AttemptOutcome::kRejected);
  EXPECT_EQ(OutcomeOfStatus(410), AttemptOutcome::kRejected);
  EXPECT_EQ(OutcomeOfStatus(429), AttemptOutcome::kRetryableHttp);
  EXPECT_EQ(OutcomeOfStatus(500), AttemptOutcome::kRetryableHttp);
  EXPECT_EQ(OutcomeOfStatus(503), AttemptOutcome::kRetryableHttp);
  EXPECT_TRUE(IsRetryable(AttemptOutcome::kNetworkError));
  EXPECT_TRUE(IsRetryable(AttemptOutcome::kRetryableHttp));
  EXPECT_FALSE(IsRetryable(AttemptOutcome::kRefused));
  EXPECT_FALSE(IsRetryable(AttemptOutcome::kRejected));
  EXPECT_FALSE(IsRetryable(AttemptOutcome::kDelivered));
}

TEST(RetryPolicyTest, BackoffDoublesWithinJitterAndStopsAtItsCap) {
  const RetryPolicy policy{.max_attempts = 10, .initial_backoff_ms = 1000, .max_backoff_ms = 8000};
  // random 0 gives the low end (half the base), a random equal to the spread's top the base.
  EXPECT_EQ(BackoffMs(policy, 1, 0), 500);
  EXPECT_EQ(BackoffMs(policy, 1, 500), 1000);
  EXPECT_EQ(BackoffMs(policy, 2, 0), 1000);
  EXPECT_EQ(BackoffMs(policy, 3, 0), 2000);
  EXPECT_EQ(BackoffMs(policy, 4, 4000), 8000);
  EXPECT_EQ(BackoffMs(policy, 9, 4000), 8000);
  EXPECT_EQ(BackoffMs(policy, 1000, 0), 4000);
  for (uint64_t r : {1ull, 12345ull, ~0ull}) {
    const int64_t wait = BackoffMs(policy, 2, r);
    EXPECT_GE(wait, 1000);
    EXPECT_LE(wait, 2000);
  }
}

TEST(RetryPolicyTest, GivesUpAfterMaxAttemptsOrPastTheTotalBound) {
  const RetryPolicy policy{.max_attempts = 3, .max_total_ms = 10'000};
  EXPECT_TRUE(ShouldRetry(policy, AttemptOutcome::kNetworkError, 1, 1000));
  EXPECT_TRUE(ShouldRetry(policy, AttemptOutcome::kRetryableHttp, 2, 5000));
  EXPECT_FALSE(ShouldRetry(policy, AttemptOutcome::kRetryableHttp, 3, 5000));
  EXPECT_FALSE(ShouldRetry(policy, AttemptOutcome::kNetworkError, 1, 10'000));
  EXPECT_FALSE(ShouldRetry(policy, AttemptOutcome::kRejected, 1, 0));
  EXPECT_FALSE(ShouldRetry(policy, AttemptOutcome::kRefused, 1, 0));
}

}  // namespace
}  // namespace toolgate::webhook
