#include "toolgate/base/batch_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
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

}  // namespace
}  // namespace toolgate
