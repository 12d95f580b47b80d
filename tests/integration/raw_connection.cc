#include "raw_connection.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

namespace toolgate::testing {
namespace {

using Clock = std::chrono::steady_clock;

// Whether out holds a whole answer: a head, and as many body bytes as its Content-Length says.
bool WholeAnswer(const std::string& out) {
  const size_t end = out.find("\r\n\r\n");
  if (end == std::string::npos) return false;
  const size_t at = out.find("Content-Length: ");
  return at != std::string::npos && at < end &&
         out.size() >= end + 4 + std::stoul(out.substr(at + 16));
}

}  // namespace

RawConnection::RawConnection(const System& system) {
  const std::string& url = system.url();
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1))));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  // Reads wait at most 100 ms at a time, so that each read loop keeps to its deadline.
  timeval tv{0, 100 * 1000};
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

RawConnection::~RawConnection() {
  Close();
}

void RawConnection::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

bool RawConnection::Send(const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

std::string RawConnection::ReadUntilClosed(int deadline_ms, bool* closed) {
  std::string out;
  *closed = false;
  const auto deadline = Clock::now() + std::chrono::milliseconds(deadline_ms);
  while (Clock::now() < deadline) {
    char buf[4096];
    ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) {
      *closed = true;
      break;
    }
    if (n > 0) out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

std::string RawConnection::ReadHead(int deadline_ms) {
  std::string out;
  const auto deadline = Clock::now() + std::chrono::milliseconds(deadline_ms);
  while (Clock::now() < deadline && out.find("\r\n\r\n") == std::string::npos) {
    char buf[4096];
    ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) break;
    if (n > 0) out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

std::string RawConnection::ReadAnswer(int deadline_ms) {
  std::string out;
  const auto deadline = Clock::now() + std::chrono::milliseconds(deadline_ms);
  while (Clock::now() < deadline && !WholeAnswer(out)) {
    char buf[4096];
    ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) break;
    if (n > 0) out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

bool RawConnection::Poll(std::string* answer) {
  char buf[4096];
  for (;;) {
    ssize_t n = recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
      answer->append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return true;
    break;
  }
  return WholeAnswer(*answer);
}

}  // namespace toolgate::testing
