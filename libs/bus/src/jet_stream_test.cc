#include "toolgate/bus/jet_stream.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "toolgate/bus/bus.h"
#include "toolgate/core/bus_permissions.h"
#include "toolgate/net/listen_port.h"

namespace toolgate::bus {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTrace = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

int FreePort() {
  Result<int> port = net::PickListenPort();
  if (!port.ok()) throw std::runtime_error(port.status().ToString());
  return *port;
}

// A JetStream nats-server of the test's own: a free loopback port and a store in a fresh
// temporary directory (removed with it). Restart() kills it with SIGKILL and starts it again on
// the same port and store. With a config (nats.conf text; "PORT" and "STORE" stand for the port
// and the store directory) it runs that instead of the command line's -js -sd.
class JetStreamServer {
 public:
  explicit JetStreamServer(std::string config = {})
      : config_(std::move(config)), port_(FreePort()) {
    char tmpl[] = "/tmp/toolgate-js-test-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) std::abort();
    dir_ = tmpl;
    if (!config_.empty()) {
      for (auto [token, value] :
           {std::pair<std::string, std::string>{"PORT", std::to_string(port_)},
            {"STORE", (dir_ / "store").string()}}) {
        for (size_t at; (at = config_.find(token)) != std::string::npos;) {
          config_.replace(at, token.size(), value);
        }
      }
      std::ofstream(dir_ / "nats.conf") << config_;
    }
    Start();
  }
  ~JetStreamServer() {
    Stop(SIGTERM);
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string url() const { return "nats://127.0.0.1:" + std::to_string(port_); }
  // Killed without a chance to write anything more, then started on the same store.
  void Restart() {
    Stop(SIGKILL);
    Start();
  }

 private:
  void Start() {
    std::string port = std::to_string(port_);
    std::string store = (dir_ / "store").string();
    std::string conf = (dir_ / "nats.conf").string();
    std::string log = (dir_ / "nats.log").string();
    pid_ = fork();
    if (pid_ == 0) {
      int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      dup2(out, 1);
      dup2(out, 2);
      if (config_.empty()) {
        execl("/usr/sbin/nats-server", "nats-server", "-a", "127.0.0.1", "-p", port.c_str(), "-js",
              "-sd", store.c_str(), nullptr);
      } else {
        execl("/usr/sbin/nats-server", "nats-server", "-c", conf.c_str(), nullptr);
      }
      _exit(127);
    }
  }
  void Stop(int sig) {
    if (pid_ <= 0) return;
    kill(pid_, sig);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  std::string config_;
  int port_;
  fs::path dir_;
  pid_t pid_ = -1;
};

// Connects to url, waiting (bounded: Bus::Connect retries until connect_timeout_ms) for the
// server to accept connections; nats-server accepts none before JetStream has recovered.
std::unique_ptr<Bus> Connect(const std::string& url, const std::string& user = {},
                             const std::string& password = {}) {
  BusOptions options;
  options.url = url;
  options.name = "jet-stream-test";
  options.connect_timeout_ms = 10000;
  options.user = user;
  options.password = password;
  if (!user.empty()) options.inbox_prefix = core::InboxPrefix(user);
  auto bus = Bus::Connect(options);
  EXPECT_TRUE(bus.ok()) << bus.status().ToString();
  return bus.ok() ? std::move(*bus) : nullptr;
}

// What the server says of a stream and a consumer, through a connection of the test's own
// (the library's view, not JetStream's).
struct ServerView {
  explicit ServerView(const std::string& url) {
    EXPECT_EQ(natsConnection_ConnectTo(&nc, url.c_str()), NATS_OK);
    EXPECT_EQ(natsConnection_JetStream(&js, nc, nullptr), NATS_OK);
  }
  ~ServerView() {
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
  }
  // Messages stored in stream; -1 when it cannot be read.
  int64_t Stored(const std::string& stream) {
    jsStreamInfo* si = nullptr;
    jsErrCode code = static_cast<jsErrCode>(0);
    if (js_GetStreamInfo(&si, js, stream.c_str(), nullptr, &code) != NATS_OK) return -1;
    int64_t n = static_cast<int64_t>(si->State.Msgs);
    jsStreamInfo_Destroy(si);
    return n;
  }
  // Pull requests waiting on consumer; -1 when it cannot be read.
  int64_t Waiting(const std::string& stream, const std::string& consumer) {
    jsConsumerInfo* ci = nullptr;
    jsErrCode code = static_cast<jsErrCode>(0);
    if (js_GetConsumerInfo(&ci, js, stream.c_str(), consumer.c_str(), nullptr, &code) != NATS_OK) {
      return -1;
    }
    int64_t n = ci->NumWaiting;
    jsConsumerInfo_Destroy(ci);
    return n;
  }
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
};

StreamSpec Queue() {
  StreamSpec spec;
  spec.name = "TG_ASYNC";
  spec.subjects = {"tg.async.queue.*"};
  return spec;
}

// A consumer whose unacknowledged messages come back after 200 ms: a fetch that waits longer
// than that and gets nothing shows that nothing is pending.
ConsumerSpec Dispatch() {
  ConsumerSpec spec;
  spec.stream = "TG_ASYNC";
  spec.durable = "dispatch";
  spec.ack_wait_ms = 200;
  return spec;
}

class JetStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bus_ = Connect(server_.url());
    ASSERT_NE(bus_, nullptr);
    auto js = JetStream::Open(*bus_);
    ASSERT_TRUE(js.ok()) << js.status().ToString();
    js_ = std::move(*js);
    ASSERT_TRUE(js_->EnsureStream(Queue()).ok());
    auto consumer = js_->Consumer(Dispatch());
    ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
    consumer_ = std::move(*consumer);
  }
  // The one message the next fetch brings (waiting up to 10 s for it); none on failure.
  std::optional<QueuedMessage> FetchOne() {
    auto got = consumer_->Fetch(1, 10000);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    if (!got.ok()) return std::nullopt;
    EXPECT_EQ(got->size(), 1u);
    if (got->empty()) return std::nullopt;
    return std::move(got->front());
  }

