#include "toolgate/executor/dispatch_notices.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

namespace toolgate::executor {
namespace {

struct Sent {
  std::string edge_reply, traceparent;
  v1::InvokeReply reply;
};

// Collects what the notices send, and lets a test wait for the n-th one.
class Outbox {
 public:
  DispatchNotices::Send sender() {
    return [this](const std::string& edge_reply, const std::string& bytes,
                  const std::string& traceparent) {
      Sent s{edge_reply, traceparent, {}};
      ASSERT_TRUE(s.reply.ParseFromString(bytes));
      std::lock_guard<std::mutex> lock(mu_);
      sent_.push_back(std::move(s));
      cv_.notify_all();
    };
  }
  // Waits (a generous bound, not a timing assertion) until n notices were sent.
  std::vector<Sent> WaitFor(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(30), [&] { return sent_.size() >= n; });
    return sent_;
  }
  size_t count() {
    std::lock_guard<std::mutex> lock(mu_);
    return sent_.size();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Sent> sent_;
};

v1::InvokeJob Job(const std::string& edge_reply, int64_t timeout_ms) {
  v1::InvokeJob job;
  job.set_edge_reply(edge_reply);
  job.mutable_function()->set_timeout_ms(timeout_ms);
  return job;
}

TEST(DispatchNoticesTest, JobStillRunningWhenDueGetsOneNoticeWithItsTimeout) {
  Outbox outbox;
  DispatchNotices notices(outbox.sender(), /*notice_after_ms=*/0);
  uint64_t ticket = notices.Arrived(Job("_INBOX.edge.7", 45000), "00-aa-bb-01");
  auto sent = outbox.WaitFor(1);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].edge_reply, "_INBOX.edge.7");
  EXPECT_EQ(sent[0].traceparent, "00-aa-bb-01");
  ASSERT_TRUE(sent[0].reply.has_dispatched());
  EXPECT_EQ(sent[0].reply.dispatched().timeout_ms(), 45000);
  notices.Done(ticket);  // after the notice: nothing more happens
  EXPECT_EQ(notices.sent(), 1u);
}

TEST(DispatchNoticesTest, JobDoneBeforeDueCostsNoMessage) {
  Outbox outbox;
  {
    DispatchNotices notices(outbox.sender(), /*notice_after_ms=*/3'600'000);
    uint64_t a = notices.Arrived(Job("_INBOX.edge.1", 1000), "");
    uint64_t b = notices.Arrived(Job("_INBOX.edge.2", 1000), "");
    EXPECT_NE(a, b);
    notices.Done(b);
    notices.Done(a);
    EXPECT_EQ(notices.sent(), 0u);
  }  // the destructor stops the timer without sending what is not due
  EXPECT_EQ(outbox.count(), 0u);
}

TEST(DispatchNoticesTest, CallsThatFinishBeforeTheirDueTimeWakeTheTimerOnce) {
  // The first arrival arms the timer; each later one is due after it, so the timer sleeps on.
  Outbox outbox;
  DispatchNotices notices(outbox.sender(), /*notice_after_ms=*/3'600'000);
  for (int i = 0; i < 100; ++i) notices.Done(notices.Arrived(Job("_INBOX.edge.1", 1000), ""));
  uint64_t overlapping = notices.Arrived(Job("_INBOX.edge.2", 1000), "");
  notices.Done(notices.Arrived(Job("_INBOX.edge.3", 1000), ""));
  notices.Done(overlapping);
  EXPECT_EQ(notices.wakeups(), 1u);
  EXPECT_EQ(notices.sent(), 0u);
}

TEST(DispatchNoticesTest, AJobArrivingWhileTheTimerSleepsOnAFinishedOneIsStillNoticed) {
  // Job 1 arms the timer and finishes; job 2 arrives before that due time without waking it:
  // the timer must still find job 2 when it wakes.
  Outbox outbox;
  DispatchNotices notices(outbox.sender(), /*notice_after_ms=*/50);
  notices.Done(notices.Arrived(Job("_INBOX.edge.1", 1000), ""));
  notices.Arrived(Job("_INBOX.edge.2", 2000), "");
  auto sent = outbox.WaitFor(1);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].edge_reply, "_INBOX.edge.2");
}

TEST(DispatchNoticesTest, EveryDueJobIsNoticedInArrivalOrder) {
  Outbox outbox;
  DispatchNotices notices(outbox.sender(), /*notice_after_ms=*/0);
  for (int i = 0; i < 5; ++i) notices.Arrived(Job("_INBOX.edge." + std::to_string(i), i), "");
  auto sent = outbox.WaitFor(5);
  ASSERT_EQ(sent.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(sent[i].edge_reply, "_INBOX.edge." + std::to_string(i));
    EXPECT_EQ(sent[i].reply.dispatched().timeout_ms(), i);
  }
}

}  // namespace
}  // namespace toolgate::executor
