#include "toolgate/bus/batch.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "toolgate/bus/bus.h"
#include "toolgate/metrics/metrics.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::bus {
namespace {

TEST(SubjectMatchesTest, FollowsNatsWildcards) {
  EXPECT_TRUE(SubjectMatches("tg.exec.cpu.lua", "tg.exec.cpu.lua"));
  EXPECT_FALSE(SubjectMatches("tg.exec.cpu.lua", "tg.exec.cpu.python"));
  EXPECT_FALSE(SubjectMatches("tg.exec.cpu.lua", "tg.exec.cpu.lua.x"));
  EXPECT_FALSE(SubjectMatches("tg.exec.cpu.lua", "tg.exec.cpu"));
  EXPECT_TRUE(SubjectMatches("tg.billing.settle.*", "tg.billing.settle.e1"));
  EXPECT_FALSE(SubjectMatches("tg.billing.settle.*", "tg.billing.settle.e1.x"));
  EXPECT_FALSE(SubjectMatches("tg.billing.settle.*", "tg.billing.settle"));
  EXPECT_FALSE(SubjectMatches("tg.billing.settle.*", "tg.billing.settle."));
  EXPECT_TRUE(SubjectMatches("_INBOX.edge.>", "_INBOX.edge.a.b"));
  EXPECT_FALSE(SubjectMatches("_INBOX.edge.>", "_INBOX.edge"));
  EXPECT_FALSE(SubjectMatches("_INBOX.edge.>", "_INBOX.edgex.abc"));
  EXPECT_TRUE(SubjectMatches(">", "anything.at.all"));
  EXPECT_FALSE(SubjectMatches("a.*", ""));
}

TEST(SiblingDestinationTest, ReplacesTheLastToken) {
  EXPECT_EQ(SiblingDestination("_INBOX.edge.abc.17"), "_INBOX.edge.abc._b");
  EXPECT_EQ(SiblingDestination("tg.billing.settle.e1"), "tg.billing.settle._b");
  EXPECT_TRUE(SubjectMatches("tg.billing.settle.*", SiblingDestination("tg.billing.settle.e1")));
}

// A nats-server of the test's own on a free loopback port.
class NatsServer {
 public:
  NatsServer() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    close(fd);
    pid_ = fork();
    if (pid_ == 0) {
      std::string port = std::to_string(port_);
      int null = open("/dev/null", O_WRONLY);
      dup2(null, 1);
      dup2(null, 2);
      execlp("nats-server", "nats-server", "-a", "127.0.0.1", "-p", port.c_str(), nullptr);
      _exit(127);
    }
  }
  ~NatsServer() {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  std::string url() const { return "nats://127.0.0.1:" + std::to_string(port_); }

 private:
  int port_ = 0;
  pid_t pid_ = -1;
};

// Sent after the messages under test, on the same connection, so that once it is seen every
// message before it has been seen too.
constexpr const char* kMarker = "__marker__";

// What a subscription received, waited for without sleeping.
class Inbox {
 public:
  Bus::Handler handler() {
    return [this](Message&& m) {
      if (m.data == kMarker) return;
      std::lock_guard<std::mutex> lock(mu_);
      messages_.push_back(std::move(m));
      cv_.notify_all();
    };
  }
  // The first n messages; fails the test when they do not arrive within 10 s.
  std::vector<Message> Wait(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    EXPECT_TRUE(cv_.wait_for(lock, std::chrono::seconds(10), [&] { return messages_.size() >= n; }))
        << "got " << messages_.size() << " of " << n;
    return messages_;
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return messages_.size();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Message> messages_;
};

// Counts raw NATS messages on a subject, and those that were envelopes.
struct RawCount {
  std::mutex mu;
  std::condition_variable cv;
  int messages = 0;
  int envelopes = 0;
  int markers = 0;
  static void OnMsg(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
    auto* self = static_cast<RawCount*>(closure);
    const char* v = nullptr;
    bool envelope = natsMsgHeader_Get(msg, "Tg-Batch", &v) == NATS_OK;
    bool marker = natsMsg_GetDataLength(msg) == static_cast<int>(strlen(kMarker)) &&
                  memcmp(natsMsg_GetData(msg), kMarker, strlen(kMarker)) == 0;
    natsMsg_Destroy(msg);
    std::lock_guard<std::mutex> lock(self->mu);
    if (marker) {
      ++self->markers;
      self->cv.notify_all();
      return;
    }
    ++self->messages;
    if (envelope) ++self->envelopes;
    self->cv.notify_all();
  }
};

class BatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BusOptions options;
    options.url = server_.url();
    options.name = "batch-test";
    options.connect_timeout_ms = 10000;
    auto sender = Bus::Connect(options);
    ASSERT_TRUE(sender.ok()) << sender.status().ToString();
    sender_ = std::move(*sender);
    auto receiver = Bus::Connect(options);
    ASSERT_TRUE(receiver.ok()) << receiver.status().ToString();
    receiver_ = std::move(*receiver);
    ASSERT_EQ(natsConnection_ConnectTo(&raw_, server_.url().c_str()), NATS_OK);
  }
  void TearDown() override {
    if (raw_sub_) natsSubscription_Destroy(raw_sub_);
    if (raw_) natsConnection_Destroy(raw_);
  }
  // Counts what crosses the wire on subject.
  void Watch(const std::string& subject) {
    watched_ = subject == "_INBOX.edge.x.*" ? "_INBOX.edge.x.marker" : subject;
    ASSERT_EQ(
        natsConnection_Subscribe(&raw_sub_, raw_, subject.c_str(), RawCount::OnMsg, &raw_count_),
        NATS_OK);
    ASSERT_EQ(natsConnection_Flush(raw_), NATS_OK);
  }
  void Subscribe(const std::string& subject, Inbox& inbox, Bus& bus,
                 const std::string& queue = "q") {
    ASSERT_TRUE(bus.Subscribe(subject, queue, inbox.handler()).ok());
    // A round trip on the subscribing connection: the server has the subscription.
    ASSERT_TRUE(
        bus.Request("nobody.serves.this", "", 2000).status().ToString().find("no responders") !=
        std::string::npos);
  }
  // How many NATS messages crossed on the watched subject so far (the sender's marker after
  // them has arrived).
  int RawMessages() {
    ++markers_sent_;
    EXPECT_TRUE(sender_->Publish(watched_, kMarker).ok());
    std::unique_lock<std::mutex> lock(raw_count_.mu);
    EXPECT_TRUE(raw_count_.cv.wait_for(lock, std::chrono::seconds(10),
                                       [&] { return raw_count_.markers >= markers_sent_; }));
    return raw_count_.messages;
  }