  JetStreamServer server_;
  std::unique_ptr<Bus> bus_;
  std::unique_ptr<JetStream> js_;
  std::unique_ptr<PullConsumer> consumer_;
};

TEST_F(JetStreamTest, APublishedMessageIsFetchedOnceAndGoneWhenAcked) {
  ASSERT_TRUE(
      js_->Publish("tg.async.queue.e1", std::string("sealed\0bytes", 12), "e1", kTrace).ok());
  ServerView view(server_.url());
  EXPECT_EQ(view.Stored("TG_ASYNC"), 1);
  auto m = FetchOne();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->subject(), "tg.async.queue.e1");
  EXPECT_EQ(m->data(), std::string("sealed\0bytes", 12));
  EXPECT_EQ(m->traceparent(), kTrace);
  EXPECT_EQ(m->delivered(), 1u);
  EXPECT_EQ(m->stream_sequence(), 1u);
  ASSERT_TRUE(m->Ack().ok());
  // Confirmed: the work queue no longer holds it, and it does not come back after the ack wait.
  EXPECT_EQ(view.Stored("TG_ASYNC"), 0);
  auto again = consumer_->Fetch(1, 1500);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->empty());
}

// The control of the test above: without an ack the same wait brings the message back.
TEST_F(JetStreamTest, AMessageNotAckedComesBackAfterTheAckWait) {
  ASSERT_TRUE(js_->Publish("tg.async.queue.e1", "job", "e1", "").ok());
  auto first = FetchOne();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->traceparent(), "");
  auto second = FetchOne();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->stream_sequence(), first->stream_sequence());
  EXPECT_EQ(second->delivered(), 2u);
  EXPECT_EQ(second->data(), "job");
  EXPECT_TRUE(second->Ack().ok());
}

TEST_F(JetStreamTest, NakRedeliversAtOnce) {
  ConsumerSpec slow = Dispatch();
  slow.ack_wait_ms = 600000;  // only the nak can bring it back within the test
  auto consumer = js_->Consumer(slow);
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  consumer_ = std::move(*consumer);
  ASSERT_TRUE(js_->Publish("tg.async.queue.e2", "job", "e2", kTrace).ok());
  auto first = FetchOne();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->delivered(), 1u);
  ASSERT_TRUE(first->Nak(0).ok());
  auto second = FetchOne();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->delivered(), 2u);
  EXPECT_EQ(second->stream_sequence(), first->stream_sequence());
  EXPECT_EQ(second->data(), "job");
  EXPECT_EQ(second->traceparent(), kTrace);
  ASSERT_TRUE(second->Ack().ok());
  // An acknowledgement after the first one changes nothing.
  EXPECT_TRUE(second->Nak(0).ok());
  ServerView view(server_.url());
  EXPECT_EQ(view.Stored("TG_ASYNC"), 0);
}

