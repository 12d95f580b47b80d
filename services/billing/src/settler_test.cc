#include "toolgate/billing/settler.h"

#include <gtest/gtest.h>

namespace toolgate::billing {
namespace {

std::vector<std::string> Attempts(const v1::SettleAcks& acks) {
  return {acks.attempts().begin(), acks.attempts().end()};
}

TEST(GroupAcksTest, OneMessagePerExecutorInbox) {
  BatchAcks acks = GroupAcks({"_INBOX.a1.7", "_INBOX.b2.3", "_INBOX.a1.9", "_INBOX.a1.12"});
  ASSERT_EQ(acks.batches.size(), 2u);
  EXPECT_EQ(Attempts(acks.batches.at("_INBOX.a1.acks")),
            std::vector<std::string>({"7", "9", "12"}));
  EXPECT_EQ(Attempts(acks.batches.at("_INBOX.b2.acks")), std::vector<std::string>({"3"}));
  EXPECT_TRUE(acks.singles.empty());
}

TEST(GroupAcksTest, OtherReplySubjectsAreAckedOneByOne) {
  BatchAcks acks = GroupAcks({"plain", ".leading", "trailing.", ""});
  EXPECT_TRUE(acks.batches.empty());
  // An empty reply (a result sent without one) needs no ack at all.
  EXPECT_EQ(acks.singles, std::vector<std::string>({"plain", ".leading", "trailing."}));
}

}  // namespace
}  // namespace toolgate::billing
