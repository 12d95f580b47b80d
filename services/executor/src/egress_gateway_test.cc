#include "toolgate/executor/egress_gateway.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <future>
#include <thread>

#include "toolgate/base/time.h"
#include "toolgate/executor/process_runtime.h"

namespace toolgate::executor {
namespace {

using core::Cidr;
using core::EgressList;
using core::IpAddress;

// A real upstream on 127.0.0.1: accepts one connection and hands it to serve, on a thread.
class Upstream {
 public:
  explicit Upstream(std::function<void(int)> serve) {
    listen_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(listen_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    EXPECT_EQ(::listen(listen_, 8), 0);
    socklen_t length = sizeof address;
    ::getsockname(listen_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this, serve = std::move(serve)] {
      int fd = ::accept(listen_, nullptr, nullptr);
      if (fd < 0) return;
      accepted_.set_value();
      serve(fd);
      ::close(fd);
    });
  }
  ~Upstream() {
    ::shutdown(listen_, SHUT_RDWR);
    thread_.join();
    ::close(listen_);
  }
  int port() const { return port_; }
  // Set once a connection arrived (never when nothing connected).
  std::future<void> accepted() { return accepted_.get_future(); }

 private:
  int listen_ = -1;
  int port_ = 0;
  std::promise<void> accepted_;
  std::thread thread_;
};

// Reads from fd until the end of an HTTP head (or EOF).
std::string ReadHead(int fd) {
  std::string head;
  char c;
  while (head.find("\r\n\r\n") == std::string::npos && ::read(fd, &c, 1) == 1) head.push_back(c);
  return head;
}

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    data.remove_prefix(static_cast<size_t>(n));
  }
}

int ConnectTo(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  return fd;
}

// Sends request through door and returns everything the gateway answered.
std::string Exchange(EgressDoor& door, const std::string& request) {
  int fd = ConnectTo(door.port());
  WriteAll(fd, request);
  std::string answer = ReadAll(fd);
  ::close(fd);
  return answer;
}

EgressList List(std::vector<std::string> entries) {
  auto list = EgressList::Parse(entries);
  EXPECT_TRUE(list.ok()) << list.status().ToString();
  return *list;
}

Cidr Net(const char* text) {
  return *Cidr::Parse(text);
}

std::unique_ptr<EgressGateway> Gateway(EgressOptions options) {
  auto gateway = EgressGateway::Start(std::move(options));
  EXPECT_TRUE(gateway.ok()) << gateway.status().ToString();
  return std::move(*gateway);
}

// Options that let tests reach their loopback upstream, as an operator's allow CIDR would, and
// as if 127.0.0.1 were another host's address (no allow list opens the host's own).
EgressOptions LoopbackAllowed() {
  EgressOptions options;
  options.allow_cidrs = {Net("127.0.0.1/32")};
  options.is_host_address = [](const IpAddress&) { return false; };
  return options;
}

int64_t Later(int64_t ms) {
  return MonotonicUs() + ms * 1000;
}

constexpr char kAnswer[] = "HTTP/1.1 201 Created\r\nContent-Length: 5\r\n\r\nhello";

TEST(EgressGatewayTest, ForwardsAnAbsoluteFormRequestInOriginForm) {
  std::promise<std::string> seen;
  Upstream upstream([&](int fd) {
    seen.set_value(ReadHead(fd));
    WriteAll(fd, kAnswer);
  });
  auto gateway = Gateway(LoopbackAllowed());
  auto door = gateway->OpenDoorOnLoopback();
  ASSERT_TRUE(door.ok()) << door.status().ToString();
  const std::string authority = "127.0.0.1:" + std::to_string(upstream.port());
  (*door)->BeginCall(List({authority}), Later(10000));
  std::string answer =
      Exchange(**door, "GET http://" + authority + "/path?secret=1 HTTP/1.1\r\nHost: " + authority +
                           "\r\nProxy-Connection: keep-alive\r\nX-A: b\r\n\r\n");
  EXPECT_EQ(answer, kAnswer);
  std::string head = seen.get_future().get();
  EXPECT_TRUE(head.starts_with("GET /path?secret=1 HTTP/1.1\r\n")) << head;
  EXPECT_NE(head.find("Host: " + authority + "\r\n"), std::string::npos) << head;
  EXPECT_NE(head.find("X-A: b\r\n"), std::string::npos) << head;
  EXPECT_NE(head.find("Connection: close\r\n"), std::string::npos) << head;
  EXPECT_EQ(head.find("Proxy-Connection"), std::string::npos) << head;

  CallEgress call = (*door)->EndCall();
  ASSERT_EQ(call.requests.size(), 1u);
  const EgressRecord& r = call.requests[0];
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.host, "127.0.0.1");
  EXPECT_EQ(r.port, upstream.port());
  EXPECT_EQ(r.address, "127.0.0.1");
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(r.refused, "");
  EXPECT_EQ(r.bytes_received, static_cast<int64_t>(sizeof kAnswer - 1));
  EXPECT_EQ(r.bytes_sent, static_cast<int64_t>(head.size()));
  EXPECT_EQ(call.bytes, r.bytes_sent + r.bytes_received);
}