TEST_F(JetStreamTest, ARepeatedMsgIdIsStoredOnce) {
  ASSERT_TRUE(js_->Publish("tg.async.queue.e3", "first", "e3", "").ok());
  ASSERT_TRUE(js_->Publish("tg.async.queue.e3", "repeat", "e3", "").ok());
  ASSERT_TRUE(js_->Publish("tg.async.queue.e4", "other", "e4", "").ok());
  ServerView view(server_.url());
  EXPECT_EQ(view.Stored("TG_ASYNC"), 2);
  auto got = consumer_->Fetch(10, 10000);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].data(), "first");
  EXPECT_EQ((*got)[1].data(), "other");
  for (QueuedMessage& m : *got) EXPECT_TRUE(m.Ack().ok());
  // Without a msg_id nothing is deduplicated.
  ASSERT_TRUE(js_->Publish("tg.async.queue.e5", "same", "", "").ok());
  ASSERT_TRUE(js_->Publish("tg.async.queue.e5", "same", "", "").ok());
  EXPECT_EQ(view.Stored("TG_ASYNC"), 2);
}

TEST_F(JetStreamTest, AStoredMessageSurvivesAServerKilledAndRestarted) {
  ASSERT_TRUE(js_->Publish("tg.async.queue.e6", "kept", "e6", kTrace).ok());
  server_.Restart();
  // Fetch until the connection is back: each try waits up to a second (Unavailable while the
  // server is down), bounded at 30 tries.
  std::vector<QueuedMessage> got;
  for (int attempt = 0; attempt < 30 && got.empty(); ++attempt) {
    auto r = consumer_->Fetch(1, 1000);
    if (r.ok()) got = std::move(*r);
  }
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].data(), "kept");
  EXPECT_EQ(got[0].subject(), "tg.async.queue.e6");
  EXPECT_EQ(got[0].traceparent(), kTrace);
  EXPECT_TRUE(got[0].Ack().ok());
  // The stream and the durable consumer came back too: ensuring them again changes nothing.
  EXPECT_TRUE(js_->EnsureStream(Queue()).ok());
  EXPECT_TRUE(js_->Consumer(Dispatch()).ok());
}

// A fetch waiting on an empty queue for up to 10 messages returns with the first that comes,
// instead of holding it until 9 more have come or the minute is over.
TEST_F(JetStreamTest, AWaitingFetchReturnsWithTheFirstMessageToArrive) {
  ConsumerSpec slow = Dispatch();
  slow.ack_wait_ms = 600000;  // no redelivery fills the batch
  auto consumer = js_->Consumer(slow);
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  consumer_ = std::move(*consumer);
  std::mutex mu;
  std::condition_variable cv;
  bool returned = false;
  std::thread publisher([&] {
    // Once the fetch's request waits on the server (bounded: a round trip per try).
    ServerView view(server_.url());
    for (int i = 0; i < 10000 && view.Waiting("TG_ASYNC", "dispatch") < 1; ++i) {
    }
    EXPECT_TRUE(js_->Publish("tg.async.queue.f1", "first", "f1", "").ok());
    std::unique_lock<std::mutex> lock(mu);
    if (!cv.wait_for(lock, std::chrono::seconds(30), [&] { return returned; })) {
      // Still waiting: what a fetch that holds out for its whole batch would get.
      for (int i = 2; i <= 10; ++i) {
        std::string id = "f" + std::to_string(i);
        EXPECT_TRUE(js_->Publish("tg.async.queue." + id, "filler", id, "").ok());
      }
    }
  });
  auto got = consumer_->Fetch(10, 60000);
  {
    std::lock_guard<std::mutex> lock(mu);
    returned = true;
  }
  cv.notify_all();
  publisher.join();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].data(), "first");
}

