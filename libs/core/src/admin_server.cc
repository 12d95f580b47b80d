#include "toolgate/core/admin_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "toolgate/base/log.h"
#include "toolgate/metrics/metrics.h"
#include "toolgate/net/http1.h"

namespace toolgate::core {
namespace {

struct Checks {
  // Held while checks run, so a ReadinessCheck's destructor waits for its check to finish.
  std::mutex mu;
  uint64_t next_id = 1;                                                        // guarded by mu
  std::map<uint64_t, std::pair<std::string, std::function<Status()>>> checks;  // guarded by mu
};

Checks& TheChecks() {
  static Checks* checks = new Checks();  // never destroyed: the admin thread may outlive main
  return *checks;
}

std::atomic<bool> g_draining{false};

}  // namespace

ReadinessCheck::ReadinessCheck(std::string name, std::function<Status()> check) {
  Checks& c = TheChecks();
  std::lock_guard lock(c.mu);
  id_ = c.next_id++;
  c.checks.emplace(id_, std::make_pair(std::move(name), std::move(check)));
}

ReadinessCheck::~ReadinessCheck() {
  Checks& c = TheChecks();
  std::lock_guard lock(c.mu);
  c.checks.erase(id_);
}

std::vector<std::pair<std::string, Status>> ReadinessCheck::RunAll() {
  Checks& c = TheChecks();
  std::lock_guard lock(c.mu);
  std::vector<std::pair<std::string, Status>> out;
  for (const auto& [id, check] : c.checks) out.emplace_back(check.first, check.second());
  return out;
}

void MarkDraining() {
  g_draining.store(true);
}
bool Draining() {
  return g_draining.load();
}

Result<AdminRequest> ParseAdminRequest(std::string_view head) {
  // What arrived may run past the blank line (a pipelined request): the head ends there.
  size_t end = head.find("\r\n\r\n");
  auto parsed =
      end == std::string_view::npos ? std::nullopt : net::ParseRequestHead(head.substr(0, end + 4));
  if (!parsed || parsed->version.rfind("HTTP/1.", 0) != 0) {
    return Status::InvalidArgument("not an HTTP/1 request head");
  }
  return AdminRequest{parsed->method, std::string(parsed->Path())};
}

AdminResponse AnswerAdmin(const AdminRequest& request) {
  AdminResponse out;
  if (request.path != "/metrics" && request.path != "/healthz" && request.path != "/readyz") {
    out.status = 404;
    out.body = "not found: try /metrics, /healthz or /readyz\n";
    return out;
  }
  if (request.method != "GET" && request.method != "HEAD") {
    out.status = 405;
    out.body = "GET only\n";
    return out;
  }
  if (request.path == "/metrics") {
    out.content_type = "text/plain; version=0.0.4; charset=utf-8";
    out.body = metrics::Registry::Global().Expose();
  } else if (request.path == "/healthz") {
    out.body = "ok\n";
  } else {
    bool ready = !Draining();
    if (!ready) out.body += "draining\n";
    for (const auto& [name, status] : ReadinessCheck::RunAll()) {
      ready = ready && status.ok();
      out.body += name + ": " + (status.ok() ? "ok" : status.ToString()) + "\n";
    }
    out.status = ready ? 200 : 503;
  }
  return out;
}

Result<std::unique_ptr<AdminServer>> AdminServer::Start(const std::string& address, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (port < 0 || port > 65535 || ::inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1) {
    return Status::InvalidArgument("admin address must be an IPv4 address and a port 0..65535");
  }
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  if (fd < 0 || ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 64) != 0) {
    std::string error = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return Status::Unavailable("cannot listen on " + address + ":" + std::to_string(port) + ": " +
                               error);
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int stop_fd = ::eventfd(0, EFD_CLOEXEC);
  if (stop_fd < 0) {
    ::close(fd);
    return Status::Internal("eventfd failed");
  }
  int bound = ntohs(addr.sin_port);
  return std::unique_ptr<AdminServer>(
      new AdminServer(fd, stop_fd, bound, "http://" + address + ":" + std::to_string(bound)));
}

AdminServer::AdminServer(int fd, int stop_fd, int port, std::string url)
    : fd_(fd), stop_fd_(stop_fd), port_(port), url_(std::move(url)) {
  thread_ = std::thread([this] { Loop(); });
}

AdminServer::~AdminServer() {
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(stop_fd_, &one, sizeof one);
  thread_.join();
  ::close(fd_);
  ::close(stop_fd_);
}

void AdminServer::Loop() {
  for (;;) {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      log::Error("admin port: poll failed").Str("error", std::strerror(errno));
      return;
    }
    if (fds[1].revents) return;
    int conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) continue;
    Serve(conn);
    ::close(conn);
  }
}

void AdminServer::Serve(int conn) {
  // A slow or silent client must not hold the port: the head has two seconds, the answer too.
  timeval tv{2, 0};
  ::setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(conn, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  std::string head;
  char buf[2048];
  while (head.find("\r\n\r\n") == std::string::npos && head.size() < 16384) {
    ssize_t n = ::recv(conn, buf, sizeof buf, 0);
    if (n <= 0) return;
    head.append(buf, static_cast<size_t>(n));
  }
  AdminResponse response;
  auto request = ParseAdminRequest(head);
  if (request.ok()) {
    response = AnswerAdmin(*request);
  } else {
    response.status = 400;
    response.body = request.status().message() + "\n";
  }
  const net::HeaderList headers = {{"Content-Type", response.content_type}};
  std::string out =
      request.ok() && request->method == "HEAD"
          ? net::ResponseHeadBytes(response.status, headers, response.body.size(), false)
          : net::ResponseBytes(response.status, headers, response.body, false);
  size_t sent = 0;
  while (sent < out.size()) {
    ssize_t n = ::send(conn, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

}  // namespace toolgate::core