  NatsServer server_;
  std::unique_ptr<Bus> sender_;
  std::unique_ptr<Bus> receiver_;
  natsConnection* raw_ = nullptr;
  natsSubscription* raw_sub_ = nullptr;
  RawCount raw_count_;
  std::string watched_;
  int markers_sent_ = 0;
};

TEST_F(BatchTest, SeveralMessagesCrossAsOneEnvelopeAndArriveOneByOne) {
  Inbox inbox;
  Subscribe("tg.exec.cpu.lua", inbox, *receiver_);
  Watch("tg.exec.cpu.lua");
  std::vector<Outgoing> out;
  for (int i = 0; i < 3; ++i) {
    out.push_back({"tg.exec.cpu.lua", "job" + std::to_string(i),
                   "tg.billing.unserved.e" + std::to_string(i), "00-trace-" + std::to_string(i)});
  }
  ASSERT_TRUE(sender_->PublishBatch("tg.exec.cpu.lua", std::move(out)).ok());
  auto got = inbox.Wait(3);
  ASSERT_EQ(got.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(got[i].subject, "tg.exec.cpu.lua");
    EXPECT_EQ(got[i].data, "job" + std::to_string(i));
    EXPECT_EQ(got[i].reply, "tg.billing.unserved.e" + std::to_string(i));
    EXPECT_EQ(got[i].traceparent, "00-trace-" + std::to_string(i));
  }
  EXPECT_EQ(RawMessages(), 1);
  EXPECT_EQ(raw_count_.envelopes, 1);
}

TEST_F(BatchTest, ALoneMessageTravelsPlainly) {
  Inbox inbox;
  Subscribe("_INBOX.edge.x.*", inbox, *receiver_);
  Watch("_INBOX.edge.x.*");
  Batch batch(*sender_);
  batch.Add(SiblingDestination("_INBOX.edge.x.7"), {"_INBOX.edge.x.7", "answer", "", "tp"});
  ASSERT_TRUE(batch.Send().ok());
  auto got = inbox.Wait(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].subject, "_INBOX.edge.x.7");
  EXPECT_EQ(got[0].traceparent, "tp");
  EXPECT_EQ(RawMessages(), 1);
  EXPECT_EQ(raw_count_.envelopes, 0);
}