// While max_ack_pending holds a message back and another fetcher's request already claims
// it, the server refuses a new "no wait" request at once (408 Requests Pending); the fetch then
// waits in line instead of returning empty straight away (a dispatcher's loop would spin).
TEST_F(JetStreamTest, AFetchRefusedForRequestsPendingWaitsInLine) {
  ConsumerSpec one = Dispatch();
  one.ack_wait_ms = 600000;
  one.max_ack_pending = 1;
  auto updated = js_->Consumer(one);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  consumer_ = std::move(*updated);
  auto second = js_->Consumer(one);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  auto third = js_->Consumer(one);
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  ServerView view(server_.url());
  // Waits (bounded: a round trip per try) until n pull requests wait on the server.
  auto waiting = [&](int64_t n) {
    for (int i = 0; i < 10000 && view.Waiting("TG_ASYNC", "dispatch") < n; ++i) {
    }
    return view.Waiting("TG_ASYNC", "dispatch");
  };
  ASSERT_TRUE(js_->Publish("tg.async.queue.p1", "held", "p1", "").ok());
  auto held = FetchOne();  // the one message max_ack_pending lets out
  ASSERT_TRUE(held);
  ASSERT_TRUE(js_->Publish("tg.async.queue.p2", "blocked", "p2", "").ok());
  // The second fetcher's request claims two, more than is pending: it gets p2 once p1 is acked,
  // and (max_ack_pending holding anything else back) waits out its 3 s for a second one.
  Result<std::vector<QueuedMessage>> second_got = Status::Internal("not fetched");
  std::thread second_fetch([&] { second_got = (*second)->Fetch(2, 3000); });
  EXPECT_EQ(waiting(1), 1);
  Result<std::vector<QueuedMessage>> third_got = Status::Internal("not fetched");
  std::thread third_fetch([&] { third_got = (*third)->Fetch(1, 60000); });
  // Refused at once, then in line behind the second fetcher's request.
  EXPECT_EQ(waiting(2), 2);
  EXPECT_TRUE(held->Ack().ok());  // p2 may go out now: to the first in line
  second_fetch.join();            // no ASSERT before the third fetcher is joined
  EXPECT_TRUE(second_got.ok()) << second_got.status().ToString();
  if (second_got.ok()) {
    EXPECT_EQ(second_got->size(), 1u);
    for (QueuedMessage& m : *second_got) {
      EXPECT_EQ(m.data(), "blocked");
      EXPECT_TRUE(m.Ack().ok());
    }
  }
  // The third fetcher, still in line, gets the next message.
  EXPECT_TRUE(js_->Publish("tg.async.queue.p3", "next", "p3", "").ok());
  third_fetch.join();
  ASSERT_TRUE(third_got.ok()) << third_got.status().ToString();
  ASSERT_EQ(third_got->size(), 1u);
  EXPECT_EQ((*third_got)[0].data(), "next");
  EXPECT_TRUE((*third_got)[0].Ack().ok());
}

TEST_F(JetStreamTest, FetchOnAnEmptyStreamReturnsNothingAfterItsTimeout) {
  auto got = consumer_->Fetch(5, 300);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(got->empty());
  auto one = consumer_->Fetch(1, 300);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_TRUE(one->empty());
}

TEST_F(JetStreamTest, TermEndsAMessageForGood) {
  ASSERT_TRUE(js_->Publish("tg.async.queue.e7", "poison", "e7", "").ok());
  auto m = FetchOne();
  ASSERT_TRUE(m);
  ASSERT_TRUE(m->Term().ok());
  ServerView view(server_.url());
  EXPECT_EQ(view.Stored("TG_ASYNC"), 0);
  auto again = consumer_->Fetch(1, 1500);  // past the ack wait
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->empty());
}

TEST_F(JetStreamTest, AMessageMayOutliveItsConsumer) {
  ASSERT_TRUE(js_->Publish("tg.async.queue.e8", "job", "e8", "").ok());
  auto m = FetchOne();
  ASSERT_TRUE(m);
  consumer_.reset();
  QueuedMessage moved = std::move(*m);
  EXPECT_FALSE(m->Ack().ok());  // NOLINT: a moved-from message refuses
  ASSERT_TRUE(moved.Ack().ok());
  ServerView view(server_.url());
  EXPECT_EQ(view.Stored("TG_ASYNC"), 0);
}

TEST_F(JetStreamTest, EnsureStreamUpdatesAnExistingStream) {
  StreamSpec spec = Queue();
  spec.subjects = {"tg.async.queue.*", "tg.async.retry.*"};
  spec.max_age_ms = 3600000;
  ASSERT_TRUE(js_->EnsureStream(spec).ok());
  ASSERT_TRUE(js_->EnsureStream(spec).ok());  // the same again: nothing to change
  ASSERT_TRUE(js_->Publish("tg.async.retry.e9", "retry", "e9", "").ok());
  ServerView view(server_.url());
  jsStreamInfo* si = nullptr;
  ASSERT_EQ(js_GetStreamInfo(&si, view.js, "TG_ASYNC", nullptr, nullptr), NATS_OK);
  EXPECT_EQ(si->Config->MaxAge, int64_t{3600000} * 1000000);
  EXPECT_EQ(si->Config->Duplicates, int64_t{120000} * 1000000);
  EXPECT_EQ(si->Config->Storage, js_FileStorage);
  EXPECT_EQ(si->Config->Retention, js_WorkQueuePolicy);
  EXPECT_EQ(si->Config->SubjectsLen, 2);
  EXPECT_EQ(si->State.Msgs, 1u);
  jsStreamInfo_Destroy(si);
  // What a single server cannot do is refused, with the server's reason.
  spec.replicas = 3;
  Status refused = js_->EnsureStream(spec);
  EXPECT_EQ(refused.code(), Status::Code::kInternal) << refused.ToString();
}