TEST(EgressGatewayTest, TunnelsConnectWithoutLookingInside) {
  Upstream upstream([](int fd) {
    char buf[64];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) WriteAll(fd, "echo:" + std::string(buf, static_cast<size_t>(n)));
  });
  auto gateway = Gateway(LoopbackAllowed());
  auto door = gateway->OpenDoorOnLoopback();
  ASSERT_TRUE(door.ok());
  const std::string authority = "127.0.0.1:" + std::to_string(upstream.port());
  (*door)->BeginCall(List({authority}), Later(10000));
  int fd = ConnectTo((*door)->port());
  WriteAll(fd, "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n");
  EXPECT_EQ(ReadHead(fd), "HTTP/1.1 200 Connection Established\r\n\r\n");
  WriteAll(fd, "\x16\x03\x01 not http");
  EXPECT_EQ(ReadAll(fd), "echo:\x16\x03\x01 not http");
  ::close(fd);
  CallEgress call = (*door)->EndCall();
  ASSERT_EQ(call.requests.size(), 1u);
  EXPECT_EQ(call.requests[0].method, "CONNECT");
  EXPECT_EQ(call.requests[0].status, 0);
  EXPECT_EQ(call.requests[0].bytes_sent, 12);
  EXPECT_EQ(call.requests[0].bytes_received, 17);
}

TEST(EgressGatewayTest, RefusesAHostNotInTheList) {
  Upstream upstream([](int) {});
  auto accepted = upstream.accepted();
  auto gateway = Gateway(LoopbackAllowed());
  auto door = gateway->OpenDoorOnLoopback();
  ASSERT_TRUE(door.ok());
  (*door)->BeginCall(List({"api.example.com"}), Later(10000));
  const std::string authority = "127.0.0.1:" + std::to_string(upstream.port());
  std::string answer = Exchange(**door, "GET http://" + authority + "/ HTTP/1.1\r\n\r\n");
  const std::string message = authority + " is not in this version's egress list";
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 403 Forbidden\r\n")) << answer;
  EXPECT_NE(answer.find("\r\nX-Toolgate-Egress-Refused: " + message + "\r\n"), std::string::npos)
      << answer;
  EXPECT_TRUE(answer.ends_with("\r\n\r\n" + message)) << answer;
  CallEgress call = (*door)->EndCall();
  ASSERT_EQ(call.requests.size(), 1u);
  EXPECT_EQ(call.requests[0].refused, "not in the egress list");
  EXPECT_EQ(call.requests[0].address, "");
  EXPECT_EQ(call.bytes, 0);
  EXPECT_EQ(accepted.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
}

TEST(EgressGatewayTest, RefusesANameThatResolvesToLoopback) {
  Upstream upstream([](int) {});
  auto gateway = Gateway(EgressOptions());  // nothing allowed beyond public addresses
  auto door = gateway->OpenDoorOnLoopback();
  ASSERT_TRUE(door.ok());
  (*door)->BeginCall(List({"localhost:" + std::to_string(upstream.port())}), Later(10000));
  std::string answer = Exchange(
      **door, "GET http://localhost:" + std::to_string(upstream.port()) + "/ HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 403 Forbidden\r\n")) << answer;
  // localhost may resolve to ::1 first; either way the loopback class refuses it.
  EXPECT_NE(answer.find("X-Toolgate-Egress-Refused: egress to "), std::string::npos) << answer;
  EXPECT_NE(answer.find(" is blocked: loopback address\r\n"), std::string::npos) << answer;
  CallEgress call = (*door)->EndCall();
  ASSERT_EQ(call.requests.size(), 1u);
  EXPECT_EQ(call.requests[0].refused, "loopback address");
}

