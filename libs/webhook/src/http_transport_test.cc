#include "toolgate/webhook/http_transport.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "toolgate/base/crypto.h"
#include "toolgate/core/egress_policy.h"
#include "toolgate/webhook/signature.h"

namespace toolgate::webhook {
namespace {

// A loopback HTTP server answering every request with one fixed response, one request per
// connection, keeping each request's head and body.
class Receiver {
 public:
  explicit Receiver(std::string response) : response_(std::move(response)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(fd_, 16) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      std::perror("receiver");
      std::abort();
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Loop(); });
  }
  ~Receiver() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  void Loop() {
    for (;;) {
      const int conn = ::accept(fd_, nullptr, nullptr);
      if (conn < 0) return;
      std::string data;
      char buf[4096];
      for (;;) {
        const size_t head_end = data.find("\r\n\r\n");
        if (head_end != std::string::npos) {
          std::string head = data.substr(0, head_end);
          std::transform(head.begin(), head.end(), head.begin(),
                         [](unsigned char c) { return std::tolower(c); });
          const size_t at = head.find("content-length:");
          const size_t length = at == std::string::npos ? 0 : std::stoul(head.substr(at + 15));
          if (data.size() >= head_end + 4 + length) break;
        }
        const ssize_t n = ::read(conn, buf, sizeof buf);
        if (n <= 0) break;
        data.append(buf, static_cast<size_t>(n));
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back(data);
      }
      (void)!::write(conn, response_.data(), response_.size());
      ::close(conn);
    }
  }

  std::string response_;
  int fd_ = -1;
  int port_ = 0;
  std::mutex mu_;
  std::vector<std::string> requests_;
  std::thread thread_;
};

std::string Answer(int status, const std::string& extra_headers = "",
                   const std::string& body = "") {
  return "HTTP/1.1 " + std::to_string(status) +
         " X\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n" +
         extra_headers + "\r\n" + body;
}

// The value of header name (lower case) in a request's head.
std::string HeaderOf(const std::string& request, const std::string& name) {
  const std::string head = request.substr(0, request.find("\r\n\r\n"));
  size_t pos = 0;
  while ((pos = head.find("\r\n", pos)) != std::string::npos) {
    pos += 2;
    const size_t colon = head.find(':', pos);
    std::string key = head.substr(pos, colon - pos);
    std::transform(key.begin(), key.end(), key.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (key == name) {
      const size_t end = head.find("\r\n", colon);
      std::string value = head.substr(colon + 1, end - colon - 1);
      return value.substr(value.find_first_not_of(' '));
    }
  }
  return "";
}

class HttpTransportTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { InitCrypto(); }

  static HttpTransport::Options Options(bool allow_private) {
    HttpTransport::Options options;
    options.policy.allow_private_targets = allow_private;
    options.timeout_ms = 5'000;
    return options;
  }
};

TEST_F(HttpTransportTest, PostsTheBodySignedAsTheStandardSays) {
  Receiver receiver(Answer(204));
  HttpTransport transport(Options(/*allow_private=*/true));
  const std::string key = *SigningKey(NewSecret());
  const Request request{"http://127.0.0.1:" + std::to_string(receiver.port()) + "/hook", "msg_abc",
                        R"({"type":"x"})", key};
  const AttemptResult result = transport.Attempt(request, 1700000000);
  EXPECT_EQ(result.outcome, AttemptOutcome::kDelivered) << result.error;
  EXPECT_EQ(result.status, 204);
  ASSERT_EQ(receiver.requests().size(), 1u);
  const std::string got = receiver.requests()[0];
  EXPECT_TRUE(got.starts_with("POST /hook HTTP/1.1\r\n")) << got;
  EXPECT_EQ(HeaderOf(got, "content-type"), "application/json");
  EXPECT_EQ(HeaderOf(got, "webhook-id"), "msg_abc");
  EXPECT_EQ(HeaderOf(got, "webhook-timestamp"), "1700000000");
  const std::string body = got.substr(got.find("\r\n\r\n") + 4);
  EXPECT_EQ(body, R"({"type":"x"})");
  EXPECT_TRUE(Verify(key, "msg_abc", 1700000000, body, HeaderOf(got, "webhook-signature")));
}

TEST_F(HttpTransportTest, RefusesALoopbackTargetByDefaultWithoutSendingAnything) {
  Receiver receiver(Answer(200));
  HttpTransport transport(Options(/*allow_private=*/false));
  const std::string port = std::to_string(receiver.port());
  // An address literal is refused before any connection; a name resolving to the loopback when
  // it is connected to, so a name that resolved elsewhere earlier cannot rebind onto it.
  for (const std::string& url :
       {"https://127.0.0.1:" + port + "/", "https://localhost:" + port + "/",
        "http://127.0.0.1:" + port + "/"}) {
    const AttemptResult result = transport.Attempt(Request{url, "msg_1", "{}", "key"}, 1);
    EXPECT_EQ(result.outcome, AttemptOutcome::kRefused) << url << ": " << result.error;
  }
  const AttemptResult by_name =
      transport.Attempt(Request{"https://localhost:" + port + "/", "msg_1", "{}", "key"}, 1);
  EXPECT_EQ(by_name.error, "the endpoint's address is not allowed: loopback address");
  EXPECT_TRUE(receiver.requests().empty());
}

