#include "toolgate/core/admin_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "toolgate/metrics/metrics.h"

namespace toolgate::core {
namespace {

// Sends one raw request to the server and returns everything it answered.
std::string Fetch(int port, const std::string& request) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(::send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
    out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

std::string Get(int port, const std::string& path) {
  return Fetch(port, "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
}

TEST(AdminServerTest, ServesMetricsHealthAndReadiness) {
  auto server = AdminServer::Start("127.0.0.1", 0);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  int port = (*server)->port();
  ASSERT_GT(port, 0);
  EXPECT_EQ((*server)->url(), "http://127.0.0.1:" + std::to_string(port));

  metrics::Registry::Global().Counter("admin_test_total", "A test counter.").With({}).Inc(3);
  std::string metrics = Get(port, "/metrics");
  EXPECT_EQ(metrics.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << metrics;
  EXPECT_NE(metrics.find("Content-Type: text/plain; version=0.0.4"), std::string::npos);
  EXPECT_NE(metrics.find("\r\n\r\n# HELP"), std::string::npos);
  EXPECT_NE(metrics.find("\nadmin_test_total 3\n"), std::string::npos) << metrics;

  EXPECT_EQ(Get(port, "/healthz").rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  EXPECT_EQ(Get(port, "/readyz?verbose=1").rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  {
    ReadinessCheck store("store", [] { return Status::Unavailable("store away"); });
    std::string ready = Get(port, "/readyz");
    EXPECT_EQ(ready.rfind("HTTP/1.1 503 ", 0), 0u) << ready;
    EXPECT_NE(ready.find("store: "), std::string::npos) << ready;
  }
  // The check ended with its owner.
  EXPECT_EQ(Get(port, "/readyz").rfind("HTTP/1.1 200 OK\r\n", 0), 0u);

  EXPECT_EQ(Get(port, "/").rfind("HTTP/1.1 404 ", 0), 0u);
  EXPECT_EQ(Fetch(port, "POST /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 405 ", 0), 0u);
  EXPECT_EQ(Fetch(port, "nonsense\r\n\r\n").rfind("HTTP/1.1 400 ", 0), 0u);
}

TEST(AdminServerTest, DrainingIsNotReady) {
  EXPECT_EQ(AnswerAdmin({"GET", "/readyz"}).status, 200);
  MarkDraining();
  AdminResponse r = AnswerAdmin({"GET", "/readyz"});
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.body.find("draining"), std::string::npos);
  EXPECT_EQ(AnswerAdmin({"GET", "/healthz"}).status, 200);
}

TEST(AdminServerTest, RefusesABadAddress) {
  EXPECT_FALSE(AdminServer::Start("localhost", 0).ok());
  EXPECT_FALSE(AdminServer::Start("127.0.0.1", 70000).ok());
}

TEST(AdminServerTest, ParsesTheRequestLine) {
  auto r = ParseAdminRequest("HEAD /metrics?x=1 HTTP/1.0\r\n\r\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->method, "HEAD");
  EXPECT_EQ(r->path, "/metrics");
  EXPECT_FALSE(ParseAdminRequest("GET /metrics\r\n\r\n").ok());
}

}  // namespace
}  // namespace toolgate::core