TEST(EgressGatewayTest, RefusesBlockedLiteralsOverConnectToo) {
  auto gateway = Gateway(EgressOptions());
  auto door = gateway->OpenDoorOnLoopback();
  ASSERT_TRUE(door.ok());
  (*door)->BeginCall(List({"*"}), Later(10000));
  for (auto [target, message] : std::vector<std::pair<std::string, std::string>>{
           {"10.0.0.5:443", "egress to 10.0.0.5 is blocked: private address"},
           {"169.254.169.254:80", "egress to 169.254.169.254 is blocked: cloud metadata address"},
           {"[::ffff:127.0.0.1]:443", "egress to ::ffff:127.0.0.1 is blocked: loopback address"},
           {"[fd00::1]:443", "egress to fd00::1 is blocked: unique-local address"}}) {
    std::string answer = Exchange(**door, "CONNECT " + target + " HTTP/1.1\r\n\r\n");
    EXPECT_NE(answer.find("X-Toolgate-Egress-Refused: " + message + "\r\n"), std::string::npos)
        << target << ": " << answer;
  }
  EXPECT_EQ((*door)->EndCall().requests.size(), 4u);
}

TEST(EgressGatewayTest, PlatformAddressRefusedEvenWhenAllowed) {
  Upstream upstream([](int) {});
  EgressOptions options = LoopbackAllowed();
  options.deny_endpoints = {{*IpAddress::Parse("127.0.0.1"), upstream.port()}};
  auto gateway = Gateway(options);
  auto door = gateway->OpenDoorOnLoopback();
  ASSERT_TRUE(door.ok());
  const std::string authority = "127.0.0.1:" + std::to_string(upstream.port());
  (*door)->BeginCall(List({authority}), Later(10000));
  std::string answer = Exchange(**door, "CONNECT " + authority + " HTTP/1.1\r\n\r\n");
  EXPECT_NE(answer.find("X-Toolgate-Egress-Refused: egress to " + authority +
                        " is blocked: a platform address\r\n"),
            std::string::npos)
      << answer;
}

// A name server under the attacker's control answers a public-looking address first and a
// private one afterwards (DNS rebinding): the gateway asks once and connects to what it checked.
TEST(EgressGatewayTest, ResolvesOnceAndConnectsOnlyToTheCheckedAddress) {
  Upstream upstream([](int fd) {
    ReadHead(fd);
    WriteAll(fd, kAnswer);
  });
  std::atomic<int> asked{0};
  EgressOptions options = LoopbackAllowed();
  options.resolve = [&asked](const std::string& name) -> Result<std::vector<IpAddress>> {
    if (name != "rebind.test") return Status::Unavailable("unknown name");
    return std::vector<IpAddress>{*IpAddress::Parse(asked++ == 0 ? "127.0.0.1" : "10.0.0.5")};
  };
  auto gateway = Gateway(options);
  auto door = gateway->OpenDoorOnLoopback();
  ASSERT_TRUE(door.ok());
  const std::string authority = "rebind.test:" + std::to_string(upstream.port());
  (*door)->BeginCall(List({authority}), Later(10000));
  std::string answer = Exchange(**door, "GET http://" + authority + "/ HTTP/1.1\r\n\r\n");
  EXPECT_EQ(answer, kAnswer);
  EXPECT_EQ(asked.load(), 1);
  CallEgress call = (*door)->EndCall();
  ASSERT_EQ(call.requests.size(), 1u);
  EXPECT_EQ(call.requests[0].host, "rebind.test");
  EXPECT_EQ(call.requests[0].address, "127.0.0.1");
}

// A name with an allowed and a private address is refused, whichever comes first.
TEST(EgressGatewayTest, EveryResolvedAddressMustPass) {
  Upstream upstream([](int) {});
  auto accepted = upstream.accepted();
  EgressOptions options = LoopbackAllowed();
  options.resolve = [](const std::string&) -> Result<std::vector<IpAddress>> {
    return std::vector<IpAddress>{*IpAddress::Parse("127.0.0.1"), *IpAddress::Parse("10.0.0.5")};
  };
  auto gateway = Gateway(options);
  auto door = gateway->OpenDoorOnLoopback();
  ASSERT_TRUE(door.ok());
  const std::string authority = "mixed.test:" + std::to_string(upstream.port());
  (*door)->BeginCall(List({authority}), Later(10000));
  std::string answer = Exchange(**door, "CONNECT " + authority + " HTTP/1.1\r\n\r\n");
  EXPECT_NE(answer.find("X-Toolgate-Egress-Refused: egress to 10.0.0.5 is blocked: private "
                        "address\r\n"),
            std::string::npos)
      << answer;
  EXPECT_EQ(accepted.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
}

TEST(EgressGatewayTest, AnUnresolvableNameIs502) {
  EgressOptions options;
  options.resolve = [](const std::string&) -> Result<std::vector<IpAddress>> {
    return Status::Unavailable("Name or service not known");
  };
  auto gateway = Gateway(options);
  auto door = gateway->OpenDoorOnLoopback();
  ASSERT_TRUE(door.ok());
  (*door)->BeginCall(List({"nowhere.test"}), Later(10000));
  std::string answer = Exchange(**door, "GET http://nowhere.test/ HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 502 Bad Gateway\r\n")) << answer;
  EXPECT_NE(answer.find("X-Toolgate-Egress-Error: cannot resolve nowhere.test: Name or service "
                        "not known\r\n"),
            std::string::npos)
      << answer;
}