TEST_F(HttpTransportTest, DoesNotFollowARedirect) {
  Receiver target(Answer(200));
  Receiver redirect(
      Answer(307, "Location: http://127.0.0.1:" + std::to_string(target.port()) + "/\r\n"));
  HttpTransport transport(Options(/*allow_private=*/true));
  const AttemptResult result = transport.Attempt(
      Request{"http://127.0.0.1:" + std::to_string(redirect.port()) + "/", "m", "{}", "k"}, 1);
  EXPECT_EQ(result.outcome, AttemptOutcome::kRejected);
  EXPECT_EQ(result.status, 307);
  EXPECT_TRUE(target.requests().empty());
}

TEST_F(HttpTransportTest, ReadsNoMoreOfTheAnswerThanItsBound) {
  Receiver receiver(Answer(200, "", std::string(1 << 20, 'x')));
  HttpTransport::Options options = Options(/*allow_private=*/true);
  options.max_response_bytes = 1024;
  HttpTransport transport(options);
  const AttemptResult result = transport.Attempt(
      Request{"http://127.0.0.1:" + std::to_string(receiver.port()) + "/", "m", "{}", "k"}, 1);
  EXPECT_EQ(result.outcome, AttemptOutcome::kDelivered) << result.error;
  EXPECT_EQ(result.status, 200);
}

TEST_F(HttpTransportTest, AFailedConnectionIsANetworkError) {
  int port = 0;
  {
    Receiver closed(Answer(200));
    port = closed.port();
  }  // nothing listens there any more
  HttpTransport transport(Options(/*allow_private=*/true));
  const AttemptResult result = transport.Attempt(
      Request{"http://127.0.0.1:" + std::to_string(port) + "/", "m", "{}", "k"}, 1);
  EXPECT_EQ(result.outcome, AttemptOutcome::kNetworkError);
  EXPECT_EQ(result.status, 0);
}

TEST_F(HttpTransportTest, A5xxIsRetryable) {
  Receiver receiver(Answer(503));
  HttpTransport transport(Options(/*allow_private=*/true));
  const AttemptResult result = transport.Attempt(
      Request{"http://127.0.0.1:" + std::to_string(receiver.port()) + "/", "m", "{}", "k"}, 1);
  EXPECT_EQ(result.outcome, AttemptOutcome::kRetryableHttp);
  EXPECT_EQ(result.status, 503);
}

// The operator's egress rules as callbacks follow them, with the loopback opened and http
// allowed, as a deployment whose receivers run on this host would have them.
HttpTransport::Options LoopbackAllowed() {
  HttpTransport::Options options;
  options.policy.allow_http = true;
  options.policy.allowed_networks = {core::Cidr::Parse("127.0.0.1/32").value()};
  options.timeout_ms = 5'000;
  return options;
}

std::string LoopbackUrl(const Receiver& receiver, const std::string& host = "127.0.0.1") {
  return "http://" + host + ":" + std::to_string(receiver.port()) + "/hook";
}

TEST_F(HttpTransportTest, ReachesALoopbackReceiverInsideAnAllowedNetwork) {
  Receiver receiver(Answer(204));
  HttpTransport transport(LoopbackAllowed());
  const AttemptResult result =
      transport.Attempt(Request{LoopbackUrl(receiver), "msg_1", "{}", "key"}, 1);
  EXPECT_EQ(result.outcome, AttemptOutcome::kDelivered) << result.error;
  EXPECT_EQ(result.status, 204);
  EXPECT_EQ(receiver.requests().size(), 1u);
}

TEST_F(HttpTransportTest, RefusesTheLoopbackReceiverOutsideTheAllowedNetworks) {
  Receiver receiver(Answer(204));
  // http allowed, the loopback not: refused before any connection.
  HttpTransport::Options http_only = LoopbackAllowed();
  http_only.policy.allowed_networks.clear();
  HttpTransport without_network(http_only);
  const AttemptResult by_literal =
      without_network.Attempt(Request{LoopbackUrl(receiver), "msg_1", "{}", "key"}, 1);
  EXPECT_EQ(by_literal.outcome, AttemptOutcome::kRefused) << by_literal.error;
  // A name resolving to the loopback is refused when it is connected to.
  const AttemptResult by_name =
      without_network.Attempt(Request{LoopbackUrl(receiver, "localhost"), "msg_1", "{}", "k"}, 1);
  EXPECT_EQ(by_name.outcome, AttemptOutcome::kRefused) << by_name.error;
  EXPECT_EQ(by_name.error, "the endpoint's address is not allowed: loopback address");
  // The network allowed, http not.
  HttpTransport::Options https_only = LoopbackAllowed();
  https_only.policy.allow_http = false;
  HttpTransport without_http(https_only);
  const AttemptResult by_scheme =
      without_http.Attempt(Request{LoopbackUrl(receiver), "msg_1", "{}", "key"}, 1);
  EXPECT_EQ(by_scheme.outcome, AttemptOutcome::kRefused) << by_scheme.error;
  EXPECT_EQ(by_scheme.error, "the URL must be an https URL");
  EXPECT_TRUE(receiver.requests().empty());
}

