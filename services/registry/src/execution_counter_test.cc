#include "toolgate/registry/execution_counter.h"

#include <gtest/gtest.h>

namespace toolgate::registry {
namespace {

struct Store {
  ExecutionCounter::Counts total;
  int writes = 0;
  bool down = false;
  ExecutionCounter::Writer Fn() {
    return [this](const ExecutionCounter::Counts& batch) {
      if (down) return Status::Unavailable("down");
      ++writes;
      for (const auto& [id, n] : batch) total[id] += n;
      return Status::Ok();
    };
  }
};

TEST(ExecutionCounter, BatchesCountsIntoOneWrite) {
  Store store;
  ExecutionCounter counter(store.Fn(), std::chrono::milliseconds(0));
  counter.Add("a");
  counter.Add("a");
  counter.Add("b");
  ASSERT_TRUE(counter.Flush().ok());
  EXPECT_EQ(store.writes, 1);
  EXPECT_EQ(store.total["a"], 2);
  EXPECT_EQ(store.total["b"], 1);
  ASSERT_TRUE(counter.Flush().ok());  // nothing pending: no write
  EXPECT_EQ(store.writes, 1);
}

TEST(ExecutionCounter, FailedFlushKeepsCounts) {
  Store store;
  ExecutionCounter counter(store.Fn(), std::chrono::milliseconds(0));
  counter.Add("a");
  store.down = true;
  EXPECT_FALSE(counter.Flush().ok());
  counter.Add("a");
  store.down = false;
  ASSERT_TRUE(counter.Flush().ok());
  EXPECT_EQ(store.total["a"], 2);
}

TEST(ExecutionCounter, DestructorFlushes) {
  Store store;
  {
    ExecutionCounter counter(store.Fn(), std::chrono::hours(1));
    counter.Add("a");
  }
  EXPECT_EQ(store.total["a"], 1);
}

}  // namespace
}  // namespace toolgate::registry
