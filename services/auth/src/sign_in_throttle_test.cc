#include "toolgate/auth/sign_in_throttle.h"

#include <gtest/gtest.h>

namespace toolgate::auth {
namespace {

TEST(BackoffTest, NothingBelowTheThreshold) {
  ThrottlePolicy p;
  EXPECT_EQ(BackoffMs(0, 5, p), 0);
  EXPECT_EQ(BackoffMs(4, 5, p), 0);
}

TEST(BackoffTest, DoublesFromTheThresholdUpToTheCap) {
  ThrottlePolicy p;
  p.base_ms = 1000;
  p.max_ms = 10000;
  EXPECT_EQ(BackoffMs(5, 5, p), 1000);
  EXPECT_EQ(BackoffMs(6, 5, p), 2000);
  EXPECT_EQ(BackoffMs(7, 5, p), 4000);
  EXPECT_EQ(BackoffMs(8, 5, p), 8000);
  EXPECT_EQ(BackoffMs(9, 5, p), 10000);
  EXPECT_EQ(BackoffMs(1000000, 5, p), 10000);  // no overflow however many attempts
}

TEST(BackoffTest, RetryAfterRoundsUpToWholeSeconds) {
  EXPECT_EQ(RetryAfterSeconds(1), 1);
  EXPECT_EQ(RetryAfterSeconds(0), 1);
  EXPECT_EQ(RetryAfterSeconds(1000), 1);
  EXPECT_EQ(RetryAfterSeconds(1001), 2);
}

TEST(SignInThrottleTest, AccountSubjectsIgnoreCase) {
  EXPECT_EQ(SignInThrottle::AccountSubject("Ann@Example.com"), "account:ann@example.com");
  EXPECT_NE(SignInThrottle::ClientSubject("1.2.3.4"), SignInThrottle::SignupSubject("1.2.3.4"));
}

}  // namespace
}  // namespace toolgate::auth