TEST_F(BatchTest, RepliesToOneInboxShareTheSiblingDestination) {
  Inbox inbox;
  Subscribe("_INBOX.edge.x.*", inbox, *receiver_);
  Batch batch(*sender_);
  for (int i = 1; i <= 5; ++i) {
    std::string reply = "_INBOX.edge.x." + std::to_string(i);
    batch.Add(SiblingDestination(reply), {reply, std::to_string(i)});
  }
  EXPECT_EQ(batch.size(), 5u);
  ASSERT_TRUE(batch.Send().ok());
  EXPECT_EQ(batch.size(), 0u);
  auto got = inbox.Wait(5);
  ASSERT_EQ(got.size(), 5u);
  for (int i = 1; i <= 5; ++i) EXPECT_EQ(got[i - 1].subject, "_INBOX.edge.x." + std::to_string(i));
}

// A sender may put into an envelope only what it could have published to the subscription
// directly: an entry claiming another subject is dropped by the receiver.
TEST_F(BatchTest, AnEntryOutsideTheSubscriptionIsDropped) {
  Inbox inbox;
  Subscribe("tg.billing.settle.*", inbox, *receiver_);
  std::vector<Outgoing> out = {{"tg.billing.settle.e1", "r1"},
                               {"tg.invoke.billing", "smuggled"},
                               {"tg.billing.settle.e2", "r2"}};
  ASSERT_TRUE(sender_->PublishBatch("tg.billing.settle._b", std::move(out)).ok());
  auto got = inbox.Wait(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].data, "r1");
  EXPECT_EQ(got[1].data, "r2");
  // Nothing else follows: a marker sent after the envelope arrives third.
  ASSERT_TRUE(sender_->Publish("tg.billing.settle.marker", "m").ok());
  got = inbox.Wait(3);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[2].data, "m");
}