// A hostile handler asks for names that never resolve, more of them than there are resolver
// threads: they queue behind each other, and another sandbox's name still resolves at once.
TEST(EgressGatewayTest, ASandboxsSlowNamesDoNotHoldUpAnothersResolution) {
  std::mutex mu;
  std::condition_variable changed;
  bool released = false;
  int slow_started = 0;
  EgressOptions options;
  options.resolver_threads = 2;
  options.resolve = [&](const std::string& name) -> Result<std::vector<IpAddress>> {
    if (name == "fast.test") return Status::Unavailable("answered");
    std::unique_lock lock(mu);
    ++slow_started;
    changed.notify_all();
    // Held until the other sandbox has its answer (or, when the gateway is unfair and that
    // never comes, until the test gives up, so that it fails instead of hanging).
    changed.wait_for(lock, std::chrono::seconds(30), [&] { return released; });
    return Status::Unavailable("slow");
  };
  auto gateway = Gateway(options);
  auto hostile = gateway->OpenDoorOnLoopback();
  auto other = gateway->OpenDoorOnLoopback();
  ASSERT_TRUE(hostile.ok() && other.ok());
  (*hostile)->BeginCall(List({"*"}), Later(60000));
  (*other)->BeginCall(List({"*"}), Later(60000));

  std::vector<int> slow;
  for (int i = 0; i < 3; ++i) {
    slow.push_back(ConnectTo((*hostile)->port()));
    WriteAll(slow.back(), "GET http://slow" + std::to_string(i) + ".test/ HTTP/1.1\r\n\r\n");
  }
  {
    std::unique_lock lock(mu);
    changed.wait_for(lock, std::chrono::seconds(30), [&] { return slow_started >= 1; });
  }
  std::string answer = Exchange(**other, "GET http://fast.test/ HTTP/1.1\r\n\r\n");
  bool answered_while_held;
  {
    std::lock_guard lock(mu);
    answered_while_held = !released;
    EXPECT_EQ(slow_started, 1) << "a door has one name on the resolver threads at a time";
    released = true;
  }
  changed.notify_all();
  EXPECT_TRUE(answered_while_held);
  EXPECT_NE(answer.find("cannot resolve fast.test: answered"), std::string::npos) << answer;
  for (int fd : slow) {
    EXPECT_NE(ReadAll(fd).find("cannot resolve slow"), std::string::npos);
    ::close(fd);
  }
  (*hostile)->EndCall();
  (*other)->EndCall();
}

TEST(EgressGatewayTest, RefusalOrderPlatformThenDenyThenAllowThenClasses) {
  EgressOptions options;
  options.allow_cidrs = {Net("10.0.0.0/8"), Net("192.168.1.0/24")};
  options.deny_cidrs = {Net("10.1.0.0/16"), Net("8.8.8.0/24")};
  options.deny_endpoints = {{*IpAddress::Parse("10.2.0.1"), 6379},
                            {*IpAddress::Parse("0.0.0.0"), 4222}};
  // The host's own: one address in an allowed CIDR, one public.
  options.is_host_address = [](const IpAddress& a) {
    return a == *IpAddress::Parse("192.168.1.7") || a == *IpAddress::Parse("93.184.216.40") ||
           a == *IpAddress::Parse("127.0.0.1");
  };
  auto gateway = Gateway(options);
  auto refusal = [&](const char* ip, int port) {
    return gateway->RefusalFor(*IpAddress::Parse(ip), port);
  };
  EXPECT_EQ(refusal("10.0.0.5", 443), "");                         // allow beats private
  EXPECT_EQ(refusal("10.1.2.3", 443), "blocked by the operator");  // deny beats allow
  EXPECT_EQ(refusal("8.8.8.8", 443), "blocked by the operator");   // deny beats public
  EXPECT_EQ(refusal("10.2.0.1", 6379), "a platform address");      // platform beats allow
  EXPECT_EQ(refusal("10.2.0.1", 6380), "");
  EXPECT_EQ(refusal("::ffff:10.2.0.1", 6379), "a platform address");
  EXPECT_EQ(refusal("93.184.216.34", 4222), "a platform address");  // 0.0.0.0: any address
  EXPECT_EQ(refusal("192.168.2.1", 443), "private address");
  EXPECT_EQ(refusal("127.0.0.1", 443), "loopback address");
  EXPECT_EQ(refusal("93.184.216.34", 443), "");
  // The host's own addresses, on any port, whatever the allow list says.
  EXPECT_EQ(refusal("192.168.1.7", 9464), "an address of this host");
  EXPECT_EQ(refusal("::ffff:192.168.1.7", 80), "an address of this host");
  EXPECT_EQ(refusal("192.168.1.8", 9464), "");
  EXPECT_EQ(refusal("93.184.216.40", 443), "an address of this host");
}

