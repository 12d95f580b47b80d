#include "toolgate/base/batch_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <numeric>

namespace toolgate {
namespace {

TEST(BatchQueueTest, ItemsThatQueueWhileABatchRunsBecomeTheNextBatch) {
  std::promise<void> first_started;
  std::promise<void> release_first;
  std::shared_future<void> released = release_first.get_future().share();
  std::vector<std::vector<int>> batches;
  {
    BatchQueue<int> queue(10, [&](std::vector<int> batch) {
      batches.push_back(batch);
      if (batches.size() == 1) {
        first_started.set_value();
        released.wait();  // the consumer is busy: what is pushed now must queue
      }
    });
    ASSERT_TRUE(queue.Push(1));
    first_started.get_future().wait();
    for (int i = 2; i <= 4; ++i) ASSERT_TRUE(queue.Push(i));
    release_first.set_value();
  }  // Stop: everything queued is consumed first
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0], std::vector<int>({1}));
  EXPECT_EQ(batches[1], std::vector<int>({2, 3, 4}));
}

TEST(BatchQueueTest, BatchesNeverExceedTheirMaximumAndKeepPushOrder) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::vector<std::vector<int>> batches;
  {
    BatchQueue<int> queue(3, [&](std::vector<int> batch) {
      released.wait();
      batches.push_back(std::move(batch));
    });
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(queue.Push(i));
    release.set_value();
  }
  std::vector<int> all;
  for (const auto& b : batches) {
    EXPECT_LE(b.size(), 3u);
    EXPECT_FALSE(b.empty());
    all.insert(all.end(), b.begin(), b.end());
  }
  std::vector<int> expected(10);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(all, expected);
}

TEST(BatchQueueTest, PushAfterStopIsRefused) {
  std::atomic<int> consumed{0};
  BatchQueue<int> queue(4, [&](std::vector<int> batch) { consumed += batch.size(); });
  ASSERT_TRUE(queue.Push(1));
  queue.Stop();
  EXPECT_EQ(consumed.load(), 1);
  EXPECT_FALSE(queue.Push(2));
  EXPECT_EQ(consumed.load(), 1);
}

TEST(BatchQueueTest, ABoundedQueueDropsAndCountsWhatDoesNotFitWithoutWaiting) {
  std::promise<void> started;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::vector<int> consumed;
  {
    BatchQueue<int> queue(
        10,
        [&](std::vector<int> batch) {
          if (consumed.empty()) started.set_value();
          consumed.insert(consumed.end(), batch.begin(), batch.end());
          released.wait();
        },
        /*max_queue=*/2);
    ASSERT_TRUE(queue.Push(1));
    started.get_future().wait();  // 1 is being consumed; two may wait
    EXPECT_TRUE(queue.Push(2));
    EXPECT_TRUE(queue.Push(3));
    EXPECT_FALSE(queue.Push(4));
    EXPECT_EQ(queue.dropped(), 1u);
    release.set_value();
    queue.Flush();
    EXPECT_TRUE(queue.Push(5));  // room again
  }
  EXPECT_EQ(consumed, std::vector<int>({1, 2, 3, 5}));
}

TEST(BatchQueueTest, FlushReturnsOnceEverythingPushedBeforeItIsConsumed) {
  std::atomic<int> consumed{0};
  BatchQueue<int> queue(2, [&](std::vector<int> batch) { consumed += batch.size(); });
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(queue.Push(i));
  queue.Flush();
  EXPECT_EQ(consumed.load(), 7);
}

// Records batches and lets the test wait for the nth.
struct BatchLog {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::vector<int>> batches;
  void Add(std::vector<int> batch) {
    std::lock_guard<std::mutex> lock(mu);
    batches.push_back(std::move(batch));
    cv.notify_all();
  }
  // False when fewer than n batches came within a minute (a linger that was not ended).
  bool AwaitCount(size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::minutes(1), [&] { return batches.size() >= n; });
  }
};

// A lingering queue (the log writer) lets what arrives after a batch gather, however it is
// paced, and Flush ends the linger at once.
TEST(BatchQueueTest, ALingeringQueueGathersWhatArrivesAfterABatch) {
  BatchLog log;
  BatchQueue<int> queue(
      10, [&](std::vector<int> batch) { log.Add(std::move(batch)); }, 0, std::chrono::hours(1));
  ASSERT_TRUE(queue.Push(1));
  ASSERT_TRUE(log.AwaitCount(1));
  for (int i = 2; i <= 4; ++i) ASSERT_TRUE(queue.Push(i));
  queue.Flush();
  std::lock_guard<std::mutex> lock(log.mu);
  EXPECT_EQ(log.batches, (std::vector<std::vector<int>>{{1}, {2, 3, 4}}));
}

TEST(BatchQueueTest, HurryEndsALinger) {
  BatchLog log;
  BatchQueue<int> queue(
      10, [&](std::vector<int> batch) { log.Add(std::move(batch)); }, 0, std::chrono::hours(1));
  ASSERT_TRUE(queue.Push(1));
  ASSERT_TRUE(log.AwaitCount(1));
  ASSERT_TRUE(queue.Push(2));
  queue.Hurry();
  EXPECT_TRUE(log.AwaitCount(2));
}

}  // namespace
}  // namespace toolgate
