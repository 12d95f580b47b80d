#include "toolgate/executor/fair_scheduler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace toolgate::executor {
namespace {

// Jobs that block until the test opens their gate, and record the order they started in.
class Gates {
 public:
  FairScheduler::Callback Job(const std::string& name) {
    return [this, name] {
      std::unique_lock<std::mutex> lock(mu_);
      started_.push_back(name);
      cv_.notify_all();
      cv_.wait(lock, [&] { return open_ > 0 || all_open_; });
      if (!all_open_) --open_;
    };
  }
  // Waits until n jobs have started; returns their names in order.
  std::vector<std::string> WaitStarted(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return started_.size() >= n; });
    return started_;
  }
  void OpenOne() {
    std::lock_guard<std::mutex> lock(mu_);
    ++open_;
    cv_.notify_all();
  }
  void OpenAll() {
    std::lock_guard<std::mutex> lock(mu_);
    all_open_ = true;
    cv_.notify_all();
  }
  std::vector<std::string> started() {
    std::lock_guard<std::mutex> lock(mu_);
    return started_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> started_;
  int open_ = 0;
  bool all_open_ = false;
};

FairScheduler::Callback Never() {
  return [] { ADD_FAILURE() << "a job expired"; };
}

TEST(FairSchedulerTest, ServesOrganizationsInTurnNotInArrivalOrder) {
  Gates gates;
  FairScheduler scheduler({/*slots=*/1, /*max_per_org=*/1, /*queue_timeout_ms=*/600000});
  scheduler.Submit("a", gates.Job("a0"), Never());
  gates.WaitStarted(1);  // the slot is busy: the rest queue
  for (int i = 1; i <= 3; ++i) scheduler.Submit("a", gates.Job("a" + std::to_string(i)), Never());
  scheduler.Submit("b", gates.Job("b1"), Never());
  scheduler.Submit("c", gates.Job("c1"), Never());
  for (int i = 0; i < 5; ++i) gates.OpenOne();
  gates.OpenAll();
  scheduler.Drain();
  // a flooded first, yet b and c each ran before the third of a's jobs.
  EXPECT_EQ(gates.started(), (std::vector<std::string>{"a0", "a1", "b1", "c1", "a2", "a3"}));
}

TEST(FairSchedulerTest, AnOrganizationNeverHoldsMoreThanItsCap) {
  Gates gates;
  FairScheduler scheduler({/*slots=*/4, /*max_per_org=*/2, /*queue_timeout_ms=*/600000});
  for (int i = 0; i < 6; ++i) scheduler.Submit("a", gates.Job("a"), Never());
  gates.WaitStarted(2);
  // Two slots are free, but a is at its cap: its jobs wait while b's run at once.
  scheduler.Submit("b", gates.Job("b"), Never());
  scheduler.Submit("b", gates.Job("b"), Never());
  std::vector<std::string> started = gates.WaitStarted(4);
  EXPECT_EQ(started, (std::vector<std::string>{"a", "a", "b", "b"}));
  EXPECT_EQ(scheduler.stats().running, 4u);
  EXPECT_EQ(scheduler.stats().queued, 4u);
  gates.OpenAll();
  scheduler.Drain();
  EXPECT_EQ(scheduler.stats().ran, 8u);
}

TEST(FairSchedulerTest, AJobWaitingPastTheQueueTimeoutIsExpiredNotRun) {
  std::atomic<int64_t> now{0};
  Gates gates;
  FairScheduler scheduler({/*slots=*/1, /*max_per_org=*/1, /*queue_timeout_ms=*/100},
                          [&] { return now.load(); });
  scheduler.Submit("a", gates.Job("running"), Never());
  gates.WaitStarted(1);
  std::mutex mu;
  std::condition_variable cv;
  bool expired = false;
  scheduler.Submit(
      "b", [] { ADD_FAILURE() << "an expired job ran"; },
      [&] {
        std::lock_guard<std::mutex> lock(mu);
        expired = true;
        cv.notify_all();
      });
  now = 101;
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return expired; });
  }
  EXPECT_EQ(scheduler.stats().expired, 1u);
  EXPECT_EQ(scheduler.stats().queued, 0u);
  gates.OpenAll();
  scheduler.Drain();
}

TEST(FairSchedulerTest, AJobOverItsOrganizationsCapWakesNoSlot) {
  Gates gates;
  FairScheduler scheduler({/*slots=*/2, /*max_per_org=*/1, /*queue_timeout_ms=*/600000});
  while (scheduler.stats().idle != 2) std::this_thread::yield();  // both slots wait
  scheduler.Submit("a", gates.Job("a0"), Never());
  gates.WaitStarted(1);
  while (scheduler.stats().idle != 1) std::this_thread::yield();  // a0's slot left the wait
  // a is at its cap: its next jobs cannot start, so waking the idle slot would be for nothing.
  for (int i = 1; i <= 3; ++i) scheduler.Submit("a", gates.Job("a" + std::to_string(i)), Never());
  // A job of another organization can start: it wakes the idle slot.
  scheduler.Submit("b", gates.Job("b1"), Never());
  gates.WaitStarted(2);
  EXPECT_EQ(gates.started().back(), "b1");
  gates.OpenAll();
  scheduler.Drain();  // a's jobs ran one after another on the slot that ran a0
  EXPECT_EQ(scheduler.stats().ran, 5u);
  EXPECT_EQ(scheduler.stats().empty_wakeups, 0u);
}

TEST(FairSchedulerTest, CapIsClampedToTheSlots) {
  FairScheduler scheduler({/*slots=*/2, /*max_per_org=*/0, /*queue_timeout_ms=*/1000});
  EXPECT_EQ(scheduler.options().max_per_org, 1u);
  FairScheduler wide({/*slots=*/2, /*max_per_org=*/9, /*queue_timeout_ms=*/1000});
  EXPECT_EQ(wide.options().max_per_org, 2u);
}

TEST(FairSchedulerTest, DefaultSlotsFollowCoresAndMemory) {
  EXPECT_EQ(DefaultSlots(2, uint64_t{24} << 30), 4u);   // cores bound
  EXPECT_EQ(DefaultSlots(64, uint64_t{4} << 30), 16u);  // memory bound: 4 GiB / 256 MiB
  EXPECT_EQ(DefaultSlots(1, uint64_t{128} << 20), 2u);  // never fewer than 2
}

}  // namespace
}  // namespace toolgate::executor