TEST(EgressGatewayTest, TheHostsAddressesAreItsInterfacesLoopbackAndUnspecified) {
  EXPECT_TRUE(IsThisHostsAddress(*IpAddress::Parse("127.0.0.1")));
  EXPECT_TRUE(IsThisHostsAddress(*IpAddress::Parse("127.3.4.5")));
  EXPECT_TRUE(IsThisHostsAddress(*IpAddress::Parse("::1")));
  EXPECT_TRUE(IsThisHostsAddress(*IpAddress::Parse("0.0.0.0")));
  EXPECT_TRUE(IsThisHostsAddress(*IpAddress::Parse("::")));
  EXPECT_FALSE(IsThisHostsAddress(*IpAddress::Parse("192.0.2.77")));  // documentation range
  // Every address an interface of this namespace has.
  ifaddrs* list = nullptr;
  ASSERT_EQ(::getifaddrs(&list), 0);
  int checked = 0;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    auto mine = IpAddress::FromSockaddr(i->ifa_addr, sizeof(sockaddr_in));
    ASSERT_TRUE(mine.has_value());
    EXPECT_TRUE(IsThisHostsAddress(*mine)) << mine->ToString();
    ++checked;
  }
  ::freeifaddrs(list);
  EXPECT_GT(checked, 0);
}

TEST(EgressGatewayTest, TurnedOffRefusesEverything) {
  EgressOptions options = LoopbackAllowed();
  options.enabled = false;
  auto gateway = Gateway(options);
  auto door = gateway->OpenDoorOnLoopback();
  ASSERT_TRUE(door.ok());
  (*door)->BeginCall(List({"*"}), Later(10000));
  std::string answer = Exchange(**door, "CONNECT example.com:443 HTTP/1.1\r\n\r\n");
  EXPECT_NE(answer.find("X-Toolgate-Egress-Refused: egress is turned off on this platform\r\n"),
            std::string::npos)
      << answer;
  CallEgress call = (*door)->EndCall();
  ASSERT_EQ(call.requests.size(), 1u);
  EXPECT_EQ(call.requests[0].refused, "egress turned off");
}

TEST(EgressGatewayTest, NothingPassesOutsideACall) {
  Upstream upstream([](int) {});
  auto accepted = upstream.accepted();
  auto gateway = Gateway(LoopbackAllowed());
  auto door = gateway->OpenDoorOnLoopback();
  ASSERT_TRUE(door.ok());
  const std::string authority = "127.0.0.1:" + std::to_string(upstream.port());
  (*door)->BeginCall(List({authority}), Later(10000));
  (*door)->EndCall();
  std::string answer = Exchange(**door, "CONNECT " + authority + " HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 403 Forbidden\r\n")) << answer;
  EXPECT_EQ(accepted.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
}

TEST(EgressGatewayTest, BadRequestsAreAnswered400) {
  auto gateway = Gateway(LoopbackAllowed());
  auto door = gateway->OpenDoorOnLoopback();
  ASSERT_TRUE(door.ok());
  (*door)->BeginCall(List({"*"}), Later(10000));
  for (const char* request :
       {"GET /origin-form HTTP/1.1\r\n\r\n", "GET https://example.com/ HTTP/1.1\r\n\r\n",
        "CONNECT example.com HTTP/1.1\r\n\r\n", "GET http://user@example.com/ HTTP/1.1\r\n\r\n",
        "GET http://exa\rmple.com/ HTTP/1.1\r\n\r\n", "hello\r\n\r\n"}) {
    std::string answer = Exchange(**door, request);
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 400 Bad Request\r\nX-Toolgate-Egress-Error: "))
        << request << " -> " << answer;
  }
}

