#include "http_front.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "toolgate/core/problem.h"

namespace toolgate::edge {
namespace {

TEST(ClientAddressTest, AnUntrustedPeerIsTheClientWhateverItForwards) {
  EXPECT_EQ(ClientAddress("203.0.113.7", "198.51.100.1", {}), "203.0.113.7");
  EXPECT_EQ(ClientAddress("203.0.113.7", "198.51.100.1", {"10.0.0.1"}), "203.0.113.7");
}

TEST(ClientAddressTest, ATrustedProxyNamesTheRightMostUntrustedAddress) {
  const std::vector<std::string> proxies = {"10.0.0.1", "10.0.0.2"};
  // The client's own X-Forwarded-For entry (left) is whatever it wrote; only what the proxies
  // appended counts.
  EXPECT_EQ(ClientAddress("10.0.0.1", "1.1.1.1, 198.51.100.9, 10.0.0.2", proxies), "198.51.100.9");
  EXPECT_EQ(ClientAddress("10.0.0.1", "2001:db8::1", proxies), "2001:db8::1");
}

TEST(ClientAddressTest, NothingUsableFallsBackToThePeer) {
  const std::vector<std::string> proxies = {"10.0.0.1"};
  EXPECT_EQ(ClientAddress("10.0.0.1", "", proxies), "10.0.0.1");
  EXPECT_EQ(ClientAddress("10.0.0.1", "10.0.0.1", proxies), "10.0.0.1");
  EXPECT_EQ(ClientAddress("10.0.0.1", "not-an-ip", proxies), "10.0.0.1");
}

// Pistache's stand-in: answers each request "backend:<target>", holding the answers to
// "/slow" until Release.
class FakeBackend {
 public:
  FakeBackend() {
    listen_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(listen_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(listen_, 16), 0);
    socklen_t len = sizeof addr;
    ::getsockname(listen_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeBackend() {
    Release();
    ::shutdown(listen_, SHUT_RDWR);
    ::close(listen_);
    thread_.join();
    for (auto& t : connections_) t.join();
  }
  int port() const { return port_; }
  int requests() const { return requests_; }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  void Serve() {
    for (;;) {
      int fd = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
      connections_.emplace_back([this, fd] { Answer(fd); });
    }
  }
  void Answer(int fd) {
    std::string in;
    char buf[4096];
    for (;;) {
      size_t end = in.find("\r\n\r\n");
      if (end != std::string::npos) {
        auto head = ParseRequestHead(std::string_view(in).substr(0, end + 4));
        size_t length = end + 4 + (head ? head->ContentLength() : 0);
        if (in.size() >= length) {
          ++requests_;
          if (head && head->target == "/slow") {
            std::unique_lock<std::mutex> lock(mu_);
            cv_.wait(lock, [this] { return released_; });
          }
          std::string body = "backend:" + (head ? head->target : std::string("?"));
          std::string out = ResponseBytes(200, {}, body, true);
          (void)!::send(fd, out.data(), out.size(), MSG_NOSIGNAL);
          in.erase(0, length);
          continue;
        }
      }
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      in.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
  }
  int listen_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::vector<std::thread> connections_;
  std::atomic<int> requests_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
};

// A front whose route takes "POST /own", handing each request to the test.
class FrontRouteTest : public ::testing::Test {
 protected:
  // Options a derived fixture adds to the front's.
  virtual void Configure(FrontOptions&) {}
  void SetUp() override {
    FrontOptions options;
    options.port = 0;
    options.backend_port = backend_.port();
    options.token = "t";
    options.route.takes = [](std::string_view method, std::string_view target) {
      return method == "POST" && target == "/own";
    };
    options.route.answer = [this](FrontRequest request, FrontRespond respond, FrontRespond part) {
      std::lock_guard<std::mutex> lock(mu_);
      taken_.push_back({std::move(request), std::move(respond), std::move(part)});
      cv_.notify_all();
    };
    Configure(options);
    front_ = std::make_unique<HttpFront>(std::move(options));
    ASSERT_TRUE(front_->Start().ok());
    client_ = Connect();
    ASSERT_GE(client_, 0);
  }
  int Connect() const {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(front_->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd);
      return -1;
    }
    return fd;
  }
  void TearDown() override {
    if (client_ >= 0) ::close(client_);
    front_.reset();
  }
  void Write(std::string_view bytes) {
    ASSERT_EQ(::send(client_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  // The next n taken requests (waits for them).
  void AwaitTaken(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return taken_.size() >= n; });
  }
  // Whether the client receives nothing within ms: the front holds what it must hold.
  bool Quiet(int ms) {
    pollfd p{client_, POLLIN, 0};
    return ::poll(&p, 1, ms) == 0;
  }
  // The bodies of the next n responses, in order; "EOF" once the connection ends.
  std::vector<std::string> Read(size_t n) {
    std::vector<std::string> out;
    char buf[4096];
    while (out.size() < n) {
      size_t end = pending_.find("\r\n\r\n");
      if (end != std::string::npos) {
        size_t at = pending_.find("Content-Length: ");
        size_t length = at < end ? std::stoul(pending_.substr(at + 16)) : 0;
        if (pending_.size() >= end + 4 + length) {
          out.push_back(pending_.substr(end + 4, length));
          pending_.erase(0, end + 4 + length);
          continue;
        }
      }
      ssize_t got = ::recv(client_, buf, sizeof buf, 0);
      if (got <= 0) {
        out.push_back("EOF");
        break;
      }
      pending_.append(buf, static_cast<size_t>(got));
    }
    return out;
  }
  struct Taken {
    FrontRequest request;
    FrontRespond respond;
    FrontRespond part;
  };
  FakeBackend backend_;
  std::unique_ptr<HttpFront> front_;
  int client_ = -1;
  std::string pending_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Taken> taken_;
};

TEST_F(FrontRouteTest, ARequestTheRouteTakesIsAnsweredWithoutTheBackend) {
  Write("POST /own HTTP/1.1\r\nHost: x\r\nAuthorization: k\r\nContent-Length: 5\r\n\r\nhello");
  AwaitTaken(1);
  EXPECT_EQ(taken_[0].request.body, "hello");
  EXPECT_EQ(taken_[0].request.head.Value("authorization"), "k");
  EXPECT_TRUE(taken_[0].request.head.KeepAlive());
  // Answered from another thread, as the bus's reader thread does.
  std::thread([respond = taken_[0].respond] {
    respond(ResponseBytes(200, {}, "own", true));
  }).join();
  EXPECT_EQ(Read(1), std::vector<std::string>{"own"});
  // The connection stays open for the next request, relayed or not.
  Write("GET /other HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(Read(1), std::vector<std::string>{"backend:/other"});
  EXPECT_EQ(backend_.requests(), 1);
}

// An event stream: each part reaches the client as it is given, before the response ends, and
// the connection's next request waits for the end.
TEST_F(FrontRouteTest, PartsOfAResponseReachTheClientBeforeItsEnd) {
  Write(
      "POST /own HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
      "GET /after HTTP/1.1\r\nHost: x\r\n\r\n");
  AwaitTaken(1);
  std::thread([part = taken_[0].part] {
    part(ChunkedResponseHead(200, {{"Content-Type", "text/event-stream"}}, true));
    part(Chunk("data: one\n\n"));
  }).join();
  std::string got;
  char buf[4096];
  while (got.find("data: one") == std::string::npos) {
    ssize_t n = ::recv(client_, buf, sizeof buf, 0);
    ASSERT_GT(n, 0);
    got.append(buf, static_cast<size_t>(n));
  }
  EXPECT_NE(got.find("Transfer-Encoding: chunked"), std::string::npos) << got;
  EXPECT_EQ(backend_.requests(), 0);  // the request behind it waits for the end
  taken_[0].respond(Chunk("data: two\n\n") + std::string(kLastChunk));
  while (got.find("0\r\n\r\n") == std::string::npos) {
    ssize_t n = ::recv(client_, buf, sizeof buf, 0);
    ASSERT_GT(n, 0);
    got.append(buf, static_cast<size_t>(n));
  }
  EXPECT_NE(got.find("data: two"), std::string::npos) << got;
  pending_ = got.substr(got.find("0\r\n\r\n") + 5);
  EXPECT_EQ(Read(1), std::vector<std::string>{"backend:/after"});
  // The stream's end is known: a later request of the route is the route's again.
  Write("POST /own HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  AwaitTaken(2);
  taken_[1].respond(ResponseBytes(200, {}, "own again", true));
  EXPECT_EQ(Read(1), std::vector<std::string>{"own again"});
  EXPECT_EQ(backend_.requests(), 1);
}

TEST_F(FrontRouteTest, ABodyInPiecesIsHandedOverWhole) {
  Write("POST /own HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhello");
  EXPECT_TRUE(Quiet(100));
  Write("world");
  AwaitTaken(1);
  EXPECT_EQ(taken_[0].request.body, "helloworld");
  taken_[0].respond(ResponseBytes(200, {}, "ok", true));
  EXPECT_EQ(Read(1), std::vector<std::string>{"ok"});
  EXPECT_EQ(backend_.requests(), 0);
}

// Responses keep the order of their requests: one pipelined behind the route's request waits
// for the route's answer before it reaches the backend.
TEST_F(FrontRouteTest, ARequestBehindTheRoutesWaitsForItsAnswer) {
  Write(
      "POST /own HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
      "GET /next HTTP/1.1\r\nHost: x\r\n\r\n");
  AwaitTaken(1);
  EXPECT_TRUE(Quiet(200));
  EXPECT_EQ(backend_.requests(), 0);
  taken_[0].respond(ResponseBytes(200, {}, "own", true));
  EXPECT_EQ(Read(2), (std::vector<std::string>{"own", "backend:/next"}));
}

// And one the route would take goes to the backend when an earlier request is still there.
TEST_F(FrontRouteTest, ARouteRequestBehindARelayedOneIsRelayedToo) {
  Write("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
  Write("POST /own HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  EXPECT_TRUE(Quiet(100));
  backend_.Release();
  EXPECT_EQ(Read(2), (std::vector<std::string>{"backend:/slow", "backend:/own"}));
  std::lock_guard<std::mutex> lock(mu_);
  EXPECT_TRUE(taken_.empty());
}

TEST_F(FrontRouteTest, AnAnswerThatClosesEndsTheConnection) {
  Write("POST /own HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
  AwaitTaken(1);
  EXPECT_FALSE(taken_[0].request.head.KeepAlive());
  taken_[0].respond(ResponseBytes(200, {}, "bye", false));
  EXPECT_EQ(Read(2), (std::vector<std::string>{"bye", "EOF"}));
}

// The limits hold for the route's requests too: a body over the limit is refused before any
// of it is read, and the route never sees it.
TEST_F(FrontRouteTest, TheBodyLimitHoldsForTheRoute) {
  Write("POST /own HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n");
  std::vector<std::string> got = Read(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NE(got[0].find("payload_too_large"), std::string::npos) << got[0];
  EXPECT_EQ(got[1], "EOF");
  std::lock_guard<std::mutex> lock(mu_);
  EXPECT_TRUE(taken_.empty());
}

// A client that leaves before the answer: the late answer goes nowhere.
TEST_F(FrontRouteTest, AnAnswerAfterTheClientLeftIsDropped) {
  Write("POST /own HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  AwaitTaken(1);
  ::close(client_);
  client_ = -1;
  taken_[0].respond(ResponseBytes(200, {}, "late", true));
  front_.reset();  // and one after the front is gone
  taken_[0].respond(ResponseBytes(200, {}, "later", true));
}

// A front with a BodyGate: "Authorization: bad" is refused at once, "Authorization: later" is
// decided by the test (GateLater), anything else admitted at once with a limit of 10 MB.
class FrontGateTest : public FrontRouteTest {
 protected:
  void Configure(FrontOptions& options) override {
    options.max_body_bytes = 64 * 1024 * 1024;
    options.max_body_bytes_in_flight = 1 << 30;
    options.max_body_bytes_in_flight_per_client = 1 << 30;
    Budget(options);
    options.gate = [this](const RequestHead& head, std::function<void(BodyVerdict)> later) {
      std::optional<BodyVerdict> verdict;
      ++asked_;
      if (head.Value("authorization") == "bad") {
        verdict.emplace();
        verdict->refusal = core::MakeProblem("invalid_api_key", "no such key");
      } else if (head.Value("authorization") == "later") {
        std::lock_guard<std::mutex> lock(mu_);
        later_.push_back(std::move(later));
        cv_.notify_all();
      } else {
        verdict.emplace();
        verdict->body_limit = 10 * 1000 * 1000;
      }
      return verdict;
    };
  }
  virtual void Budget(FrontOptions&) {}
  std::function<void(BodyVerdict)> AwaitLater() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !later_.empty(); });
    auto later = std::move(later_.front());
    later_.erase(later_.begin());
    return later;
  }
  // One whole response (head and Content-Length body), or what came before the connection ended.
  std::string ReadOne(int fd) {
    std::string out;
    char buf[4096];
    for (;;) {
      const size_t end = out.find("\r\n\r\n");
      const size_t at = out.find("Content-Length: ");
      if (end != std::string::npos && at < end &&
          out.size() >= end + 4 + std::stoul(out.substr(at + 16))) {
        return out;
      }
      ssize_t got = ::recv(fd, buf, sizeof buf, 0);
      if (got <= 0) return out;
      out.append(buf, static_cast<size_t>(got));
    }
  }
  // Sends request on a connection of its own; the one answer it gets.
  std::string OnNewConnection(const std::string& request) {
    int fd = Connect();
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
    std::string answer = ReadOne(fd);
    ::close(fd);
    return answer;
  }
  // A request with a body of length that the backend holds unanswered until Release: its bytes
  // stay in flight.
  void HoldInBackend(size_t length, const std::string& headers = "") {
    Write("POST /slow HTTP/1.1\r\nHost: x\r\n" + headers +
          "Content-Length: " + std::to_string(length) + "\r\n\r\n" + std::string(length, 'a'));
    while (backend_.requests() < 1) std::this_thread::yield();
  }
  // Everything the client receives until the connection ends.
  std::string ReadAll(int fd) {
    std::string out;
    char buf[4096];
    for (;;) {
      ssize_t got = ::recv(fd, buf, sizeof buf, 0);
      if (got <= 0) return out;
      out.append(buf, static_cast<size_t>(got));
    }
  }
  std::atomic<int> asked_{0};
  std::vector<std::function<void(BodyVerdict)>> later_;
};

// The attack: a large body with a bad key. The refusal comes before any of the body is sent.
TEST_F(FrontGateTest, ARefusedBodyIsAnsweredFromTheHeadAlone) {
  Write("POST /up HTTP/1.1\r\nHost: x\r\nAuthorization: bad\r\nContent-Length: 60000000\r\n\r\n");
  std::vector<std::string> got = Read(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NE(got[0].find("invalid_api_key"), std::string::npos) << got[0];
  EXPECT_EQ(got[1], "EOF");
  EXPECT_EQ(backend_.requests(), 0);
}

// The gate's answer may come later, from another thread; the body waits for it, unread.
TEST_F(FrontGateTest, ABodyWaitsForALateVerdict) {
  Write("POST /up HTTP/1.1\r\nHost: x\r\nAuthorization: later\r\nContent-Length: 10\r\n\r\nhello");
  auto later = AwaitLater();
  Write("world");
  EXPECT_EQ(backend_.requests(), 0);
  BodyVerdict admit;
  admit.body_limit = 100;
  std::thread([&] { later(admit); }).join();
  EXPECT_EQ(Read(1), std::vector<std::string>{"backend:/up"});
  // A late refusal closes, and the verdict is asked once per body.
  Write("POST /up2 HTTP/1.1\r\nHost: x\r\nAuthorization: later\r\nContent-Length: 10\r\n\r\n");
  auto refuse = AwaitLater();
  BodyVerdict no;
  no.refusal = core::MakeProblem("forbidden", "not yours");
  refuse(no);
  std::vector<std::string> got = Read(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NE(got[0].find("forbidden"), std::string::npos) << got[0];
  EXPECT_EQ(asked_, 2);
}

TEST_F(FrontGateTest, ABodyOverTheGatesLimitIsRefusedAtOnce) {
  Write("POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 10000001\r\n\r\n");
  std::vector<std::string> got = Read(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NE(got[0].find("payload_too_large"), std::string::npos) << got[0];
}

// A body that arrived whole with its head has been read already: the gate is not asked (the
// route's owner decides), and the body still counts against the bodies in flight.
TEST_F(FrontGateTest, ABodyThatCameWithItsHeadIsNotAsked) {
  Write("POST /x HTTP/1.1\r\nHost: x\r\nAuthorization: bad\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_EQ(Read(1), std::vector<std::string>{"backend:/x"});
  EXPECT_EQ(asked_, 0);
}

TEST_F(FrontGateTest, ABodilessRequestIsNotAsked) {
  Write("GET /x HTTP/1.1\r\nHost: x\r\nAuthorization: bad\r\n\r\n");
  EXPECT_EQ(Read(1), std::vector<std::string>{"backend:/x"});
  EXPECT_EQ(asked_, 0);
}

// A client that writes its whole body before it reads (Python's urllib, curl without Expect)
// reads the refusal: the front drains the declared body instead of resetting the connection.
TEST_F(FrontGateTest, AClientThatWritesItsWholeBodyFirstReadsTheRefusal) {
  constexpr size_t kBody = 12 * 1024 * 1024;  // over what the front drained before
  Write("POST /up HTTP/1.1\r\nHost: x\r\nAuthorization: bad\r\nContent-Length: " +
        std::to_string(kBody) + "\r\n\r\n");
  const std::string chunk(64 * 1024, 'x');
  for (size_t sent = 0; sent < kBody; sent += chunk.size()) {
    ASSERT_EQ(::send(client_, chunk.data(), chunk.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(chunk.size()))
        << "the front reset the connection after " << sent << " bytes";
  }
  std::string answer = ReadAll(client_);
  EXPECT_NE(answer.find("HTTP/1.1 401"), std::string::npos) << answer.substr(0, 200);
}

TEST_F(FrontGateTest, ExpectContinueIsAnsweredOnceTheBodyIsAdmitted) {
  Write("POST /up HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n");
  char buf[64] = {0};
  ssize_t got = ::recv(client_, buf, sizeof buf - 1, 0);
  ASSERT_GT(got, 0);
  EXPECT_EQ(std::string(buf, static_cast<size_t>(got)), "HTTP/1.1 100 Continue\r\n\r\n");
  Write("hi");
  EXPECT_EQ(Read(1), std::vector<std::string>{"backend:/up"});
}

// Bodies in flight: 1,000 bytes for the edge, 600 per client address.
class FrontBudgetTest : public FrontGateTest {
 protected:
  void Budget(FrontOptions& options) override {
    options.max_body_bytes_in_flight = edge_budget_;
    options.max_body_bytes_in_flight_per_client = client_budget_;
  }
  size_t edge_budget_ = 1000;
  size_t client_budget_ = 600;
};

TEST_F(FrontBudgetTest, AClientOverItsShareOfBodiesInFlightIsToldToRetry) {
  HoldInBackend(500);
  const std::string request = "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 200\r\n\r\n";
  std::string answer = OnNewConnection(request);
  EXPECT_NE(answer.find("HTTP/1.1 429"), std::string::npos) << answer;
  EXPECT_NE(answer.find("too_many_request_bytes"), std::string::npos) << answer;
  EXPECT_NE(answer.find("Retry-After: "), std::string::npos) << answer;
  // Once the first is answered, its bytes are free again.
  backend_.Release();
  EXPECT_EQ(Read(1), std::vector<std::string>{"backend:/slow"});
  Write(request + std::string(200, 'b'));
  EXPECT_EQ(Read(1), std::vector<std::string>{"backend:/b"});
}

// Behind a trusted proxy each request counts against the client the proxy names, not the proxy.
class FrontProxyBudgetTest : public FrontBudgetTest {
 protected:
  void Budget(FrontOptions& options) override {
    edge_budget_ = 100000;
    FrontBudgetTest::Budget(options);
    options.trusted_proxies = {"127.0.0.1"};
  }
};

TEST_F(FrontProxyBudgetTest, EachForwardedClientHasItsOwnShare) {
  HoldInBackend(500, "X-Forwarded-For: 203.0.113.1\r\n");
  auto send_on_new = [&](const std::string& client, size_t length) {
    return OnNewConnection("POST /b HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: " + client +
                           "\r\nContent-Length: " + std::to_string(length) + "\r\n\r\n" +
                           std::string(length, 'b'));
  };
  // Another client behind the same proxy has its whole share...
  EXPECT_NE(send_on_new("203.0.113.2", 500).find("backend:/b"), std::string::npos);
  // ...while the first is over its own.
  EXPECT_NE(send_on_new("203.0.113.1", 200).find("too_many_request_bytes"), std::string::npos);
  backend_.Release();
  EXPECT_EQ(Read(1), std::vector<std::string>{"backend:/slow"});
}

class FrontEdgeBudgetTest : public FrontBudgetTest {
 protected:
  void Budget(FrontOptions& options) override {
    client_budget_ = 100000;
    FrontBudgetTest::Budget(options);
  }
};

TEST_F(FrontEdgeBudgetTest, TheEdgeOverItsBodiesInFlightIsUnavailable) {
  HoldInBackend(900);
  std::string answer =
      OnNewConnection("POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 200\r\n\r\n");
  EXPECT_NE(answer.find("HTTP/1.1 503"), std::string::npos) << answer;
  EXPECT_NE(answer.find("Retry-After: "), std::string::npos) << answer;
  backend_.Release();
  EXPECT_EQ(Read(1), std::vector<std::string>{"backend:/slow"});
}

}  // namespace
}  // namespace toolgate::edge