TEST_F(JetStreamTest, ConsumerUpdatesAnExistingDurable) {
  ConsumerSpec spec = Dispatch();
  spec.ack_wait_ms = 45000;
  spec.max_ack_pending = 7;
  auto consumer = js_->Consumer(spec);
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  ServerView view(server_.url());
  jsConsumerInfo* ci = nullptr;
  ASSERT_EQ(js_GetConsumerInfo(&ci, view.js, "TG_ASYNC", "dispatch", nullptr, nullptr), NATS_OK);
  EXPECT_EQ(ci->Config->AckWait, int64_t{45000} * 1000000);
  EXPECT_EQ(ci->Config->MaxAckPending, 7);
  EXPECT_EQ(ci->Config->AckPolicy, js_AckExplicit);
  EXPECT_TRUE(ci->Config->DeliverSubject == nullptr || *ci->Config->DeliverSubject == '\0');
  jsConsumerInfo_Destroy(ci);
}

TEST_F(JetStreamTest, PublishingWhereNoStreamListensIsUnavailable) {
  Status s = js_->Publish("tg.nothing.stored.here", "job", "x", "");
  EXPECT_EQ(s.code(), Status::Code::kUnavailable) << s.ToString();
  EXPECT_EQ(s.message().find("job"), std::string::npos) << "no message data in a status";
}

// The billing user of core::BusUsers(), on a server configured the way the launcher does it
// (JetStream and the same authorization block), with billing's own inbox prefix: its
// permissions cover the whole queue, replies and fetches included.
TEST(JetStreamPermissionsTest, BillingsPermissionsCoverTheQueue) {
  std::string config =
      "listen: 127.0.0.1:PORT\njetstream {\n  store_dir: \"STORE\"\n}\n" +
      core::NatsAuthorization([](const std::string& user) { return "\"pw-" + user + "\""; });
  JetStreamServer server(config);
  std::unique_ptr<Bus> billing = Connect(server.url(), "billing", "pw-billing");
  ASSERT_NE(billing, nullptr);
  auto js = JetStream::Open(*billing);
  ASSERT_TRUE(js.ok()) << js.status().ToString();
  ASSERT_TRUE((*js)->EnsureStream(Queue()).ok());
  ASSERT_TRUE((*js)->Publish("tg.async.queue.e1", "a", "e1", kTrace).ok());
  ASSERT_TRUE((*js)->Publish("tg.async.queue.e2", "b", "e2", "").ok());
  ASSERT_TRUE((*js)->Publish("tg.async.queue.e3", "c", "e3", "").ok());
  ConsumerSpec spec = Dispatch();
  spec.ack_wait_ms = 600000;
  auto consumer = (*js)->Consumer(spec);
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  auto got = (*consumer)->Fetch(3, 10000);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 3u);
  EXPECT_TRUE((*got)[0].Ack().ok());
  EXPECT_TRUE((*got)[1].Term().ok());
  EXPECT_TRUE((*got)[2].InProgress().ok());
  EXPECT_TRUE((*got)[2].Nak(0).ok());
  auto again = (*consumer)->Fetch(1, 10000);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ((*again)[0].data(), "c");
  EXPECT_EQ((*again)[0].delivered(), 2u);
  EXPECT_TRUE((*again)[0].Ack().ok());
  // The control: a user without them (the edge) is refused by the server, so the table above
  // is what let billing through.
  std::unique_ptr<Bus> edge = Connect(server.url(), "edge", "pw-edge");
  ASSERT_NE(edge, nullptr);
  auto edge_js = JetStream::Open(*edge);
  ASSERT_TRUE(edge_js.ok()) << edge_js.status().ToString();
  EXPECT_FALSE((*edge_js)->Publish("tg.async.queue.e4", "d", "e4", "", 1000).ok());
}

}  // namespace
}  // namespace toolgate::bus