TEST_F(BatchTest, NoRespondersReachesEveryEntrysReplySubject) {
  Inbox notices;
  // The server sends its notice only to a plain subscription of the publishing connection.
  Subscribe("tg.billing.unserved.*", notices, *sender_, "");
  std::vector<Outgoing> out = {{"tg.exec.cpu.none", "a", "tg.billing.unserved.e1"},
                               {"tg.exec.cpu.none", "b", "tg.billing.unserved.e2"}};
  ASSERT_TRUE(sender_->PublishBatch("tg.exec.cpu.none", std::move(out)).ok());
  auto got = notices.Wait(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(got[0].no_responders);
  EXPECT_TRUE(got[1].no_responders);
  EXPECT_EQ(got[0].subject, "tg.billing.unserved.e1");
  EXPECT_EQ(got[1].subject, "tg.billing.unserved.e2");
}

TEST_F(BatchTest, EnvelopesAreBoundedInCountAndBytes) {
  Inbox inbox;
  Subscribe("big", inbox, *receiver_);
  Watch("big");
  std::vector<Outgoing> many(600, Outgoing{"big", "x"});
  ASSERT_TRUE(sender_->PublishBatch("big", std::move(many)).ok());
  EXPECT_EQ(inbox.Wait(600).size(), 600u);
  EXPECT_EQ(RawMessages(), 3);  // 256 + 256 + 88
  EXPECT_EQ(raw_count_.envelopes, 3);

  std::vector<Outgoing> large(3, Outgoing{"big", std::string(600 * 1024, 'y')});
  ASSERT_TRUE(sender_->PublishBatch("big", std::move(large)).ok());
  EXPECT_EQ(inbox.Wait(603).size(), 603u);
  EXPECT_EQ(RawMessages(), 6);  // over 1 MiB together: each alone
  EXPECT_EQ(raw_count_.envelopes, 3);
}

TEST_F(BatchTest, CoalescedMessagesFromManyThreadsArriveOnceInOrder) {
  Inbox inbox;
  Subscribe("tg.invoke.billing", inbox, *receiver_);
  constexpr int kThreads = 4;
  constexpr int kEach = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        Status s = sender_->PublishCoalesced(
            "tg.invoke.billing",
            {"tg.invoke.billing", std::to_string(t) + ":" + std::to_string(i)});
        ASSERT_TRUE(s.ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  auto got = inbox.Wait(kThreads * kEach);
  ASSERT_EQ(got.size(), static_cast<size_t>(kThreads * kEach));
  std::vector<int> next(kThreads, 0);
  for (const Message& m : got) {
    int t = std::stoi(m.data.substr(0, m.data.find(':')));
    int i = std::stoi(m.data.substr(m.data.find(':') + 1));
    EXPECT_EQ(i, next[t]) << "thread " << t << " out of order";
    next[t] = i + 1;
  }
}

// An event loop's pass: what is published coalesced while it holds, from its thread or another,
// crosses as one envelope when it sends; nothing crosses before.
TEST_F(BatchTest, HeldCoalescedMessagesLeaveTogetherWhenSent) {
  Inbox inbox;
  Subscribe("tg.invoke.billing", inbox, *receiver_);
  Watch("tg.invoke.billing");
  sender_->HoldCoalesced();
  ASSERT_TRUE(sender_->PublishCoalesced("tg.invoke.billing", {"tg.invoke.billing", "a"}).ok());
  std::thread other([&] {
    ASSERT_TRUE(sender_->PublishCoalesced("tg.invoke.billing", {"tg.invoke.billing", "b"}).ok());
  });
  other.join();
  EXPECT_EQ(RawMessages(), 0);
  sender_->SendCoalesced();
  auto got = inbox.Wait(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].data, "a");
  EXPECT_EQ(got[1].data, "b");
  EXPECT_EQ(RawMessages(), 1);
  EXPECT_EQ(raw_count_.envelopes, 1);
  // Released, a lone message goes at once again.
  ASSERT_TRUE(sender_->PublishCoalesced("tg.invoke.billing", {"tg.invoke.billing", "c"}).ok());
  EXPECT_EQ(inbox.Wait(3).size(), 3u);
}

// A held message that then cannot be sent (here: over the server's payload limit) is reported
// to its unsent callback, since its sender was already told Ok.
TEST_F(BatchTest, AHeldMessageThatCannotBeSentIsReported) {
  sender_->HoldCoalesced();
  Outgoing big{"tg.invoke.billing", std::string(16 << 20, 'x')};
  std::optional<Status> reported;
  big.unsent = [&](const Status& s) { reported = s; };
  ASSERT_TRUE(sender_->PublishCoalesced("tg.invoke.billing", std::move(big)).ok());
  EXPECT_FALSE(reported.has_value());
  sender_->SendCoalesced();
  ASSERT_TRUE(reported.has_value());
  EXPECT_FALSE(reported->ok());
}

double ReadInlineCount() {
  std::string text = metrics::Registry::Global().Expose();
  size_t at = text.find("\ntoolgate_nats_messages_read_inline_total ");
  if (at == std::string::npos) return 0;
  return std::stod(text.substr(at + strlen("\ntoolgate_nats_messages_read_inline_total ")));
}

TEST_F(BatchTest, AReaderThreadSubscriptionIsHandledWhereItIsRead) {
  Inbox inline_inbox;
  Inbox delivered_inbox;
  ASSERT_TRUE(
      receiver_->Subscribe("on.reader", "", inline_inbox.handler(), Delivery::kReaderThread).ok());
  Subscribe("on.delivery", delivered_inbox, *receiver_);
  double before = ReadInlineCount();
  ASSERT_TRUE(sender_->Publish("on.delivery", "d").ok());
  ASSERT_EQ(delivered_inbox.Wait(1).size(), 1u);
  EXPECT_EQ(ReadInlineCount(), before);
  std::vector<Outgoing> out = {{"on.reader", "1"}, {"on.reader", "2"}};
  ASSERT_TRUE(sender_->PublishBatch("on.reader", std::move(out)).ok());
  auto got = inline_inbox.Wait(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].data, "2");
  EXPECT_EQ(ReadInlineCount(), before + 1);  // one envelope read, two messages handled
}

// Where two subscriptions of one connection match a subject the server sends a copy to each;
// the reader thread cannot tell them apart, so it leaves both to the library's routing.
TEST_F(BatchTest, OverlappingSubscriptionsEachGetTheirCopy) {
  Inbox narrow;
  Inbox wide;
  ASSERT_TRUE(receiver_->Subscribe("over.lap", "", narrow.handler(), Delivery::kReaderThread).ok());
  ASSERT_TRUE(receiver_->Subscribe("over.*", "", wide.handler(), Delivery::kReaderThread).ok());
  // A round trip on the subscribing connection: the server has both subscriptions.
  ASSERT_FALSE(receiver_->Request("nobody.serves.this", "", 2000).ok());
  ASSERT_TRUE(sender_->Publish("over.lap", "x").ok());
  EXPECT_EQ(narrow.Wait(1).size(), 1u);
  EXPECT_EQ(wide.Wait(1).size(), 1u);
}

}  // namespace
}  // namespace toolgate::bus
