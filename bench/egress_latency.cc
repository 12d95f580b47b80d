// What the egress gateway adds to one outbound request: the same HTTP GET to a loopback upstream,
// made directly and through a gateway door (absolute-form, as a handler's client sends it),
// alternately so that both see the same machine. Each request is a new connection, as through
// the gateway. Prints p50, p90 and p99 of each way and the difference at p50.
//
//   bench_egress_latency [requests=5000]
//   bench_egress_latency --serve   prints "<upstream port> <door port>" and serves both until its
//                                  standard input closes (bench/egress.sh points curl at them)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "toolgate/base/time.h"
#include "toolgate/executor/egress_gateway.h"

using namespace toolgate;
using namespace toolgate::executor;

namespace {

constexpr char kAnswer[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";

int Listen(int& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd, 128) != 0) {
    std::perror("upstream");
    std::exit(1);
  }
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  port = ntohs(address.sin_port);
  return fd;
}

// The upstream: answers each connection's request head with kAnswer and closes it.
void Serve(int listen_fd) {
  for (;;) {
    int fd = ::accept(listen_fd, nullptr, nullptr);
    if (fd < 0) return;
    std::string head;
    char buf[4096];
    while (head.find("\r\n\r\n") == std::string::npos) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      head.append(buf, static_cast<size_t>(n));
    }
    (void)!::write(fd, kAnswer, sizeof kAnswer - 1);
    ::close(fd);
  }
}

// One request on a new connection to port; microseconds until the answer's end.
int64_t Request(int port, const std::string& request) {
  const int64_t start = MonotonicUs();
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    std::perror("connect");
    std::exit(1);
  }
  (void)!::write(fd, request.data(), request.size());
  std::string answer;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) answer.append(buf, static_cast<size_t>(n));
  ::close(fd);
  if (answer != kAnswer) {
    std::fprintf(stderr, "unexpected answer: %s\n", answer.c_str());
    std::exit(1);
  }
  return MonotonicUs() - start;
}

int64_t Percentile(std::vector<int64_t> values, double p) {
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(p * static_cast<double>(values.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  const bool serve = argc > 1 && std::string(argv[1]) == "--serve";
  const int requests = argc > 1 && !serve ? std::atoi(argv[1]) : 5000;
  int port = 0;
  int listen_fd = Listen(port);
  std::thread upstream(Serve, listen_fd);
  upstream.detach();

  EgressOptions options;
  options.allow_cidrs = {*core::Cidr::Parse("127.0.0.1/32")};
  auto gateway = EgressGateway::Start(options);
  if (!gateway.ok()) return std::fprintf(stderr, "%s\n", gateway.status().ToString().c_str()), 1;
  auto door = (*gateway)->OpenDoorOnLoopback();
  if (!door.ok()) return std::fprintf(stderr, "%s\n", door.status().ToString().c_str()), 1;
  const std::string authority = "127.0.0.1:" + std::to_string(port);
  auto list = core::EgressList::Parse({authority});

  if (serve) {
    (*door)->BeginCall(*list, MonotonicUs() + int64_t{3600} * 1000000);
    std::printf("%d %d\n", port, (*door)->port());
    std::fflush(stdout);
    char c;
    while (::read(0, &c, 1) > 0) {
    }
    (*door)->EndCall();
    door->reset();
    return 0;
  }
  const std::string direct = "GET /hello HTTP/1.1\r\nHost: " + authority + "\r\n\r\n";
  const std::string proxied =
      "GET http://" + authority + "/hello HTTP/1.1\r\nHost: " + authority + "\r\n\r\n";
  std::vector<int64_t> direct_us, gateway_us;
  (*door)->BeginCall(*list, MonotonicUs() + int64_t{3600} * 1000000);
  for (int i = 0; i < requests + 100; ++i) {
    int64_t a = Request(port, direct);
    int64_t b = Request((*door)->port(), proxied);
    if (i < 100) continue;  // warm-up
    direct_us.push_back(a);
    gateway_us.push_back(b);
    if (i % 1000 == 0) {  // one call's records stay small
      (*door)->EndCall();
      (*door)->BeginCall(*list, MonotonicUs() + int64_t{3600} * 1000000);
    }
  }
  (*door)->EndCall();
  std::printf("requests each way: %d (new connection each)\n", requests);
  std::printf("| | p50 | p90 | p99 |\n|---|---|---|---|\n");
  std::printf("| direct | %lld µs | %lld µs | %lld µs |\n",
              static_cast<long long>(Percentile(direct_us, 0.5)),
              static_cast<long long>(Percentile(direct_us, 0.9)),
              static_cast<long long>(Percentile(direct_us, 0.99)));
  std::printf("| through the gateway | %lld µs | %lld µs | %lld µs |\n",
              static_cast<long long>(Percentile(gateway_us, 0.5)),
              static_cast<long long>(Percentile(gateway_us, 0.9)),
              static_cast<long long>(Percentile(gateway_us, 0.99)));
  std::printf("gateway added at p50: %lld µs\n",
              static_cast<long long>(Percentile(gateway_us, 0.5) - Percentile(direct_us, 0.5)));
  door->reset();
  return 0;
}
