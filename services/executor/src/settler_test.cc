#include "toolgate/executor/settler.h"

#include <gtest/gtest.h>

namespace toolgate::executor {
namespace {

PendingSettlements::Attempt AttemptFor(const std::string& execution_id) {
  return {0, "tg.billing.settle." + execution_id, "payload", "", execution_id};
}

TEST(PendingSettlements, AnAckedResultIsForgotten) {
  PendingSettlements pending({});
  uint64_t id = pending.Add(AttemptFor("e1"), 0);
  EXPECT_EQ(pending.size(), 1u);
  EXPECT_TRUE(pending.Ack(id));
  EXPECT_FALSE(pending.Ack(id));
  EXPECT_EQ(pending.size(), 0u);
  EXPECT_FALSE(pending.next_due_ms().has_value());
}

TEST(PendingSettlements, ABatchAckAcksEachPendingAttemptOnce) {
  PendingSettlements pending(SettleTiming{});
  uint64_t a = pending.Add(AttemptFor("a"), 0);
  uint64_t b = pending.Add(AttemptFor("b"), 0);
  uint64_t c = pending.Add(AttemptFor("c"), 0);
  v1::SettleAcks acks;
  acks.add_attempts(std::to_string(a));
  acks.add_attempts(std::to_string(c));
  acks.add_attempts(std::to_string(c));  // a duplicate counts once
  acks.add_attempts("999");              // not pending
  acks.add_attempts("12x");              // not an id
  EXPECT_EQ(pending.Ack(acks), 2u);
  EXPECT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending.execution_id(b), "b");
  EXPECT_EQ(pending.execution_id(a), "");
}

TEST(PendingSettlements, FailedAttemptsBackOffDoublingToTheCap) {
  PendingSettlements pending(
      {.ack_timeout_ms = 5000, .first_backoff_ms = 100, .max_backoff_ms = 5000});
  uint64_t id = pending.Add(AttemptFor("e1"), 0);
  int64_t now = 0;
  std::vector<int64_t> waits;
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(pending.Fail(id, now));
    int64_t due = *pending.next_due_ms();
    waits.push_back(due - now);
    EXPECT_TRUE(pending.TakeDue(due - 1).empty());
    auto attempts = pending.TakeDue(due);
    ASSERT_EQ(attempts.size(), 1u);
    EXPECT_EQ(attempts[0].id, id);
    EXPECT_EQ(attempts[0].subject, "tg.billing.settle.e1");
    now = due;
  }
  EXPECT_EQ(waits, (std::vector<int64_t>{100, 200, 400, 800, 1600, 3200, 5000, 5000}));
}

TEST(PendingSettlements, AnUnansweredAttemptIsSentAgainAfterTheAckTimeout) {
  PendingSettlements pending(
      {.ack_timeout_ms = 5000, .first_backoff_ms = 100, .max_backoff_ms = 5000});
  pending.Add(AttemptFor("e1"), 1000);
  EXPECT_EQ(*pending.next_due_ms(), 6000);
  EXPECT_TRUE(pending.TakeDue(5999).empty());
  EXPECT_EQ(pending.TakeDue(6000).size(), 1u);
  EXPECT_EQ(*pending.next_due_ms(), 11000);
}

TEST(PendingSettlements, ALateFailureOfAnOlderAttemptChangesNothing) {
  PendingSettlements pending({});
  uint64_t id = pending.Add(AttemptFor("e1"), 0);
  ASSERT_TRUE(pending.Fail(id, 0));
  EXPECT_FALSE(pending.Fail(id, 50));  // not in flight: already waiting for its retry
  EXPECT_EQ(*pending.next_due_ms(), 100);
  EXPECT_TRUE(pending.Ack(id));
  EXPECT_FALSE(pending.Fail(id, 60));
}

TEST(PendingSettlements, KeepsEachResultOnItsOwnSchedule) {
  PendingSettlements pending({});
  uint64_t a = pending.Add(AttemptFor("a"), 0);
  uint64_t b = pending.Add(AttemptFor("b"), 0);
  pending.Fail(a, 0);
  auto due = pending.TakeDue(100);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].execution_id, "a");
  EXPECT_EQ(pending.execution_id(b), "b");
  EXPECT_EQ(pending.execution_ids().size(), 2u);
}

TEST(HeldResults, HoldsUntilTakenAndGivesThemBackInOrder) {
  HeldResults<int> held(1000);
  EXPECT_FALSE(held.due_us().has_value());
  EXPECT_FALSE(held.Hold(1, 100));
  EXPECT_FALSE(held.Hold(2, 100));
  EXPECT_EQ(held.Take(), (std::vector<int>{1, 2}));
  EXPECT_EQ(held.size(), 0u);
  EXPECT_FALSE(held.due_us().has_value());
}

TEST(HeldResults, AResultFinishingAfterTheHoldTimeTakesTheHeldOnesAlong) {
  HeldResults<int> held(300);
  EXPECT_FALSE(held.Hold(1, 1000));
  EXPECT_FALSE(held.Hold(2, 1299));
  EXPECT_TRUE(held.Hold(3, 1300));  // the oldest waited 300 µs: all three go now
  EXPECT_EQ(held.Take(), (std::vector<int>{1, 2, 3}));
  EXPECT_FALSE(held.Hold(4, 1400));  // a new first result starts a new wait
}

TEST(HeldResults, TheOldestFallsDueAfterTheHoldTime) {
  HeldResults<int> held(1000);
  held.Hold(1, 100);
  held.Hold(2, 101);
  EXPECT_EQ(held.due_us(), 1100);
  EXPECT_FALSE(held.Due(1099));
  EXPECT_TRUE(held.Due(1100));
  held.Take();
  held.Hold(3, 2000);
  EXPECT_FALSE(held.Due(2999));
  EXPECT_EQ(held.due_us(), 3000);
}

TEST(HeldResults, AFullHolderMustBeSentAtOnce) {
  HeldResults<int> held(1'000'000);
  for (size_t i = 1; i < HeldResults<int>::kMaxHeld; ++i) {
    EXPECT_FALSE(held.Hold(static_cast<int>(i), 0));
  }
  EXPECT_TRUE(held.Hold(0, 0));
  EXPECT_EQ(held.Take().size(), HeldResults<int>::kMaxHeld);
}

}  // namespace
}  // namespace toolgate::executor