// Request smuggling (RFC 9112, 6.1 and 6.3): the gateway relays a body without reading it, so
// a head that the gateway and the upstream could frame differently would let bytes the handler
// sent as a body reach the upstream as a request of their own. Such a head is answered 400 and
// nothing of it reaches the upstream: no connection is even made.
TEST(EgressGatewayTest, AHeadThatCouldBeFramedTwoWaysIsAnswered400AndNeverForwarded) {
  Upstream upstream([](int fd) { ReadAll(fd); });
  auto accepted = upstream.accepted();
  auto gateway = Gateway(LoopbackAllowed());
  auto door = gateway->OpenDoorOnLoopback();
  ASSERT_TRUE(door.ok());
  const std::string authority = "127.0.0.1:" + std::to_string(upstream.port());
  (*door)->BeginCall(List({authority}), Later(10000));
  const std::string post = "POST http://" + authority + "/ HTTP/1.1\r\nHost: " + authority + "\r\n";
  const std::string connect = "CONNECT " + authority + " HTTP/1.1\r\n";
  // The body a parser that honours Content-Length ends after "0\r\n\r\n" and one that honours
  // chunked ends at once: the rest is a second request to one of them.
  const std::string body = "0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: " + authority + "\r\n\r\n";
  const std::string both = "the request has both Transfer-Encoding and Content-Length";
  const std::string not_one = "the request's Content-Length is not one number";
  const std::string not_chunked = "a Transfer-Encoding other than chunked alone";
  for (const auto& [request, message] : std::vector<std::pair<std::string, std::string>>{
           {post + "Content-Length: 44\r\nTransfer-Encoding: chunked\r\n\r\n" + body, both},
           {post + "Transfer-Encoding: chunked\r\ncontent-length: 44\r\n\r\n" + body, both},
           {connect + "Content-Length: 44\r\nTransfer-Encoding: chunked\r\n\r\n" + body, both},
           {post + "Content-Length: 5\r\nContent-Length: 44\r\n\r\n" + body, not_one},
           {post + "Content-Length: 5, 44\r\n\r\n" + body, not_one},
           {post + "Content-Length: +44\r\n\r\n" + body, not_one},
           {post + "Transfer-Encoding: gzip\r\n\r\n" + body, not_chunked},
           {post + "Transfer-Encoding: chunked, identity\r\n\r\n" + body, not_chunked},
           {post + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n" + body,
            not_chunked},
           {"POST http://" + authority + "/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n" + body,
            "an HTTP/1.0 request cannot have a Transfer-Encoding"},
           {post + "Transfer-Encoding : chunked\r\n\r\n" + body,
            "the request has a header name that is not a token"},
           {post + "X-A: b\r\n Transfer-Encoding: chunked\r\n\r\n" + body,
            "the request has a folded header line (obs-fold)"},
           {post + "X-A: b\nTransfer-Encoding: chunked\r\n\r\n" + body,
            "the request's head has a bare CR, LF or NUL"},
           {post + "X-A: b\rTransfer-Encoding: chunked\r\n\r\n" + body,
            "the request's head has a bare CR, LF or NUL"},
           {post + "Transfer-Encoding chunked\r\n\r\n" + body,
            "the request has a header line without a colon"},
       }) {
    std::string answer = Exchange(**door, request);
    EXPECT_TRUE(answer.starts_with(
        "HTTP/1.1 400 Bad Request\r\nX-Toolgate-Egress-Error: " + message + "\r\n"))
        << request << " -> " << answer;
  }
  EXPECT_EQ(accepted.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  EXPECT_EQ((*door)->EndCall().bytes, 0);
}

// What the checks above leave alone: a body framed by chunked alone goes through as sent.
TEST(EgressGatewayTest, AChunkedBodyIsForwardedAsSent) {
  std::promise<std::string> seen;
  Upstream upstream([&](int fd) {
    std::string head = ReadHead(fd);
    char body[15];
    size_t got = 0;
    while (got < sizeof body) {
      ssize_t n = ::read(fd, body + got, sizeof body - got);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    seen.set_value(head + std::string(body, got));
    WriteAll(fd, kAnswer);
  });
  auto gateway = Gateway(LoopbackAllowed());
  auto door = gateway->OpenDoorOnLoopback();
  ASSERT_TRUE(door.ok());
  const std::string authority = "127.0.0.1:" + std::to_string(upstream.port());
  (*door)->BeginCall(List({authority}), Later(10000));
  std::string answer = Exchange(**door, "POST http://" + authority +
                                            "/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                                            "5\r\nhello\r\n0\r\n\r\n");
  EXPECT_EQ(answer, kAnswer);
  std::string request = seen.get_future().get();
  EXPECT_NE(request.find("\r\nTransfer-Encoding: chunked\r\n"), std::string::npos) << request;
  EXPECT_TRUE(request.ends_with("\r\n\r\n5\r\nhello\r\n0\r\n\r\n")) << request;
}

TEST(EgressGatewayTest, DeadlineAnswers504) {
  std::promise<void> release;
  Upstream upstream([&](int fd) {
    ReadHead(fd);
    release.get_future().wait();  // never answers until the test is done
  });
  auto gateway = Gateway(LoopbackAllowed());
  auto door = gateway->OpenDoorOnLoopback();
  ASSERT_TRUE(door.ok());
  const std::string authority = "127.0.0.1:" + std::to_string(upstream.port());
  (*door)->BeginCall(List({authority}), Later(200));
  std::string answer = Exchange(**door, "GET http://" + authority + "/slow HTTP/1.1\r\n\r\n");
  release.set_value();
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 504 Gateway Timeout\r\n")) << answer;
  EXPECT_NE(answer.find("X-Toolgate-Egress-Error: the call's deadline passed\r\n"),
            std::string::npos);
  // The call learns that its deadline cut a request (it is a timeout, whatever the handler
  // answers next); the next call starts clean.
  EXPECT_TRUE((*door)->EndCall().cut_at_deadline);
  (*door)->BeginCall(List({authority}), Later(10000));
  EXPECT_FALSE((*door)->EndCall().cut_at_deadline);
}

TEST(EgressGatewayTest, ByteLimitCutsTheCall) {
  Upstream upstream([](int fd) {
    ReadHead(fd);
    WriteAll(fd, "HTTP/1.1 200 OK\r\n\r\n" + std::string(1 << 20, 'x'));
  });
  EgressOptions options = LoopbackAllowed();
  options.max_bytes_per_call = 4096;
  auto gateway = Gateway(options);
  auto door = gateway->OpenDoorOnLoopback();
  ASSERT_TRUE(door.ok());
  const std::string authority = "127.0.0.1:" + std::to_string(upstream.port());
  (*door)->BeginCall(List({authority}), Later(10000));
  std::string answer = Exchange(**door, "GET http://" + authority + "/big HTTP/1.1\r\n\r\n");
  EXPECT_LT(answer.size(), size_t{1} << 20);
  CallEgress call = (*door)->EndCall();
  ASSERT_EQ(call.requests.size(), 1u);
  EXPECT_EQ(call.requests[0].refused, "over the call's egress byte limit");
}

TEST(EgressGatewayTest, EndCallClosesTheCallsConnections) {
  std::promise<void> release;
  Upstream upstream([&](int) { release.get_future().wait(); });
  auto gateway = Gateway(LoopbackAllowed());
  auto door = gateway->OpenDoorOnLoopback();
  ASSERT_TRUE(door.ok());
  const std::string authority = "127.0.0.1:" + std::to_string(upstream.port());
  (*door)->BeginCall(List({authority}), Later(60000));
  int fd = ConnectTo((*door)->port());
  WriteAll(fd, "CONNECT " + authority + " HTTP/1.1\r\n\r\n");
  EXPECT_EQ(ReadHead(fd), "HTTP/1.1 200 Connection Established\r\n\r\n");
  CallEgress call = (*door)->EndCall();
  EXPECT_EQ(call.requests.size(), 1u);
  EXPECT_EQ(ReadAll(fd), "");  // closed by the call's end, long before its deadline
  ::close(fd);
  release.set_value();
}

TEST(EgressGatewayTest, NoDoorInTheNamespaceOfAProcessThatIsGone) {
  auto gateway = Gateway(EgressOptions());
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  auto door = gateway->OpenDoorIn(child);
  ASSERT_FALSE(door.ok());
  EXPECT_EQ(door.status().code(), Status::Code::kInternal);
  EXPECT_NE(door.status().message().find("/ns/net"), std::string::npos) << door.status().message();
}

TEST(EgressGatewayTest, ProxyEnvironmentNamesTheDoor) {
  std::vector<std::string> env = EgressProxyEnv();
  for (const char* expected :
       {"HTTP_PROXY=http://127.0.0.1:3128", "HTTPS_PROXY=http://127.0.0.1:3128",
        "http_proxy=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128",
        "NO_PROXY=", "TOOLGATE_EGRESS_PROXY=127.0.0.1:3128"}) {
    EXPECT_NE(std::find(env.begin(), env.end(), expected), env.end()) << expected;
  }
}

// --- Through a real sandbox ---------------------------------------------------------------------
// A Python handler in a sandboxed worker whose only way out is its door: the upstream listens on
// the executor's loopback, which the sandbox's own loopback is not.

class EgressSandboxTest : public ::testing::Test {
 protected:
  EgressSandboxTest()
      : gateway_(Gateway(LoopbackAllowed())),
        pool_({.max_workers = 4, .spares_per_shape = 0, .upkeep_interval_ms = 0}),
        python_(Language::kPython, Config(gateway_.get()), RuntimeLimits{}, pool_, nullptr) {}

  static ProcessRuntimeConfig Config(EgressGateway* gateway) {
    ProcessRuntimeConfig config;
    config.runtime_dir = TOOLGATE_RUNTIME_DIR;
    config.egress = gateway;
    return config;
  }

  ExecutionOutcome Py(const std::string& code, const std::string& event, const EgressList& egress) {
    Invocation inv;
    inv.code = code;
    inv.event_json = event;
    inv.execution_id = "exec-1";
    inv.function_id = "fn-egress";
    inv.version = std::to_string(++version_);
    inv.caller_org_id = "org-a";
    inv.timeout_ms = 10000;
    inv.memory_mb = 256;
    inv.egress = &egress;
    return python_.Run(inv);
  }

  std::unique_ptr<EgressGateway> gateway_;  // outlives the pool's workers and their doors
  WorkerPool pool_;
  ProcessRuntime python_;
  int version_ = 0;
};

constexpr char kPyFetch[] = R"(import urllib.request, urllib.error
def service_handler(event, context):
    try:
        with urllib.request.urlopen(event["url"], timeout=5) as r:
            return {"status": r.status, "body": r.read().decode()}
    except urllib.error.HTTPError as e:
        return {"status": e.code, "refused": e.headers.get("X-Toolgate-Egress-Refused")}
)";

TEST_F(EgressSandboxTest, PythonUrllibReachesAnAllowedUpstreamThroughTheDoor) {
  Upstream upstream([](int fd) {
    ReadHead(fd);
    WriteAll(fd, kAnswer);
  });
  const std::string authority = "127.0.0.1:" + std::to_string(upstream.port());
  auto out =
      Py(kPyFetch, R"({"url":"http://)" + authority + R"(/q?token=s3cret"})", List({authority}));
  ASSERT_EQ(out.kind, ExecutionOutcome::Kind::kCompleted) << out.body << out.logs;
  EXPECT_EQ(out.body, R"({"status":201,"body":"hello"})") << out.logs;
  ASSERT_EQ(out.egress.requests.size(), 1u);
  EXPECT_EQ(out.egress.requests[0].status, 201);
  EXPECT_EQ(out.egress.requests[0].host, "127.0.0.1");
  EXPECT_GT(out.egress.bytes, 0);
}

TEST_F(EgressSandboxTest, PythonSeesTheRefusalAndItsRule) {
  Upstream upstream([](int) {});
  const std::string authority = "127.0.0.1:" + std::to_string(upstream.port());
  auto out = Py(kPyFetch, R"({"url":"http://)" + authority + R"(/"})", List({"api.example.com"}));
  EXPECT_EQ(out.body, R"({"status":403,"refused":")" + authority +
                          R"( is not in this version's egress list"})")
      << out.logs;
  ASSERT_EQ(out.egress.requests.size(), 1u);
  EXPECT_EQ(out.egress.requests[0].refused, "not in the egress list");
}

TEST_F(EgressSandboxTest, DirectSocketsStillFail) {
  Upstream upstream([](int) {});
  auto accepted = upstream.accepted();
  auto out = Py(R"(import socket
def service_handler(event, context):
    results = []
    for host in ["127.0.0.1", "10.200.0.1", "169.254.169.254"]:
        try:
            socket.create_connection((host, event["port"]), timeout=2).close()
            results.append("connected")
        except OSError as e:
            results.append(type(e).__name__)
    return results
)",
                R"({"port":)" + std::to_string(upstream.port()) + "}", List({"*"}));
  // The sandbox's own loopback has nothing on that port; nothing else has a route.
  EXPECT_EQ(out.body, R"(["ConnectionRefusedError","OSError","OSError"])") << out.logs;
  EXPECT_EQ(accepted.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  EXPECT_TRUE(out.egress.requests.empty());
}

}  // namespace
}  // namespace toolgate::executor
