#include "toolgate/net/periodic_task.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

namespace toolgate::net {
namespace {

TEST(PeriodicTaskTest, TicksUntilDestroyedAndNeverAfter) {
  std::mutex mu;
  std::condition_variable ticked;
  int ticks = 0;
  {
    PeriodicTask task(std::chrono::milliseconds(1), [&] {
      std::lock_guard<std::mutex> lock(mu);
      ++ticks;
      ticked.notify_all();
    });
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(ticked.wait_for(lock, std::chrono::seconds(30), [&] { return ticks >= 3; }));
  }
  std::lock_guard<std::mutex> lock(mu);
  const int at_stop = ticks;
  EXPECT_GE(at_stop, 3);
  // The destructor joined the thread: nothing can tick any more.
  EXPECT_EQ(ticks, at_stop);
}

// A long interval does not hold up the owner's shutdown: the destructor wakes the thread.
TEST(PeriodicTaskTest, StopsAtOnceWhateverTheInterval) {
  std::atomic<int> ticks{0};
  {
    PeriodicTask task(std::chrono::hours(1), [&] { ++ticks; });
  }
  EXPECT_EQ(ticks.load(), 0);
}

}  // namespace
}  // namespace toolgate::net
