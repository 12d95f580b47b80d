#include "toolgate/billing/settle_acks.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

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

// What a SettleAcks published: one (subject, attempts) per message.
struct Sent {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<std::string, std::vector<std::string>>> messages;

  SettleAcks::Publish Recorder() {
    return [this](const std::string& subject, const std::string& data) {
      v1::SettleAcks acks;
      EXPECT_TRUE(acks.ParseFromString(data));
      std::lock_guard<std::mutex> lock(mu);
      messages.emplace_back(subject, Attempts(acks));
      cv.notify_all();
    };
  }
  bool AwaitCount(size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(10), [&] { return messages.size() >= n; });
  }
};

constexpr auto kLong = std::chrono::hours(1);

TEST(SettleAcksTest, BatchesRecordedDuringALingerAreAckedInOneMessagePerInbox) {
  Sent sent;
  SettleAcks acks(sent.Recorder(), kLong, /*byte_bound=*/1 << 20);
  // The first acks after a quiet spell leave at once.
  acks.Add({"_INBOX.a.1"}, 100);
  ASSERT_TRUE(sent.AwaitCount(1));
  // The next three batches gather while the linger runs.
  acks.Add({"_INBOX.a.2", "_INBOX.b.5"}, 100);
  acks.Add({"_INBOX.a.3"}, 100);
  acks.Add({"_INBOX.b.6"}, 100);
  acks.Stop();  // sends what gathered
  std::lock_guard<std::mutex> lock(sent.mu);
  using Message = std::pair<std::string, std::vector<std::string>>;
  EXPECT_EQ(sent.messages, (std::vector<Message>{{"_INBOX.a.acks", {"1"}},
                                                 {"_INBOX.a.acks", {"2", "3"}},
                                                 {"_INBOX.b.acks", {"5", "6"}}}));
}

TEST(SettleAcksTest, ResultsPastTheByteBoundEndTheLinger) {
  // An executor keeps every result until its ack: a linger must not let them pile up.
  Sent sent;
  SettleAcks acks(sent.Recorder(), kLong, /*byte_bound=*/1000);
  acks.Add({"_INBOX.a.1"}, 10);
  ASSERT_TRUE(sent.AwaitCount(1));
  acks.Add({"_INBOX.a.2"}, 600);
  acks.Add({"_INBOX.a.3"}, 600);  // 1,200 bytes wait: sent without waiting out the hour
  ASSERT_TRUE(sent.AwaitCount(2));
  std::lock_guard<std::mutex> lock(sent.mu);
  EXPECT_EQ(sent.messages[1].second, std::vector<std::string>({"2", "3"}));
}

TEST(SettleAcksTest, WithoutALingerEachBatchLeavesAtOnce) {
  Sent sent;
  SettleAcks acks(sent.Recorder(), std::chrono::milliseconds(0), 1 << 20);
  acks.Add({"_INBOX.a.1"}, 10);
  ASSERT_TRUE(sent.AwaitCount(1));
  acks.Add({"_INBOX.a.2"}, 10);
  EXPECT_TRUE(sent.AwaitCount(2));
}

}  // namespace
}  // namespace toolgate::billing
