#include "toolgate/core/usage_batcher.h"

#include <gtest/gtest.h>

namespace toolgate::core {
namespace {

TEST(UsageBatcherTest, KeepsLatestUsePerKeyUntilTaken) {
  UsageBatcher usage;
  usage.Record("k1", 100);
  usage.Record("k1", 300);
  usage.Record("k1", 200);  // a late report does not move the time back
  usage.Record("k2", 50);
  auto batch = usage.Take();
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch["k1"], 300);
  EXPECT_EQ(batch["k2"], 50);
  EXPECT_TRUE(usage.Take().empty());
}

}  // namespace
}  // namespace toolgate::core