TEST_F(HttpTransportTest, RefusesAReceiverWhosePortIsADeniedEndpoint) {
  Receiver platform(Answer(200));  // stands for the edge or Redis on this host
  Receiver tenant(Answer(204));
  HttpTransport::Options options = LoopbackAllowed();
  options.policy.allowed_networks.push_back(core::Cidr::Parse("::1/128").value());
  options.policy.denied_endpoints = {
      {core::IpAddress::Parse("127.0.0.1").value(), static_cast<uint16_t>(platform.port())}};
  HttpTransport transport(options);
  // Named by its address: refused with the URL.
  const AttemptResult by_literal =
      transport.Attempt(Request{LoopbackUrl(platform), "msg_1", "{}", "key"}, 1);
  EXPECT_EQ(by_literal.outcome, AttemptOutcome::kRefused) << by_literal.error;
  EXPECT_EQ(by_literal.error, "the URL must not name the platform's own endpoint");
  // Named by a name: refused in the socket callback, on the port curl was about to connect to.
  const AttemptResult by_name =
      transport.Attempt(Request{LoopbackUrl(platform, "localhost"), "msg_1", "{}", "key"}, 1);
  EXPECT_EQ(by_name.outcome, AttemptOutcome::kRefused) << by_name.error;
  EXPECT_EQ(by_name.error, "the endpoint's address is not allowed: the platform's own endpoint");
  EXPECT_TRUE(platform.requests().empty());
  // The same name on another port is reached.
  const AttemptResult other_port =
      transport.Attempt(Request{LoopbackUrl(tenant, "localhost"), "msg_1", "{}", "key"}, 1);
  EXPECT_EQ(other_port.outcome, AttemptOutcome::kDelivered) << other_port.error;
  EXPECT_EQ(tenant.requests().size(), 1u);
}

TEST_F(HttpTransportTest, SignsWithBothKeysDuringARotation) {
  Receiver receiver(Answer(204));
  HttpTransport transport(LoopbackAllowed());
  const std::string current = *SigningKey(NewSecret());
  const std::string previous = *SigningKey(NewSecret());
  Request request{LoopbackUrl(receiver), "msg_rotated", R"({"status":"succeeded"})", current};
  request.previous_signing_key = previous;
  const AttemptResult result = transport.Attempt(request, 1700000000);
  EXPECT_EQ(result.outcome, AttemptOutcome::kDelivered) << result.error;
  ASSERT_EQ(receiver.requests().size(), 1u);
  const std::string got = receiver.requests()[0];
  const std::string body = got.substr(got.find("\r\n\r\n") + 4);
  const std::string header = HeaderOf(got, "webhook-signature");
  const size_t space = header.find(' ');
  ASSERT_NE(space, std::string::npos) << header;
  const std::string first = header.substr(0, space);
  const std::string second = header.substr(space + 1);
  EXPECT_TRUE(first.starts_with("v1,")) << header;
  EXPECT_TRUE(second.starts_with("v1,")) << header;
  EXPECT_EQ(second.find(' '), std::string::npos) << header;
  // The current key's signature first, the previous key's second.
  EXPECT_TRUE(Verify(current, "msg_rotated", 1700000000, body, first));
  EXPECT_TRUE(Verify(previous, "msg_rotated", 1700000000, body, second));
  EXPECT_FALSE(Verify(current, "msg_rotated", 1700000000, body, second));
  EXPECT_FALSE(Verify(previous, "msg_rotated", 1700000000, body, first));
  // A receiver holding either secret accepts the header as sent.
  EXPECT_TRUE(Verify(current, "msg_rotated", 1700000000, body, header));
  EXPECT_TRUE(Verify(previous, "msg_rotated", 1700000000, body, header));
}

TEST_F(HttpTransportTest, SignsOnceWithoutAPreviousKey) {
  Receiver receiver(Answer(204));
  HttpTransport transport(LoopbackAllowed());
  const std::string key = *SigningKey(NewSecret());
  const AttemptResult result =
      transport.Attempt(Request{LoopbackUrl(receiver), "msg_one", "{}", key}, 1700000000);
  EXPECT_EQ(result.outcome, AttemptOutcome::kDelivered) << result.error;
  ASSERT_EQ(receiver.requests().size(), 1u);
  const std::string header = HeaderOf(receiver.requests()[0], "webhook-signature");
  EXPECT_EQ(header.find(' '), std::string::npos) << header;
  EXPECT_TRUE(Verify(key, "msg_one", 1700000000, "{}", header));
}

}  // namespace
}  // namespace toolgate::webhook
