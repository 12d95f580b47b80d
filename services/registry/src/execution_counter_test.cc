#include "toolgate/registry/execution_counter.h"

#include <gtest/gtest.h>

namespace toolgate::registry {
namespace {

constexpr int64_t kDayMs = 86'400'000;

struct Store {
  ExecutionCounter::Counts total;
  int writes = 0;
  bool down = false;
  ExecutionCounter::Writer Fn() {
    return [this](const ExecutionCounter::Counts& batch) {
      if (down) return Status::Unavailable("down");
      ++writes;
      for (const auto& [key, n] : batch) total[key] += n;
      return Status::Ok();
    };
  }
};

TEST(ExecutionCounter, BatchesCountsIntoOneWrite) {
  Store store;
  ExecutionCounter counter(store.Fn(), std::chrono::milliseconds(0));
  counter.Add("a", "org1", 0);
  counter.Add("a", "org1", 0);
  counter.Add("b", "org1", 0);
  ASSERT_TRUE(counter.Flush().ok());
  EXPECT_EQ(store.writes, 1);
  EXPECT_EQ((store.total[{"a", "org1", 0}].executions), 2);
  EXPECT_EQ((store.total[{"b", "org1", 0}].executions), 1);
  ASSERT_TRUE(counter.Flush().ok());  // nothing pending: no write
  EXPECT_EQ(store.writes, 1);
}

TEST(ExecutionCounter, CountsPerCallerAndUtcDay) {
  Store store;
  ExecutionCounter counter(store.Fn(), std::chrono::milliseconds(0));
  const int64_t day = 20'000;
  counter.Add("a", "org1", day * kDayMs);               // midnight UTC
  counter.Add("a", "org1", day * kDayMs + kDayMs - 1);  // the last millisecond of that day
  counter.Add("a", "org1", (day + 1) * kDayMs);         // the next day
  counter.Add("a", "org2", day * kDayMs + 5);
  counter.Add("a", "org2", -1);  // before 1970: the day before day 0, not day 0
  ASSERT_TRUE(counter.Flush().ok());
  EXPECT_EQ((store.total[{"a", "org1", day}].executions), 2);
  EXPECT_EQ((store.total[{"a", "org1", day + 1}].executions), 1);
  EXPECT_EQ((store.total[{"a", "org2", day}].executions), 1);
  EXPECT_EQ((store.total[{"a", "org2", -1}].executions), 1);
  EXPECT_EQ(store.total.size(), 4u);
}

TEST(ExecutionCounter, FailedFlushKeepsCounts) {
  Store store;
  ExecutionCounter counter(store.Fn(), std::chrono::milliseconds(0));
  counter.Add("a", "org1", 0);
  store.down = true;
  EXPECT_FALSE(counter.Flush().ok());
  counter.Add("a", "org1", 0);
  store.down = false;
  ASSERT_TRUE(counter.Flush().ok());
  EXPECT_EQ((store.total[{"a", "org1", 0}].executions), 2);
}

TEST(ExecutionCounter, DestructorFlushes) {
  Store store;
  {
    ExecutionCounter counter(store.Fn(), std::chrono::hours(1));
    counter.Add("a", "org1", 0);
  }
  EXPECT_EQ((store.total[{"a", "org1", 0}].executions), 1);
}

TEST(ExecutionCounter, TalliesSuccessesAndLatencyWhenTheOutcomeIsKnown) {
  Store store;
  ExecutionCounter counter(store.Fn(), std::chrono::milliseconds(0));
  counter.Add("a", "org1", 0, 3, true);     // bucket 2: [2, 4) ms
  counter.Add("a", "org1", 0, 0, true);     // bucket 0: under 1 ms
  counter.Add("a", "org1", 0, 900, false);  // a 500
  ASSERT_TRUE(counter.Flush().ok());
  const Tally& t = store.total[{"a", "org1", 0}];
  EXPECT_EQ(t.executions, 3);
  EXPECT_EQ(t.succeeded, 2);
  EXPECT_EQ(t.latency[0], 1);
  EXPECT_EQ(t.latency[2], 1);
  EXPECT_EQ(t.latency[10], 1);  // [512, 1024) ms
}

TEST(ExecutionCounter, TheMedianIsTheUpperBoundOfItsBucket) {
  EXPECT_EQ(LatencyBucket(0), 0);
  EXPECT_EQ(LatencyBucket(1), 1);
  EXPECT_EQ(LatencyBucket(2), 2);
  EXPECT_EQ(LatencyBucket(3), 2);
  EXPECT_EQ(LatencyBucket(int64_t{1} << 40), kLatencyBuckets - 1);
  std::array<int64_t, kLatencyBuckets> h{};
  EXPECT_EQ(MedianUpperBoundMs(h), -1);
  h[0] = 1;  // under 1 ms
  EXPECT_EQ(MedianUpperBoundMs(h), 1);
  h[3] = 3;  // [4, 8) ms holds the median of 4
  EXPECT_EQ(MedianUpperBoundMs(h), 8);
  h = {};
  h[kLatencyBuckets - 1] = 1;
  EXPECT_EQ(MedianUpperBoundMs(h), int64_t{1} << (kLatencyBuckets - 2));
}

}  // namespace
}  // namespace toolgate::registry
